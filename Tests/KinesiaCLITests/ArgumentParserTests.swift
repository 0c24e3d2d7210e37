import KinesiaCLI
import KinesiaMotion
import Testing

/// A command with every kind of argument, parsed directly (no I/O).
struct SampleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(name: "sample", summary: "A sample command.")
    static var arguments: [Argument<SampleCommand>] {
        [
            .positional("input", \.input, help: "The input."),
            .positional("extra", \.extra, help: "An optional second input."),
            .option("camera", \.camera, valueName: "id", help: "Camera id."),
            .option("side", \.side, required: true, help: "Side."),
            .option("count", \.count, help: "A count."),
            .option("ratio", \.ratio, help: "A ratio."),
            .option("topic", \.topics, help: "A topic."),
            .flag("dry-run", \.dryRun, help: "Do nothing."),
        ]
    }
    var input = ""
    var extra: String?
    var camera = "cam0"
    var side: BodySide?
    var count: Int?
    var ratio = 1.0
    var topics: [String] = []
    var dryRun = false

    func validate() throws(CLIError) {
        if let count, count < 0 { throw CLIError.usage("--count must not be negative") }
    }

    func run(context: CommandContext) async throws {}
}

struct ArgumentParserTests {
    @Test func keepsDefaultsForWhatIsNotGiven() throws {
        let command = try SampleCommand.parse(["in.jsonl", "--side", "left"])
        #expect(command.input == "in.jsonl")
        #expect(command.extra == nil)
        #expect(command.camera == "cam0")
        #expect(command.side == .left)
        #expect(command.count == nil)
        #expect(command.ratio == 1)
        #expect(command.topics.isEmpty)
        #expect(!command.dryRun)
    }

    @Test func acceptsSpaceAndEqualsForms() throws {
        let spaced = try SampleCommand.parse(["--camera", "cam1", "x", "--side", "right", "--count", "3"])
        let equals = try SampleCommand.parse(["--camera=cam1", "x", "--side=right", "--count=3"])
        for command in [spaced, equals] {
            #expect(command.camera == "cam1")
            #expect(command.side == .right)
            #expect(command.count == 3)
            #expect(command.input == "x")
        }
        #expect(try SampleCommand.parse(["x", "--side", "left", "--camera="]).camera == "")
        #expect(try SampleCommand.parse(["x", "--side", "left", "--camera=a=b"]).camera == "a=b")
    }

    @Test func repeatedOptionsAppendAndSingleOnesKeepTheLast() throws {
        let command = try SampleCommand.parse([
            "x", "--side", "left", "--topic", "event/", "--topic=pose/", "--camera", "a", "--camera", "b",
        ])
        #expect(command.topics == ["event/", "pose/"])
        #expect(command.camera == "b")
    }

    @Test func flagsTakeNoValue() throws {
        #expect(try SampleCommand.parse(["x", "--dry-run", "--side", "left"]).dryRun)
        #expect(throws: CLIError.usage("--dry-run takes no value")) {
            try SampleCommand.parse(["x", "--dry-run=yes", "--side", "left"])
        }
    }

    @Test func positionalsMayComeAnywhereAndAfterDoubleDash() throws {
        let command = try SampleCommand.parse(["--side", "left", "a", "--", "--weird"])
        #expect(command.input == "a")
        #expect(command.extra == "--weird")
        #expect(try SampleCommand.parse(["-", "--side", "left"]).input == "-")
        #expect(try SampleCommand.parse(["x", "--side", "left", "--ratio", "-0.5"]).ratio == -0.5)
    }

    @Test func unknownOptionsNameTheValidOnes() {
        #expect(
            throws: CLIError.usage(
                "unknown option \"--sid\"; valid options: --camera, --side, --count, --ratio, --topic, --dry-run, --help"
            )
        ) {
            try SampleCommand.parse(["x", "--sid", "left"])
        }
        #expect(throws: CLIError.self) { try SampleCommand.parse(["x", "-s", "left"]) }
    }

    @Test func invalidChoicesNameTheValidValues() {
        #expect(throws: CLIError.usage("invalid value \"up\" for --side; expected one of: left, right")) {
            try SampleCommand.parse(["x", "--side", "up"])
        }
        #expect(throws: CLIError.usage("invalid value \"three\" for --count")) {
            try SampleCommand.parse(["x", "--side", "left", "--count", "three"])
        }
        #expect(throws: CLIError.usage("invalid value \"nan\" for --ratio")) {
            try SampleCommand.parse(["x", "--side", "left", "--ratio", "nan"])
        }
    }

    @Test func missingValuesAndRequiredOptionsAreUsageErrors() {
        #expect(throws: CLIError.usage("missing value for --camera")) {
            try SampleCommand.parse(["x", "--side", "left", "--camera"])
        }
        #expect(throws: CLIError.usage("missing value for --side; expected one of: left, right")) {
            try SampleCommand.parse(["x", "--side", "--dry-run"])
        }
        #expect(throws: CLIError.usage("missing option --side; expected one of: left, right")) {
            try SampleCommand.parse(["x"])
        }
        #expect(throws: CLIError.usage("missing argument <input>")) {
            try SampleCommand.parse(["--side", "left"])
        }
        #expect(throws: CLIError.usage("unexpected argument \"z\"")) {
            try SampleCommand.parse(["x", "y", "z", "--side", "left"])
        }
    }

    @Test(arguments: [
        ["--help"], ["-h"], ["x", "--side", "up", "-h"], ["--count", "1", "--help", "--side"],
    ])
    func helpIsAskedForAnywhereBeforeDoubleDash(_ arguments: [String]) {
        #expect(throws: CLIError.help(SampleCommand.helpText)) { try SampleCommand.parse(arguments) }
    }

    @Test func helpAfterDoubleDashIsAValue() throws {
        #expect(try SampleCommand.parse(["--side", "left", "--", "--help"]).input == "--help")
    }

    @Test func helpListsEveryOptionWithItsHelpAndChoices() {
        let help = SampleCommand.helpText
        #expect(
            SampleCommand.usage
                == "kinesia sample <input> [<extra>] [--camera <id>] --side <side> [--count <count>] [--ratio <ratio>] [--topic <topic> ...] [--dry-run]"
        )
        #expect(help.contains("--camera <id>"))
        #expect(help.contains("Camera id. (default: cam0)"))
        #expect(help.contains("Side. (values: left, right)"))
        #expect(help.contains("A topic. (repeatable)"))
        #expect(help.contains("--dry-run"))
        #expect(help.contains("-h, --help"))
    }

    @Test func validateIsSeparateFromParse() throws {
        let command = try SampleCommand.parse(["x", "--side", "left", "--count", "-1"])
        #expect(command.count == -1)
        #expect(throws: CLIError.usage("--count must not be negative")) { try command.validate() }
    }

    @Test func exitStatusesOfTheFunnel() {
        #expect(CLIError.help("").exitStatus == 0)
        #expect(CLIError.usage("").exitStatus == 64)
        #expect(CLIError.failure("").exitStatus == 1)
    }
}
