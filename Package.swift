// swift-tools-version: 6.0
import PackageDescription

/// Strict settings shared by every Swift target: `any` spelled out, imports internal unless
/// marked, and a module's members visible only where it is imported.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "KinesiaMotion",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "KinesiaMotion", targets: ["KinesiaMotion"]),
        .library(name: "KinesiaMotionVision", targets: ["KinesiaMotionVision"]),
        .library(name: "KinesiaSimulation", targets: ["KinesiaSimulation"]),
        .library(name: "KinesiaWire", targets: ["KinesiaWire"]),
        .library(name: "KinesiaBus", targets: ["KinesiaBus"]),
        .library(name: "KinesiaClient", targets: ["KinesiaClient"]),
        .library(name: "KinesiaAnalytics", targets: ["KinesiaAnalytics"]),
        .library(name: "KinesiaVoice", targets: ["KinesiaVoice"]),
        .library(name: "KinesiaSpeech", targets: ["KinesiaSpeech"]),
        .library(name: "KinesiaHaptic", targets: ["KinesiaHaptic"]),
        .executable(name: "kinesia", targets: ["kinesia"]),
    ],
    targets: [
        // The analysis core: pure Swift, deterministic, no I/O beyond reading recordings.
        .target(name: "KinesiaJSON", swiftSettings: strictSettings),
        .target(name: "KinesiaMotion", dependencies: ["KinesiaJSON"], swiftSettings: strictSettings),
        // iOS only: the camera adapter over AVFoundation and Vision. Empty elsewhere.
        .target(
            name: "KinesiaMotionVision", dependencies: ["KinesiaMotion"],
            swiftSettings: strictSettings),
        // Built-in simulator of every catalog exercise (poses with known reps, holds and faults).
        .target(
            name: "KinesiaSimulation", dependencies: ["KinesiaMotion"],
            swiftSettings: strictSettings),
        // Both sides of one camera's patient as tempo, symmetry and set figures: pure Swift, no I/O.
        .target(
            name: "KinesiaAnalytics", dependencies: ["KinesiaMotion", "KinesiaJSON"],
            swiftSettings: strictSettings),
        // SQLite, as Debian ships it.
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        // The recorder's SQLite database: the connection and statement owners, the versioned
        // schema, exactly-once inserts and the report's queries.
        .target(
            name: "KinesiaStore",
            dependencies: ["CSQLite", "KinesiaMotion", "KinesiaAnalytics", "KinesiaSystem"],
            swiftSettings: strictSettings),
        // The session report: one self-contained HTML page with inline SVG. Pure: values in, text out.
        .target(
            name: "KinesiaReport",
            dependencies: [
                "KinesiaMotion", "KinesiaAnalytics", "KinesiaStore", "KinesiaControl", "KinesiaJSON",
            ],
            swiftSettings: strictSettings),
        // Topics and the versioned wire format: pure Swift, no sockets.
        .target(
            name: "KinesiaWire", dependencies: ["KinesiaMotion", "KinesiaJSON", "KinesiaSystem"],
            swiftSettings: strictSettings),
        // libzmq, as Debian ships it.
        .systemLibrary(
            name: "CZeroMQ", pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]),
        // A safe Swift API over libzmq sockets.
        .target(
            name: "KinesiaBus", dependencies: ["CZeroMQ", "KinesiaSystem"],
            swiftSettings: strictSettings),
        // What an application needs on the bus: its address, publishers, subscribers, health
        // reports, and the typed messages of the bus as an AsyncSequence.
        .target(
            name: "KinesiaClient",
            dependencies: [
                "KinesiaBus", "KinesiaWire", "KinesiaMotion", "KinesiaAnalytics", "KinesiaSystem",
                "KinesiaJSON", "KinesiaControl",
            ],
            swiftSettings: strictSettings),
        // Voice cues: the texts (data files, one per language, compiled in) and the value-type
        // planner that decides what to say and when. No I/O.
        .target(
            name: "KinesiaVoice", dependencies: ["KinesiaMotion", "KinesiaJSON"],
            resources: [
                .embedInCode("Texts/en.json"), .embedInCode("Texts/pt-BR.json"),
                .embedInCode("Texts/es.json"),
            ],
            swiftSettings: strictSettings),
        // libespeak-ng, as Debian ships it.
        .systemLibrary(
            name: "CEspeakNG", pkgConfig: "espeak-ng",
            providers: [.apt(["libespeak-ng-dev"])]),
        // Speech: the libespeak-ng engine as one owned value, and WAV files.
        .target(
            name: "KinesiaSpeech", dependencies: ["CEspeakNG", "KinesiaSystem"],
            swiftSettings: strictSettings),
        // The Linux force-feedback ioctls (EVIOCSFF, EVIOCRMFF, EVIOCGBIT) and input_event
        // writes, as C functions Swift can call (the ioctl numbers are function-like macros).
        .target(name: "CKinesiaEvdev"),
        // posix_openpt and friends for the tests of the serial haptic path (a pseudo-terminal).
        .target(name: "CKinesiaPseudoTerminal"),
        // Haptic patterns: the mapping from events (a data file), the planner, and the drivers
        // (evdev force feedback, a line protocol over a serial port).
        .target(
            name: "KinesiaHaptic",
            dependencies: ["KinesiaMotion", "KinesiaJSON", "KinesiaSystem", "CKinesiaEvdev"],
            resources: [.embedInCode("Mapping/default.json")],
            swiftSettings: strictSettings),
        // POSIX in one place: signals, posix_spawn and reaping, flock, file descriptors, private
        // directories, the line reader, errno. Internal (not a product): the commands, the test
        // support and KinesiaClient (the bus directory's checks) use it.
        .target(name: "KinesiaSystem", dependencies: ["CKinesiaMemory"], swiftSettings: strictSettings),
        // glibc's malloc_trim, which Swift's Glibc module does not export.
        .target(name: "CKinesiaMemory"),
        // Append-only journals of what a process publishes: checksummed records in segment
        // files per stream, fsync policy, retention, torn-tail recovery. Internal: the commands
        // (and the replay) use it.
        .target(
            name: "KinesiaJournal", dependencies: ["KinesiaSystem", "KinesiaWire", "CKinesiaCRC32C"],
            swiftSettings: strictSettings),
        // GNU libmicrohttpd, as Debian ships it: the HTTP server of kinesia web.
        .systemLibrary(
            name: "CMicroHTTPD",
            providers: [.apt(["libmicrohttpd-dev"])]),
        // The web gateway: the HTTP server's owner, the tokens, the model of the site fed by the
        // bus, the API's answers and the Prometheus text, and the service that runs them.
        .target(
            name: "KinesiaWeb",
            dependencies: [
                "CMicroHTTPD", "KinesiaBus", "KinesiaClient", "KinesiaControl", "KinesiaJSON",
                "KinesiaMotion",
                "KinesiaService", "KinesiaSystem", "KinesiaVoice", "KinesiaWire", "KinesiaStore",
                "KinesiaReport",
            ],
            resources: [
                .embedInCode("Dashboard/dashboard.html"), .embedInCode("Dashboard/dashboard.js"),
                .embedInCode("Dashboard/dashboard.css"),
            ],
            swiftSettings: strictSettings),
        // CRC-32C by the processor's instruction (SSE 4.2), which Swift cannot emit; the
        // journal's checksum uses it when the processor has it.
        .target(name: "CKinesiaCRC32C"),
        // A publishing process's journal: its streams' identities across restarts, the writers
        // of its topics fed by the publisher, the health counters, the replay of what it wrote.
        .target(
            name: "KinesiaPublishJournal",
            dependencies: [
                "KinesiaJournal", "KinesiaClient", "KinesiaService", "KinesiaSystem", "KinesiaWire",
                "KinesiaJSON", "KinesiaMotion",
            ],
            swiftSettings: strictSettings),
        .target(
            name: "KinesiaIngest",
            dependencies: [
                "KinesiaMotion", "KinesiaSimulation", "KinesiaSystem", "KinesiaJSON", "KinesiaJournal",
                "KinesiaWire", "KinesiaBus", "KinesiaClient", "KinesiaService", "KinesiaPublishJournal",
            ],
            swiftSettings: strictSettings),
        // `kinesia listen`: the bus's messages printed as they come or exactly once, and the
        // lines it prints.
        .target(
            name: "KinesiaListen",
            dependencies: [
                "KinesiaBus", "KinesiaClient", "KinesiaService", "KinesiaWire", "KinesiaMotion",
                "KinesiaJSON",
                "KinesiaSystem",
            ],
            swiftSettings: strictSettings),
        // The control plane as values: session plans, the control messages and their JSON, the
        // coordinator's decisions (CoordinatorCore, no I/O), exercise files.
        .target(
            name: "KinesiaControl", dependencies: ["KinesiaMotion", "KinesiaJSON", "KinesiaWire"],
            swiftSettings: strictSettings),
        // `kinesia coordinator`: the control socket's loop and the desired state in SQLite.
        .target(
            name: "KinesiaCoordinator",
            dependencies: [
                "KinesiaControl", "KinesiaBus", "KinesiaClient", "KinesiaService", "KinesiaStore",
                "KinesiaSystem", "KinesiaWire",
            ],
            swiftSettings: strictSettings),
        .target(
            name: "KinesiaRecorder",
            dependencies: [
                "KinesiaBus", "KinesiaClient", "KinesiaService", "KinesiaStore", "KinesiaWire",
                "KinesiaMotion", "KinesiaSystem", "KinesiaControl",
            ],
            swiftSettings: strictSettings),
        // `kinesia broker`: the XSUB/XPUB forwarding loop, its lock, ZAP admission and rights.
        .target(
            name: "KinesiaBroker",
            dependencies: ["KinesiaBus", "KinesiaClient", "KinesiaWire", "KinesiaService", "KinesiaSystem"],
            swiftSettings: strictSettings),
        // `kinesia worker`: the sessions' analysis as a value (WorkerCore, the pose feed, the
        // checkpoints) and the service that runs it on the bus.
        .target(
            name: "KinesiaWorker",
            dependencies: [
                "KinesiaMotion", "KinesiaWire", "KinesiaClient", "KinesiaAnalytics", "KinesiaJournal",
                "KinesiaJSON", "KinesiaBus", "KinesiaService", "KinesiaPublishJournal", "KinesiaSystem",
                "KinesiaControl",
            ],
            swiftSettings: strictSettings),
        // What every long-running process shares: its logger and outputs, the stop token, and
        // the thread its service runs on while signals are watched.
        .target(
            name: "KinesiaService", dependencies: ["KinesiaSystem", "KinesiaJSON"],
            swiftSettings: strictSettings),
        // `kinesia voice` and `kinesia haptic`: the loop that follows a camera's cues, and what
        // each does with them (speech through espeak-ng and a player; patterns on a device).
        .target(
            name: "KinesiaCueConsumers",
            dependencies: [
                "KinesiaService", "KinesiaClient", "KinesiaBus", "KinesiaWire", "KinesiaMotion",
                "KinesiaVoice",
                "KinesiaSpeech", "KinesiaHaptic", "KinesiaSystem", "KinesiaJSON", "KinesiaControl",
            ],
            swiftSettings: strictSettings),
        // `kinesia up`: the topology file, the supervisor's state machine and its service, which
        // starts, watches and restarts the processes of a deployment.
        .target(
            name: "KinesiaSupervisor",
            dependencies: ["KinesiaSystem", "KinesiaService", "KinesiaMotion", "KinesiaWire", "KinesiaJSON"],
            swiftSettings: strictSettings),
        // The `kinesia` commands: argument parsing, each command building and running its
        // service, analyze, report, the live view.
        .target(
            name: "KinesiaCLI",
            dependencies: [
                "KinesiaMotion", "KinesiaWire", "KinesiaBus", "KinesiaClient",
                "KinesiaAnalytics", "KinesiaStore", "KinesiaReport", "KinesiaSystem", "KinesiaJournal",
                "KinesiaVoice", "KinesiaSpeech", "KinesiaHaptic", "KinesiaWorker", "KinesiaBroker",
                "KinesiaJSON", "KinesiaSupervisor", "KinesiaService", "KinesiaCueConsumers",
                "KinesiaPublishJournal", "KinesiaIngest", "KinesiaRecorder", "KinesiaListen",
                "KinesiaControl", "KinesiaCoordinator", "KinesiaDemo", "KinesiaWeb",
            ],
            swiftSettings: strictSettings),
        // kinesia demo's long-running part: the site under its supervisor and the clinic's day.
        .target(
            name: "KinesiaDemo",
            dependencies: [
                "KinesiaMotion", "KinesiaClient", "KinesiaControl", "KinesiaIngest", "KinesiaPublishJournal",
                "KinesiaService", "KinesiaStore", "KinesiaSystem", "KinesiaWire", "KinesiaSupervisor",
                "KinesiaVoice", "KinesiaReport", "KinesiaAnalytics", "KinesiaJSON", "KinesiaWeb",
            ],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "kinesia", dependencies: ["KinesiaCLI", "KinesiaSystem"],
            swiftSettings: strictSettings),
        // Micro-benchmarks (run through scripts/bench, release builds).
        .executableTarget(
            name: "kinesia-bench",
            dependencies: [
                "KinesiaMotion", "KinesiaSimulation", "KinesiaWire", "KinesiaBus", "KinesiaBroker",
                "KinesiaClient", "KinesiaJournal", "KinesiaAnalytics", "KinesiaWorker", "KinesiaService",
                "KinesiaVoice",
                "KinesiaSpeech",
            ],
            swiftSettings: strictSettings),

        // Test support: processes started by tests (the same spawn as `kinesia up`), the package
        // root, the built `kinesia`, a seeded generator, the `.process` tag, a pseudo-terminal pair.
        .target(
            name: "KinesiaTestSupport", dependencies: ["KinesiaSystem", "CKinesiaPseudoTerminal"],
            path: "Tests/KinesiaTestSupport",
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaWebTests",
            dependencies: [
                "KinesiaWeb", "KinesiaClient", "KinesiaControl", "KinesiaMotion", "KinesiaWire",
                "KinesiaService", "KinesiaStore", "KinesiaSystem", "KinesiaTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaMotionTests",
            dependencies: ["KinesiaMotion", "KinesiaJSON", "KinesiaSimulation", "KinesiaTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaAnalyticsTests",
            dependencies: ["KinesiaAnalytics", "KinesiaMotion", "KinesiaSimulation", "KinesiaTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaStoreTests",
            dependencies: ["KinesiaStore", "KinesiaAnalytics", "KinesiaMotion", "KinesiaTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaReportTests",
            dependencies: ["KinesiaReport", "KinesiaAnalytics", "KinesiaMotion"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaSimulationTests",
            dependencies: ["KinesiaSimulation", "KinesiaMotion", "KinesiaSystem", "KinesiaTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaWireTests", dependencies: ["KinesiaWire", "KinesiaJSON", "KinesiaTestSupport"],
            // Wire test vectors, read from the source tree (and by the Python client,
            // clients/python), and the Python drivers that run that package for the Python tests.
            exclude: ["Fixtures", "Python"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaBusTests",
            dependencies: ["KinesiaBus", "KinesiaWire", "KinesiaMotion", "KinesiaTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaClientTests",
            dependencies: [
                "KinesiaClient", "KinesiaBus", "KinesiaWire", "KinesiaMotion", "KinesiaAnalytics",
                "KinesiaTestSupport",
            ],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaJournalTests",
            dependencies: ["KinesiaJournal", "KinesiaSystem", "KinesiaWire", "KinesiaTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaSystemTests", dependencies: ["KinesiaSystem", "KinesiaTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaCLITests",
            dependencies: [
                "KinesiaCLI", "KinesiaClient", "KinesiaSystem", "KinesiaAnalytics", "KinesiaStore",
                "KinesiaTestSupport", "KinesiaWorker", "KinesiaBroker", "KinesiaJSON", "KinesiaSupervisor",
                "KinesiaService", "KinesiaCueConsumers", "KinesiaPublishJournal", "KinesiaIngest",
                "KinesiaRecorder", "KinesiaListen", "KinesiaControl", "KinesiaDemo",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaControlTests",
            dependencies: ["KinesiaControl", "KinesiaMotion", "KinesiaWire"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaJSONTests", dependencies: ["KinesiaJSON"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaPublishJournalTests",
            dependencies: [
                "KinesiaPublishJournal", "KinesiaJournal", "KinesiaClient", "KinesiaBus", "KinesiaService",
                "KinesiaSystem", "KinesiaWire", "KinesiaTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaIngestTests",
            dependencies: [
                "KinesiaIngest", "KinesiaMotion", "KinesiaService", "KinesiaSystem", "KinesiaTestSupport",
                "KinesiaBus", "KinesiaClient", "KinesiaWire", "KinesiaPublishJournal", "KinesiaJournal",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaBrokerTests",
            dependencies: [
                "KinesiaBroker", "KinesiaBus", "KinesiaClient", "KinesiaService", "KinesiaWire",
                "KinesiaTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaCoordinatorTests",
            dependencies: [
                "KinesiaCoordinator", "KinesiaClient", "KinesiaService", "KinesiaSystem", "KinesiaStore",
                "KinesiaControl", "KinesiaTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaRecorderTests",
            dependencies: [
                "KinesiaRecorder", "KinesiaClient", "KinesiaMotion", "KinesiaStore", "KinesiaWire",
                "KinesiaAnalytics", "KinesiaService", "KinesiaTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaListenTests",
            dependencies: [
                "KinesiaListen", "KinesiaClient", "KinesiaWire", "KinesiaMotion", "KinesiaService",
                "KinesiaSystem",
                "KinesiaBus", "KinesiaTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaCueConsumersTests",
            dependencies: [
                "KinesiaCueConsumers", "KinesiaSystem", "KinesiaHaptic", "KinesiaService", "KinesiaClient",
                "KinesiaControl", "KinesiaMotion", "KinesiaVoice", "KinesiaWire",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaServiceTests", dependencies: ["KinesiaService", "KinesiaSystem"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaSupervisorTests",
            dependencies: ["KinesiaSupervisor", "KinesiaSystem", "KinesiaTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaWorkerTests",
            dependencies: [
                "KinesiaWorker", "KinesiaMotion", "KinesiaWire", "KinesiaBus", "KinesiaClient",
                "KinesiaSystem", "KinesiaSimulation", "KinesiaAnalytics", "KinesiaControl",
                "KinesiaPublishJournal", "KinesiaService",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaVoiceTests", dependencies: ["KinesiaVoice", "KinesiaMotion", "KinesiaTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaSpeechTests", dependencies: ["KinesiaSpeech", "KinesiaTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "KinesiaHapticTests",
            dependencies: [
                "KinesiaHaptic", "KinesiaMotion", "KinesiaSystem", "CKinesiaEvdev", "KinesiaTestSupport",
            ],
            swiftSettings: strictSettings),
        // Slow: starts real `kinesia` processes over real sockets.
        .testTarget(
            name: "KinesiaIntegrationTests",
            dependencies: [
                "KinesiaMotion", "KinesiaWire", "KinesiaBus", "KinesiaClient", "KinesiaCLI",
                "KinesiaAnalytics", "KinesiaStore", "KinesiaTestSupport", "KinesiaJournal",
                "KinesiaVoice", "KinesiaSpeech", "KinesiaSystem", "KinesiaJSON", "KinesiaIngest",
            ],
            swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
