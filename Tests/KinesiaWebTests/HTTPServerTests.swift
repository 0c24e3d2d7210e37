import Foundation
import KinesiaTestSupport
import KinesiaWeb
import Synchronization
import Testing

/// The server on a real socket, asked by curl.
@Suite(.serialized)
struct HTTPServerTests {
    /// curl's status line, headers and body for `arguments` (a URL among them).
    static func curl(_ arguments: [String]) throws -> String {
        try TestProcess.run(
            "/usr/bin/curl", ["-s", "-S", "-i", "--max-time", "20"] + arguments, environment: [:]
        )
        .output
    }

    @Test func answersEachRequestWithTheHandlersResponse() throws {
        let server = try HTTPServer(host: "127.0.0.1", port: 0) { request in
            .json(
                "{\"path\":\"\(request.path)\",\"q\":\"\(request.query["q"] ?? "")\",\"a\":\"\(request.headers["x-a"] ?? "")\"}"
            )
        }
        defer { server.close() }
        #expect(server.port > 0)
        let output = try Self.curl(["-H", "X-A: 1", "http://127.0.0.1:\(server.port)/some/path?q=v%20w"])
        #expect(output.hasPrefix("HTTP/1.1 200 OK"), "\(output)")
        #expect(output.contains("Content-Type: application/json"))
        #expect(output.hasSuffix("{\"path\":\"/some/path\",\"q\":\"v w\",\"a\":\"1\"}"), "\(output)")
    }

    @Test func headersBeyondTheRequestMemoryAreRefusedBeforeTheHandler() throws {
        let calls = Mutex(0)
        var limits = HTTPServer.Limits()
        limits.requestMemory = 8 << 10
        let server = try HTTPServer(host: "127.0.0.1", port: 0, limits: limits) { _ in
            calls.withLock { $0 += 1 }
            return .json("{}")
        }
        defer { server.close() }
        let output = try Self.curl([
            "-H", "X-Big: " + String(repeating: "x", count: 20_000), "http://127.0.0.1:\(server.port)/",
        ])
        #expect(output.hasPrefix("HTTP/1.1 431"), "\(output.prefix(200))")
        #expect(calls.withLock { $0 } == 0)
        // The server goes on.
        #expect(try Self.curl(["http://127.0.0.1:\(server.port)/"]).hasPrefix("HTTP/1.1 200"))
    }

    @Test func aBodyBeyondTheLimitIs413() throws {
        var limits = HTTPServer.Limits()
        limits.maximumBody = 1000
        let server = try HTTPServer(host: "127.0.0.1", port: 0, limits: limits) { _ in .json("{}") }
        defer { server.close() }
        let scratch = try ScratchDirectory("web-body")
        try Data(repeating: 0x61, count: 5000).write(to: URL(fileURLWithPath: scratch.path("body")))
        let output = try Self.curl([
            "--data-binary", "@" + scratch.path("body"), "http://127.0.0.1:\(server.port)/",
        ])
        #expect(output.hasPrefix("HTTP/1.1 413"), "\(output.prefix(200))")
        let small = try Self.curl(["--data-binary", "abc", "http://127.0.0.1:\(server.port)/"])
        #expect(small.hasPrefix("HTTP/1.1 200"), "\(small.prefix(200))")
    }

    @Test func anAddressThatIsNotIPv4OrInUseIsAClearError() throws {
        #expect(throws: HTTPServerError.invalidAddress("localhost")) {
            try HTTPServer(host: "localhost", port: 0) { _ in .json("{}") }
        }
        let first = try HTTPServer(host: "127.0.0.1", port: 0) { _ in .json("{}") }
        defer { first.close() }
        #expect(throws: HTTPServerError.cannotListen(host: "127.0.0.1", port: first.port)) {
            try HTTPServer(host: "127.0.0.1", port: first.port) { _ in .json("{}") }
        }
    }

    @Test func aClosedServerRefusesConnections() throws {
        let server = try HTTPServer(host: "127.0.0.1", port: 0) { _ in .json("{}") }
        let port = server.port
        server.close()
        server.close()
        let output = try TestProcess.run(
            "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/"],
            environment: [:]
        ).output
        #expect(output == "000")
    }
}
