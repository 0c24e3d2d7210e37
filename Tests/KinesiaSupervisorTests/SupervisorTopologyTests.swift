import Foundation
import KinesiaSystem
import KinesiaTestSupport
import Testing

@testable import KinesiaSupervisor

/// The topology file format of `kinesia up`: decoding, defaults and every validation error.
struct SupervisorTopologyTests {
    static func decode(_ json: String) throws(TopologyError) -> Topology {
        try Topology.decode(Data(json.utf8), file: "t.json")
    }

    @Test func decodesTheOneBoxExampleOfTheRepository() throws {
        let url = PackagePaths.url("deploy/local.json")
        let topology = try Topology.load(contentsOf: url)
        #expect(topology.bus == nil)
        #expect(
            topology.processes.map(\.name) == [
                "broker", "coordinator", "worker", "start-left", "start-right", "start-analytics", "listen",
                "record", "voice", "haptic", "ingest",
            ])
        #expect(
            topology.processes.map(\.role) == [
                .broker, .consumer, .worker, .consumer, .consumer, .consumer, .consumer, .consumer, .consumer,
                .consumer, .ingest,
            ])
        // A pool worker takes the sessions the control plane gives it: the three of the camera,
        // started once (each request id is done once, across restarts of the site too).
        #expect(topology.processes[2].command == ["worker", "--pool", "local"])
        #expect(
            topology.processes[3].command == [
                "session", "start", "cam0/left", "--exercise", "shoulderAbduction", "--side", "left",
                "--pool",
                "local", "--request-id", "local-cam0-left", "--timeout", "10",
            ])
        #expect(topology.processes[3...5].allSatisfy { $0.restart == .onFailure && $0.after == ["worker"] })
        // The consumers of the design: the record, the voice (files when there is no sound
        // output) and the haptic wearable on a serial port.
        #expect(topology.processes[7].command.starts(with: ["record", "--db"]))
        #expect(topology.processes[8].command.contains("--fallback-output"))
        #expect(topology.processes[9].command.starts(with: ["haptic", "--camera", "cam0", "--serial"]))
        #expect(topology.shutdown.deadline == .seconds(5))
        #expect(
            topology.restart
                == RestartLimits(
                    initialDelay: .milliseconds(200), maxDelay: .seconds(5), maxRestarts: 5,
                    window: .seconds(60)))
        // The ingest starts last, after every worker and consumer.
        #expect(topology.startDependencies()[10] == Array(0..<10))
    }

    @Test func fillsDefaultsAndInfersRolesFromTheSubcommand() throws {
        let topology = try Self.decode(
            """
            {"processes": [
              {"name": "b", "command": ["broker"]},
              {"name": "w", "command": ["worker", "--camera", "cam0"]},
              {"name": "i", "command": ["ingest"]},
              {"name": "l", "command": ["listen", "event/"]},
              {"name": "s", "command": ["-c", "exit 0"], "executable": "/bin/sh"}
            ]}
            """)
        #expect(topology.processes.map(\.role) == [.broker, .worker, .ingest, .consumer, .consumer])
        #expect(topology.processes.allSatisfy { $0.restart == .onFailure })
        #expect(topology.shutdown == ShutdownPolicy())
        #expect(topology.restart == RestartLimits())
        #expect(topology.startup.settle == .milliseconds(200))
    }

    struct BadFile: Sendable, CustomTestStringConvertible {
        var json: String
        var field: String?
        var message: String
        var testDescription: String { field ?? message }
    }

    static let process = #"{"name": "b", "command": ["broker"]}"#

    static let badFiles: [BadFile] = [
        BadFile(json: "{", field: nil, message: "not valid JSON: expected a string key, found end of input"),
        BadFile(
            json: "{\n  \"processes\": [\n    {\"name\" \"b\"}]}", field: nil,
            message: "not valid JSON: expected ':', found '\"'"),
        BadFile(
            json: #"{"processes": [\#(process)], "processes": []}"#, field: nil,
            message: #"not valid JSON: duplicate key "processes""#),
        BadFile(
            json: #"{"processes": [{"name": "b", "command": ["broker"], "restart": null}]}"#,
            field: "processes[0].restart", message: "expected a string, got null"),
        BadFile(
            json: #"{"processes": [{"name": "b", "command": ["broker", 7]}]}"#,
            field: "processes[0].command[1]", message: "expected a string, got 7"),
        BadFile(json: "{}", field: "processes", message: "missing (required)"),
        BadFile(json: #"{"processes": []}"#, field: "processes", message: "no process to run"),
        BadFile(
            json: #"{"processes": [{"name": "b", "command": ["broker"], "restart": "sometimes"}]}"#,
            field: "processes[0].restart",
            message: #"expected one of always, on-failure, never, got "sometimes""#),
        BadFile(
            json: #"{"processes": [{"name": "b", "command": ["broker"], "role": "boss"}]}"#,
            field: "processes[0].role",
            message: #"expected one of broker, ingest, worker, consumer, got "boss""#),
        BadFile(
            json: #"{"processes": [\#(process)], "restrat": {}}"#, field: "restrat",
            message: "unknown key (expected one of bus, processes, shutdown, restart, startup)"),
        BadFile(
            json: #"{"processes": [{"name": "b", "comand": ["broker"]}]}"#, field: "processes[0].comand",
            message:
                "unknown key (expected one of name, command, executable, restart, role, after, environment)"),
        BadFile(
            json: #"{"processes": [{"name": "b", "command": "broker"}]}"#, field: "processes[0].command",
            message: "expected an array"),
        BadFile(
            json: #"{"processes": [{"name": "b"}]}"#, field: "processes[0].command",
            message: "missing (required)"),
        BadFile(
            json: #"{"processes": [{"name": "b", "command": []}]}"#, field: "processes[0].command",
            message: #"needs a kinesia subcommand, e.g. ["broker"]"#),
        BadFile(
            json: #"{"processes": [{"name": "a b", "command": ["broker"]}]}"#, field: "processes[0].name",
            message:
                #"invalid process name "a b": use 1 to 64 letters, digits, '.', '_' or '-', not only dots"#),
        BadFile(
            json: #"{"processes": [\#(process), \#(process)]}"#, field: "processes[1].name",
            message: #""b" is already the name of processes[0]"#),
        BadFile(
            json: #"{"processes": [\#(process), {"name": "w", "command": ["worker"], "after": ["nope"]}]}"#,
            field: "processes[1].after[0]", message: #"no process is named "nope""#),
        BadFile(
            json: #"{"processes": [{"name": "w", "command": ["worker"], "after": ["w"]}]}"#,
            field: "processes[0].after[0]", message: "a process cannot come after itself"),
        BadFile(
            json:
                #"{"processes": [{"name": "w", "command": ["worker"], "after": ["i"]}, {"name": "i", "command": ["ingest"]}]}"#,
            field: "processes[0].after",
            message: "the start order has a cycle: w after i after w "
                + "(brokers always start first, ingests after workers and consumers)"),
        BadFile(
            json: #"{"processes": [\#(process)], "shutdown": {"deadlineSeconds": 0}}"#,
            field: "shutdown.deadlineSeconds",
            message: "expected a number of seconds, more than 0 and at most 604800, got 0.0"),
        BadFile(
            json: #"{"processes": [\#(process)], "restart": {"initialDelaySeconds": -1}}"#,
            field: "restart.initialDelaySeconds",
            message: "expected a number of seconds, 0 or more and at most 604800, got -1.0"),
        BadFile(
            json: #"{"processes": [\#(process)], "restart": {"initialDelaySeconds": 1e300}}"#,
            field: "restart.initialDelaySeconds",
            message: "expected a number of seconds, 0 or more and at most 604800, got 1e+300"),
        BadFile(
            json: #"{"processes": [\#(process)], "restart": {"maxRestarts": -1}}"#,
            field: "restart.maxRestarts", message: "expected a count from 0 to 10000, got -1"),
        BadFile(
            json:
                #"{"processes": [\#(process)], "restart": {"initialDelaySeconds": 2, "maxDelaySeconds": 1}}"#,
            field: "restart.maxDelaySeconds",
            message: "less than initialDelaySeconds (2.0 seconds > 1.0 seconds)"),
        BadFile(
            json: #"{"bus": "udp://a:1", "processes": [\#(process)]}"#, field: "bus",
            message: #""udp://a:1" is neither a directory nor tcp://HOST:PORT"#),
        BadFile(
            json: #"{"bus": "tcp://a:65535", "processes": [\#(process)]}"#, field: "bus",
            message: #""tcp://a:65535" is not tcp://HOST:PORT with PORT from 1 to 65534 (PORT+1 is used too)"#
        ),
        BadFile(
            json: #"{"processes": [{"name": "b", "command": ["broker"], "environment": {"A=B": "1"}}]}"#,
            field: "processes[0].environment", message: #"bad variable name "A=B""#),
    ]

    @Test(arguments: badFiles)
    func rejectsABadFileNamingTheFileAndTheField(_ bad: BadFile) {
        #expect {
            try Self.decode(bad.json)
        } throws: { error in
            guard let error = error as? TopologyError else { return false }
            #expect(error.file == "t.json")
            #expect(error.field == bad.field)
            #expect(error.message.hasPrefix(bad.message), "\(error)")
            return true
        }
    }

    @Test func printsTheErrorAsFileFieldMessage() {
        let error = TopologyError(file: "deploy/x.json", field: "processes[2].restart", message: "bad")
        #expect(error.description == "deploy/x.json: processes[2].restart: bad")
        let located = TopologyError(
            file: "deploy/x.json", field: "processes[2].restart", message: "bad", line: 9, column: 47)
        #expect(located.description == "deploy/x.json:9:47: processes[2].restart: bad")
    }

    @Test func namesTheLineAndColumnOfASyntaxErrorAndOfABadField() {
        func error(_ json: String) -> TopologyError? {
            do {
                _ = try Self.decode(json)
                return nil
            } catch {
                return error
            }
        }
        let syntax = error("{\n  \"processes\": [\n    {\"name\" \"b\"}]}")
        #expect(syntax?.line == 3 && syntax?.column == 13, "\(String(describing: syntax))")
        let file = """
            {"processes": [
              {"name": "b", "command": ["broker"]},
              {"name": "w", "command": ["worker"], "restart": "sometimes"}
            ]}
            """
        let restart = error(file)
        #expect(restart?.field == "processes[1].restart")
        #expect(restart?.line == 3 && restart?.column == 51, "\(String(describing: restart))")
        #expect(
            restart?.description
                == #"t.json:3:51: processes[1].restart: expected one of always, on-failure, never, got "sometimes""#
        )
        // A validation error points at its field too; a missing key at the object that lacks it.
        let twice = error(
            """
            {"processes": [
              {"name": "b", "command": ["broker"]},
              {"name": "b", "command": ["worker"]}
            ]}
            """)
        #expect(twice?.field == "processes[1].name" && twice?.line == 3 && twice?.column == 12)
        let missing = error("{\"processes\": [\n  {\"name\": \"b\"}]}")
        #expect(missing?.field == "processes[0].command" && missing?.line == 2 && missing?.column == 3)
    }

    @Test func namesTheFileWhenItCannotBeRead() {
        #expect {
            try Topology.load(contentsOf: URL(fileURLWithPath: "/nonexistent/up.json"))
        } throws: { error in
            let error = error as? TopologyError
            return error?.file == "/nonexistent/up.json"
                && error?.message == "cannot read the file (No such file or directory)"
        }
    }

    @Test func resolvesARelativeBusDirectoryAgainstTheFilesDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-topology-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("up.json")
        try Data(#"{"bus": "run/bus", "processes": [\#(Self.process)]}"#.utf8).write(to: file)
        #expect(try Topology.load(contentsOf: file).bus == directory.appendingPathComponent("run/bus").path)
        try Data(#"{"bus": "tcp://box-a:5555", "processes": [\#(Self.process)]}"#.utf8).write(to: file)
        #expect(try Topology.load(contentsOf: file).bus == "tcp://box-a:5555")
    }

    @Test func appendsTheBusToKinesiaCommandsThatLackOneAndExportsItToEveryProcess() throws {
        let topology = try Self.decode(
            """
            {"bus": "/run/kinesia", "processes": [
              {"name": "b", "command": ["broker"]},
              {"name": "w", "command": ["worker", "--bus", "/elsewhere"]},
              {"name": "s", "command": ["-c", "echo $KINESIA_BUS"], "executable": "/bin/sh",
               "environment": {"EXTRA": "1"}}
            ]}
            """)
        let launches = topology.processes.map {
            Supervisor.launch(
                for: $0, in: topology, kinesiaExecutable: "/usr/local/bin/kinesia",
                environment: ["HOME": "/root"],
                supervisorPID: 42)
        }
        #expect(launches[0].executable == "/usr/local/bin/kinesia")
        #expect(launches[0].arguments == ["/usr/local/bin/kinesia", "broker", "--bus", "/run/kinesia"])
        #expect(launches[1].arguments == ["/usr/local/bin/kinesia", "worker", "--bus", "/elsewhere"])
        #expect(launches[2].arguments == ["/bin/sh", "-c", "echo $KINESIA_BUS"])
        #expect(
            launches[2].environment == [
                "EXTRA=1", "HOME=/root", "KINESIA_BUS=/run/kinesia", "KINESIA_PROCESS_NAME=s",
            ])
        #expect(launches[0].environment.contains("KINESIA_SUPERVISOR_PID=42"))
    }
}
