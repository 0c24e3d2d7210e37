import Foundation
import Glibc
import KinesiaClient
import Testing

struct BusAddressTests {
    @Test func aDirectoryGivesTheTwoSocketFilesOfTheBroker() throws {
        let bus = try BusAddress(parsing: "/run/kinesia/")
        #expect(bus.directory == "/run/kinesia")
        #expect(bus.publisherEndpoint == "ipc:///run/kinesia/pub.sock")
        #expect(bus.subscriberEndpoint == "ipc:///run/kinesia/sub.sock")
        #expect(bus.description == "/run/kinesia")
    }

    @Test func aRelativeDirectoryIsTakenFromTheWorkingDirectory() throws {
        let bus = try BusAddress(parsing: "bus")
        #expect(bus.directory == FileManager.default.currentDirectoryPath + "/bus")
    }

    @Test func tcpPutsSubscribersOnTheNextPort() throws {
        let bus = try BusAddress(parsing: "tcp://10.0.0.5:5555")
        #expect(bus.kind == .tcp(host: "10.0.0.5", port: 5555))
        #expect(bus.publisherEndpoint == "tcp://10.0.0.5:5555")
        #expect(bus.subscriberEndpoint == "tcp://10.0.0.5:5556")
        #expect(bus.directory == nil)
        #expect(try BusAddress(parsing: "tcp://[::1]:7000").subscriberEndpoint == "tcp://[::1]:7001")
    }

    @Test func aTCPBusHasItsBrokersReplayPortThreePortsOnAndADirectoryNone() throws {
        #expect(try BusAddress(parsing: "tcp://10.0.0.5:5555").replayEndpoint == "tcp://10.0.0.5:5558")
        #expect(try BusAddress(parsing: "tcp://[::1]:7000").replayEndpoint == "tcp://[::1]:7003")
        #expect(try BusAddress(parsing: "tcp://host:65532").replayEndpoint == "tcp://host:65535")
        #expect(try BusAddress(parsing: "tcp://host:65533").replayEndpoint == nil)
        #expect(try BusAddress(parsing: "/run/kinesia").replayEndpoint == nil)
    }

    @Test(arguments: ["tcp://host", "tcp://:5555", "tcp://host:port", "tcp://host:65535", "tcp://host:0", ""])
    func malformedAddressesAreRefused(_ text: String) {
        #expect(throws: BusAddressError.self) { try BusAddress(parsing: text) }
    }

    @Test func otherTransportsAreRefused() {
        #expect(throws: BusAddressError.unsupportedTransport("udp://host:1")) {
            try BusAddress(parsing: "udp://host:1")
        }
    }

    @Test func aDirectoryTooLongForIPCSocketsSaysSo() {
        let long = "/tmp/" + String(repeating: "d", count: 100)
        do {
            _ = try BusAddress(parsing: long)
            Issue.record("accepted a \(long.utf8.count)-byte directory")
        } catch {
            #expect(error.description.contains("107"))
            #expect(error.description.contains("too long"))
        }
    }

    @Test func theOptionWinsOverKinesiaBusWhichWinsOverTheRuntimeDirectory() throws {
        let environment = ["KINESIA_BUS": "/srv/bus", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(try BusAddress.resolve("/opt/bus", environment: environment).directory == "/opt/bus")
        #expect(try BusAddress.resolve(nil, environment: environment).directory == "/srv/bus")
        #expect(
            try BusAddress.resolve(nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]).directory
                == "/run/user/1000/kinesia")
        #expect(try BusAddress.resolve(nil, environment: [:]).directory == "/tmp/kinesia-\(getuid())")
    }

    @Test func preparingMakesAPrivateDirectory() throws {
        let parent = NSTemporaryDirectory() + "kinesia-bus-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let bus = try BusAddress(parsing: parent + "/nested/bus")
        try bus.prepare()
        let attributes = try FileManager.default.attributesOfItem(atPath: parent + "/nested/bus")
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
    }

    /// A directory made by `mkdtemp` (0700), removed by the caller.
    static func temporaryDirectory() -> String {
        var template = Array("/tmp/kinesia-address.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        #expect(made)
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func preparingAnExistingPrivateDirectoryUsesItAsItIs() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try BusAddress(parsing: directory).prepare()
        let attributes = try FileManager.default.attributesOfItem(atPath: directory)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
    }

    @Test func preparingRefusesAnExistingLooseDirectoryAndNamesWhatToSet() throws {
        let parent = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let directory = parent + "/shared"
        #expect(mkdir(directory, 0o700) == 0)
        #expect(chmod(directory, 0o1777) == 0)
        let error = #expect(throws: BusAddressError.self) { try BusAddress(parsing: directory).prepare() }
        let text = error?.description ?? ""
        #expect(text.contains("cannot use bus directory \(directory)"), "\(text)")
        #expect(text.contains("mode 01777"), "\(text)")
        #expect(text.contains("XDG_RUNTIME_DIR") && text.contains("--bus"), "\(text)")
        let attributes = try FileManager.default.attributesOfItem(atPath: directory)
        #expect((attributes[.posixPermissions] as? Int) == 0o1777, "the mode was changed")
    }

    @Test func preparingRefusesALinkAsTheDirectoryOrAsABrokerFile() throws {
        let parent = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        #expect(symlink(parent, parent + "/link") == 0)
        let link = #expect(throws: BusAddressError.self) {
            try BusAddress(parsing: parent + "/link").prepare()
        }
        #expect(link?.description.contains("symbolic link") == true)
        #expect(mkdir(parent + "/bus", 0o700) == 0)
        #expect(symlink("/etc/hostname", parent + "/bus/pub.sock") == 0)
        let file = #expect(throws: BusAddressError.self) {
            try BusAddress(parsing: parent + "/bus").prepare()
        }
        #expect(file?.description.contains("\(parent)/bus/pub.sock is a symbolic link") == true)
    }
}
