import CowatchClient
import Foundation
import Testing

@Suite("Subprotocols and shutdown")
struct SubprotocolAndShutdownTests {
    @Test("cowatch.v1.json frames are JSON objects; cowatch.v1.text frames are lines for people")
    func bothEncodings() throws {
        let server = try TestServer()
        defer { server.stop() }
        let json = try server.join(name: "alice", encoding: .json)
        let text = try server.join(name: "bob", encoding: .text)
        json.send("/watch https://example.org/a.mp4 Episode 1")
        #expect(json.state("paused") != nil)
        #expect(text.next { $0 == "= paused \"Episode 1\" at 0:00:00, rate 1" } != nil)
        #expect(text.next { $0 == "* alice shared \"Episode 1\"" } != nil)
        #expect(json.allFrames.allSatisfy { JSONObject($0)?.string("type") != nil })
    }

    @Test("a client that offers no subprotocol gets text")
    func noSubprotocol() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        let head = try socket.upgrade(path: "/rooms/lobby?name=plain")
        #expect(head.hasPrefix("HTTP/1.1 101"))
        let frames = String(decoding: socket.read(until: { String(decoding: $0, as: UTF8.self).contains("* welcome to lobby") }), as: UTF8.self)
        #expect(frames.contains("* welcome to lobby, plain"))
    }

    @Test("stopping the server closes every member with 1001 and finishes promptly")
    func shutdown() throws {
        let server = try TestServer()
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob", encoding: .text)
        let started = Date()
        server.gateway.stop()
        #expect(alice.waitClosed()?.code == 1001)
        #expect(bob.waitClosed()?.code == 1001)
        server.gateway.waitUntilStopped()
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(throws: (any Error).self) { try server.get("/healthz") }
        server.clients.shutdown()
    }
}

@Suite("Listening address")
struct ListeningAddressTests {
    /// The local sockets listening on `port`, as `/proc/net/tcp*` lists them.
    static func listeners(port: Int) throws -> [String] {
        let hexPort = String(format: "%04X", port)
        var found: [String] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = try String(contentsOfFile: table, encoding: .utf8)
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                // State 0A is LISTEN.
                guard fields.count > 3, fields[1].hasSuffix(":" + hexPort), fields[3] == "0A" else { continue }
                found.append("\(table.hasSuffix("6") ? "tcp6" : "tcp") \(fields[1])")
            }
        }
        return found
    }

    @Test("told 127.0.0.1, the server listens on 127.0.0.1 only, not on every address")
    func loopbackOnly() throws {
        let server = try TestServer()
        defer { server.stop() }
        let hexPort = String(format: "%04X", server.port)
        #expect(try Self.listeners(port: server.port) == ["tcp 0100007F:\(hexPort)"])
    }
}
