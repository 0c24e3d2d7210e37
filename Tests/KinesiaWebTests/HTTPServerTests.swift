import Foundation
import KinesiaTestSupport
import KinesiaWeb
import Synchronization
import Testing

/// Polls `condition` for up to 5 s (the server counts a closed connection on its own thread).
func waitFor(_ condition: () -> Bool) -> Bool {
    for _ in 0..<500 {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

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

    @Test func answersEachRequestWithTheHandlersResponse() async throws {
        try await offCooperativePool {
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
    }

    @Test func headersBeyondTheRequestMemoryAreRefusedBeforeTheHandler() async throws {
        try await offCooperativePool {
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
            // Counted: a connection the handler never answered.
            #expect(waitFor { server.counters["connectionsUnanswered"] == 1 }, "\(server.counters)")
            // The server goes on.
            #expect(try Self.curl(["http://127.0.0.1:\(server.port)/"]).hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func aBodyBeyondTheLimitIs413() async throws {
        try await offCooperativePool {
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
            #expect(server.counters["bodiesTooLarge"] == 1)
            let small = try Self.curl(["--data-binary", "abc", "http://127.0.0.1:\(server.port)/"])
            #expect(small.hasPrefix("HTTP/1.1 200"), "\(small.prefix(200))")
        }
    }

    @Test func aRequestThatIsNotHTTPIsRefusedAndCountedAndTheServerGoesOn() async throws {
        try await offCooperativePool {
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { _ in .json("{}") }
            defer { server.close() }
            let script = """
                import socket, sys
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
                s.sendall(b"GET / HTTP/1.1\\r\\nA header without its colon\\r\\n\\r\\n")
                print(s.recv(100).split(b"\\r\\n")[0].decode())
                """
            let (status, output) = try TestProcess.run(
                "/usr/bin/python3", ["-c", script, "\(server.port)"], environment: [:])
            #expect(status == 0 && output.hasPrefix("HTTP/1.1 400"), "\(output)")
            #expect(waitFor { server.counters["connectionsUnanswered"] == 1 }, "\(server.counters)")
            #expect(try Self.curl(["http://127.0.0.1:\(server.port)/"]).hasPrefix("HTTP/1.1 200"))
            #expect(server.counters["connectionsOpened"] == 2)
        }
    }

    @Test func anAddressThatIsNotIPv4OrInUseIsAClearError() async throws {
        try await offCooperativePool {
            #expect(throws: HTTPServerError.invalidAddress("localhost")) {
                try HTTPServer(host: "localhost", port: 0) { _ in .json("{}") }
            }
            let first = try HTTPServer(host: "127.0.0.1", port: 0) { _ in .json("{}") }
            defer { first.close() }
            #expect(throws: HTTPServerError.cannotListen(host: "127.0.0.1", port: first.port)) {
                try HTTPServer(host: "127.0.0.1", port: first.port) { _ in .json("{}") }
            }
        }
    }

    @Test func aClosedServerRefusesConnections() async throws {
        try await offCooperativePool {
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { _ in .json("{}") }
            let port = server.port
            server.close()
            server.close()
            let output = try TestProcess.run(
                "/usr/bin/curl",
                ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/"],
                environment: [:]
            ).output
            #expect(output == "000")
        }
    }
}

/// The server with a certificate: HTTPS only, as curl checks it against that certificate.
@Suite(.serialized)
struct HTTPServerTLSTests {
    /// A self-signed certificate for 127.0.0.1 and its key, made by openssl in `scratch`.
    static func certificate(in scratch: ScratchDirectory) throws -> HTTPServer.TLS {
        let (status, output) = try TestProcess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-days", "1",
                "-subj", "/CN=kinesia-test", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                scratch.path("key.pem"),
                "-out", scratch.path("cert.pem"),
            ], environment: [:])
        #expect(status == 0, "\(output)")
        return HTTPServer.TLS(
            certificate: try String(contentsOfFile: scratch.path("cert.pem"), encoding: .utf8),
            key: try String(contentsOfFile: scratch.path("key.pem"), encoding: .utf8))
    }

    @Test func aServerWithACertificateSpeaksHTTPSOnly() async throws {
        try await offCooperativePool {
            let scratch = try ScratchDirectory("web-tls")
            let tls = try Self.certificate(in: scratch)
            let server = try HTTPServer(host: "127.0.0.1", port: 0, tls: tls) { request in
                .json("{\"secure\":\(request.isSecure)}")
            }
            defer { server.close() }
            func curl(_ arguments: [String]) throws -> String {
                try TestProcess.run("/usr/bin/curl", arguments, environment: [:]).output
            }
            let secure = try curl([
                "-s", "-S", "-i", "--max-time", "20", "--cacert", scratch.path("cert.pem"),
                "https://127.0.0.1:\(server.port)/",
            ])
            #expect(secure.hasPrefix("HTTP/1.1 200"), "\(secure)")
            #expect(secure.hasSuffix("{\"secure\":true}"))
            // Plain HTTP gets no answer; a client that does not trust the certificate refuses it.
            let status = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10"]
            let plain = try curl(status + ["http://127.0.0.1:\(server.port)/"])
            #expect(plain == "000", "\(plain)")
            let untrusted = try curl(status + ["https://127.0.0.1:\(server.port)/"])
            #expect(untrusted == "000", "\(untrusted)")
        }
    }

    @Test func aKeyThatIsNotTheCertificatesIsRefusedAtStart() async throws {
        try await offCooperativePool {
            let scratch = try ScratchDirectory("web-tls")
            let tls = try Self.certificate(in: scratch)
            #expect(throws: HTTPServerError.self) {
                try HTTPServer(
                    host: "127.0.0.1", port: 0,
                    tls: HTTPServer.TLS(certificate: tls.certificate, key: "not a key")
                ) { _ in
                    .json("{}")
                }
            }
        }
    }
}
