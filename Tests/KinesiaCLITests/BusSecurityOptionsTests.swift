import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaWire
import Testing

@testable import KinesiaBroker
@testable import KinesiaCLI

struct BusSecurityOptionsTests {
    static let tcp = try! BusAddress(parsing: "tcp://10.0.0.5:5555")

    @Test func aTCPClientWithoutKeysIsRefusedUnlessInsecure() throws {
        #expect(throws: CLIError.self) {
            try BusSecurityOptions().clientCredentials(bus: Self.tcp, role: .worker)
        }
        do {
            _ = try BusSecurityOptions().clientCredentials(bus: Self.tcp, role: .ingest)
        } catch {
            #expect(error.description.contains("--key NAME.key (an ingest key) and --server-key broker.pub"))
            #expect(error.description.contains("--insecure"))
        }
        var insecure = BusSecurityOptions()
        insecure.insecure = true
        #expect(try insecure.clientCredentials(bus: Self.tcp, role: .worker) == nil)
        // IPC needs no key.
        #expect(
            try BusSecurityOptions().clientCredentials(bus: try BusAddress(parsing: "/tmp/b"), role: .worker)
                == nil)
    }

    @Test func insecureWithKeysIsAUsageError() {
        var options = BusSecurityOptions()
        options.insecure = true
        options.key = "w.key"
        #expect(
            throws: CLIError.usage("--insecure contradicts --key and --server-key: give keys or --insecure")
        ) {
            try options.clientCredentials(bus: Self.tcp, role: .worker)
        }
    }

    @Test func theEnvironmentGivesWhatTheCommandLineDidNot() {
        var options = BusSecurityOptions()
        options.key = "given.key"
        let resolved = options.resolved(environment: [
            "KINESIA_KEY": "env.key", "KINESIA_SERVER_KEY": "broker.pub", "KINESIA_INSECURE": "1",
        ])
        #expect(resolved.key == "given.key" && resolved.serverKey == "broker.pub" && resolved.insecure)
        #expect(!BusSecurityOptions().resolved(environment: ["KINESIA_INSECURE": "0"]).insecure)
    }

    @Test func aBrokerOnTCPNeedsItsKeyOrInsecure() throws {
        #expect(throws: CLIError.self) {
            try BrokerSecurity.resolve(
                bus: Self.tcp, options: BusSecurityOptions(), allowed: nil, environment: [:])
        }
        var insecure = BusSecurityOptions()
        insecure.insecure = true
        #expect(
            try BrokerSecurity.resolve(bus: Self.tcp, options: insecure, allowed: nil, environment: [:])
                == .insecure)
        #expect(
            try BrokerSecurity.resolve(
                bus: try BusAddress(parsing: "/tmp/b"), options: BusSecurityOptions(), allowed: nil,
                environment: [:])
                == .localUser)
    }

    @Test func everyTCPCommandTakesTheSecurityFlags() throws {
        let worker = try WorkerCommand.parse([
            "--session", "l=squat:left", "--key", "w.key", "--server-key", "b.pub", "--insecure",
        ])
        #expect(worker.security == BusSecurityOptions(key: "w.key", serverKey: "b.pub", insecure: true))
        #expect(try ListenCommand.parse(["--key", "c.key"]).security.key == "c.key")
        #expect(try StatusCommand.parse(["--server-key", "b.pub"]).security.serverKey == "b.pub")
        #expect(try IngestCommand.parse(["--camera", "c", "--source", "-", "--insecure"]).security.insecure)
        let broker = try BrokerCommand.parse(["--key", "b.key", "--allowed", "/etc/kinesia/allowed"])
        #expect(broker.security.key == "b.key" && broker.allowed == "/etc/kinesia/allowed")
    }

    @Test func keysCommandsCheckTheirArguments() throws {
        #expect(
            throws: CLIError.usage(
                "keys new needs --role (one of: ingest, worker, consumer, broker, control)")
        ) {
            try KeysCommand.parse(["new", "cam0"]).validate()
        }
        #expect(throws: CLIError.self) { try KeysCommand.parse(["new", "cam0", "--role", "admin"]) }
        #expect(throws: CLIError.usage("keys allow needs a FILE.pub")) {
            try KeysCommand.parse(["allow"]).validate()
        }
        let new = try KeysCommand.parse(["new", "cam0", "--role", "ingest", "--dir", "/k"])
        #expect(new.action == .new && new.subject == "cam0" && new.role == .ingest && new.directory == "/k")
        #expect(KeysCommand.directory(nil, environment: ["XDG_CONFIG_HOME": "/c"]) == "/c/kinesia/keys")
        #expect(KeysCommand.directory(nil, environment: ["KINESIA_KEYS": "/k2", "HOME": "/h"]) == "/k2")
        #expect(KeysCommand.directory(nil, environment: ["HOME": "/h"]) == "/h/.config/kinesia/keys")
    }
}
