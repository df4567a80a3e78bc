import CFrameGuard
import Foundation
import Testing

/// The server's plain HTTP per RFC 9110 and 9112 for what it serves, the names it
/// answers for, its deadlines and its bounds on sockets of every kind, tried over
/// real sockets as a stranger would.
@Suite("HTTP as a stranger tries it")
struct HTTPHardeningTests {
    /// One request on its own connection, read until the server closes it.
    static func exchange(_ server: TestServer, _ request: String, from source: String? = nil) throws -> String {
        let socket = try RawSocket(port: server.port, from: source)
        try socket.write(request)
        return String(decoding: socket.readAll(timeout: 5), as: UTF8.self)
    }

    static func request(_ method: String, _ path: String, host: String = "127.0.0.1", extra: String = "") -> String {
        "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\(extra)\r\n"
    }

    static func statusLines(_ response: String) -> [String] {
        response.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.") }
    }

    @Test("HEAD answers the headers a GET would, with its length, and no body")
    func head() throws {
        let server = try TestServer()
        defer { server.stop() }
        let get = try Self.exchange(server, Self.request("GET", "/healthz"))
        let head = try Self.exchange(server, Self.request("HEAD", "/healthz"))
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(head.lowercased().contains("content-length: 2\r\n"))
        #expect(get.hasSuffix("\r\n\r\nok"))
        #expect(head.hasSuffix("\r\n\r\n"), "\(head)")
    }

    @Test("methods other than GET and HEAD get 405 with Allow, on pages, health and metrics", arguments: [
        "POST", "PUT", "DELETE", "PATCH", "OPTIONS",
    ])
    func otherMethods(method: String) throws {
        let server = try TestServer()
        defer { server.stop() }
        for path in ["/", "/healthz", "/metrics", "/rooms/lobby"] {
            let response = try Self.exchange(server, Self.request(method, path))
            #expect(response.hasPrefix("HTTP/1.1 405"), "\(method) \(path): \(response.prefix(80))")
            #expect(response.lowercased().contains("allow: get, head\r\n"))
        }
    }

    @Test("two Content-Length headers are a 400, and the body is not read as a second request")
    func smuggling() throws {
        let server = try TestServer()
        defer { server.stop() }
        let hidden = Self.request("GET", "/metrics")
        let response = try Self.exchange(server, "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
                                         + "Content-Length: \(hidden.utf8.count)\r\n\r\n" + hidden)
        #expect(Self.statusLines(response) == ["HTTP/1.1 400 Bad Request"], "\(response)")
        #expect(!response.contains("cowatch_"))
        let both = try Self.exchange(server, "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n"
                                     + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        #expect(Self.statusLines(both) == ["HTTP/1.1 400 Bad Request"], "\(both)")
    }

    @Test("a body on a route that takes none is refused and the connection closed, not parsed as the next request")
    func bodies() throws {
        let server = try TestServer()
        defer { server.stop() }
        let hidden = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let response = try Self.exchange(server, "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                         + "Content-Length: \(hidden.utf8.count)\r\n\r\n" + hidden)
        #expect(Self.statusLines(response).count == 1, "\(response)")
        #expect(!response.contains("cowatch_"))
    }

    @Test("the exact path: /metrics;x and /healthz&x are not /metrics and /healthz", arguments: [
        "/metrics;x", "/metrics;", "/healthz&x", "/rooms/lobby;x",
    ])
    func exactPath(path: String) throws {
        let server = try TestServer()
        defer { server.stop() }
        let response = try Self.exchange(server, Self.request("GET", path))
        #expect(response.hasPrefix("HTTP/1.1 404"), "\(path): \(response.prefix(80))")
        #expect(!response.contains("cowatch_"))
    }

    @Test("a Host the server does not answer for gets 421, for pages and upgrades; addresses, localhost and allowed-hosts pass")
    func hosts() throws {
        let server = try TestServer { $0.allowedHosts = ["watch.example.org", "*.cowatch.test"] }
        defer { server.stop() }
        for host in ["evil.example", "evil.example:\(server.port)", "watch.example.org.evil.example", "cowatch.test"] {
            let page = try Self.exchange(server, Self.request("GET", "/rooms/lobby", host: host))
            #expect(page.hasPrefix("HTTP/1.1 421 Misdirected Request\r\n"), "\(host): \(page.prefix(80))")
            let socket = try RawSocket(port: server.port)
            let head = try socket.upgrade(path: "/rooms/lobby?name=mallory", host: host,
                                          headers: ["Origin: http://\(host)"])
            #expect(head.hasPrefix("HTTP/1.1 421"), "\(host): \(head)")
        }
        for host in ["127.0.0.1", "127.0.0.1:\(server.port)", "localhost:\(server.port)", "[::1]:\(server.port)",
                     "watch.example.org", "WATCH.example.org:443", "a.cowatch.test"] {
            let page = try Self.exchange(server, Self.request("GET", "/healthz", host: host))
            #expect(page.hasPrefix("HTTP/1.1 200"), "\(host): \(page.prefix(80))")
        }
        let missing = try Self.exchange(server, "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(missing.hasPrefix("HTTP/1.1 400"))
        let twice = try Self.exchange(server, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n")
        #expect(twice.hasPrefix("HTTP/1.1 400"))
    }

    @Test("CONNECT is answered and closed at once, not held open")
    func connect() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        try socket.write("CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n")
        let started = Date()
        let response = String(decoding: socket.readAll(timeout: 12), as: UTF8.self)
        #expect(response.hasPrefix("HTTP/1.1 400"), "\(response)")
        // Held open, it would last until http-request-timeout (10 s): well before that is "at once",
        // with room for a loaded machine.
        #expect(Date().timeIntervalSince(started) < 8, "the server closed it")
    }

    @Test("a request that never finishes, and a socket that says nothing, are closed at http-request-timeout")
    func deadlines() throws {
        let server = try TestServer { $0.httpRequestTimeout = .seconds(1) }
        defer { server.stop() }
        let partial = try RawSocket(port: server.port)
        try partial.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        let silent = try RawSocket(port: server.port)
        #expect(partial.isClosedByPeer(within: 6))
        #expect(silent.isClosedByPeer(within: 6))
    }

    @Test("sockets of every kind count toward max-connections-per-address; another address still gets in")
    func socketsPerAddress() throws {
        let server = try TestServer { $0.maximumConnectionsPerAddress = 3 }
        defer { server.stop() }
        // Three sockets that say nothing, as a stranger holding places would.
        let held = try (0..<3).map { _ in try RawSocket(port: server.port, from: "127.0.0.7") }
        let over = try Self.waitForRefusal(server, from: "127.0.0.7")
        #expect(over.hasPrefix("HTTP/1.1 429"), "\(over)")
        let other = try Self.exchange(server, Self.request("GET", "/healthz"), from: "127.0.0.8")
        #expect(other.hasPrefix("HTTP/1.1 200"))
        let metrics = try Self.exchange(server, Self.request("GET", "/metrics"), from: "127.0.0.8")
        #expect(metrics.contains("cowatch_connections_refused_total{reason=\"sockets-per-address\"}"))
        withExtendedLifetime(held) {}
    }

    @Test("max-connections bounds sockets in all; a place freed is taken again")
    func socketsInAll() throws {
        let server = try TestServer { $0.maximumConnections = 4 }
        defer { server.stop() }
        var held = try (0..<4).map { index in try RawSocket(port: server.port, from: "127.0.1.\(index + 1)") }
        let over = try Self.waitForRefusal(server, from: "127.0.1.9")
        #expect(over.hasPrefix("HTTP/1.1 503"), "\(over)")
        held.removeLast().close()
        let deadline = Date().addingTimeInterval(5)
        var answer = ""
        while Date() < deadline {
            answer = try Self.exchange(server, Self.request("GET", "/healthz"), from: "127.0.1.9")
            if answer.hasPrefix("HTTP/1.1 200") { break }
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        withExtendedLifetime(held) {}
    }

    /// A request from `source` until it is refused: the sockets held before it are
    /// counted once the server has accepted them, which it does in its own time.
    static func waitForRefusal(_ server: TestServer, from source: String) throws -> String {
        let deadline = Date().addingTimeInterval(5)
        var answer = ""
        while Date() < deadline {
            answer = try exchange(server, request("GET", "/healthz"), from: source)
            if !answer.hasPrefix("HTTP/1.1 200") { break }
        }
        return answer
    }

    @Test("a trusted proxy's sockets are bounded by the total only")
    func trustedProxy() throws {
        let server = try TestServer {
            $0.maximumConnectionsPerAddress = 2
            $0.trustedProxies = ["127.0.0.1"]
        }
        defer { server.stop() }
        let held = try (0..<4).map { _ in try RawSocket(port: server.port) }
        let answer = try Self.exchange(server, Self.request("GET", "/healthz"))
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        withExtendedLifetime(held) {}
    }

    @Test("the players' API scripts the settings name are the only other origins the policy allows, and the room page is told them")
    func playerScriptsInPolicyAndPage() throws {
        let server = try TestServer {
            try? $0.playerScripts.set("youtube", "http://127.0.0.1:7611/iframe_api?x=1&y=2")
            try? $0.playerScripts.set("vimeo", "http://127.0.0.1:7612/api/player.js")
        }
        defer { server.stop() }
        let response = try Self.exchange(server, Self.request("GET", "/rooms/lobby"))
        let policy = try #require(response.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-security-policy: ") })
        #expect(policy.contains("script-src 'self' http://127.0.0.1:7612 http://127.0.0.1:7611;"), "\(policy)")
        #expect(policy.contains("frame-src http://127.0.0.1:7612 http://127.0.0.1:7611;"), "\(policy)")
        #expect(!policy.contains("youtube.com") && !policy.contains("vimeo.com"))
        #expect(response.contains("data-kind=\"youtube\" content=\"http://127.0.0.1:7611/iframe_api?x=1&amp;y=2\""))
        #expect(response.contains("data-kind=\"vimeo\" content=\"http://127.0.0.1:7612/api/player.js\""))
    }

    @Test("every response carries the page's security headers", arguments: ["/", "/rooms/lobby", "/static/room.js", "/healthz"])
    func securityHeaders(path: String) throws {
        let server = try TestServer()
        defer { server.stop() }
        let response = try Self.exchange(server, Self.request("GET", path)).lowercased()
        let policy = try #require(response.split(separator: "\r\n").first { $0.hasPrefix("content-security-policy: ") })
        // Scripts and frames: this server, and exactly the players' origins of the settings (the defaults here).
        #expect(policy.contains("default-src 'self'; script-src 'self' https://player.vimeo.com https://www.youtube.com;"))
        #expect(policy.contains("; frame-src https://player.vimeo.com https://www.youtube.com;"))
        #expect(policy.components(separatedBy: "https://").count == 5, "\(policy)")
        #expect(response.contains("frame-ancestors 'self'"))
        #expect(response.contains("x-frame-options: sameorigin\r\n"))
        #expect(response.contains("x-content-type-options: nosniff\r\n"))
        #expect(response.contains("referrer-policy: no-referrer\r\n"))
    }

    @Test("a close with code 5000 is answered with 1002, not echoed")
    func closeCodeOutOfRange() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        let head = try socket.upgrade(path: "/rooms/lobby?name=eve")
        #expect(head.hasPrefix("HTTP/1.1 101"))
        try socket.write(RawFrames.maskedClose(code: 5000))
        let frames = RawFrames.parse(socket.read(until: { RawFrames.parse($0).contains { $0.closeCode != nil } }))
        #expect(frames.last?.closeCode == 1002, "\(frames.map { ($0.opcode, $0.closeCode ?? 0) })")
    }
}

/// RFC 6455, 5.1: a client masks every frame, and a server fails a connection
/// whose frames are not masked.
@Suite("Unmasked client frames")
struct UnmaskedFrameTests {
    static func scan(_ bytes: [UInt8], in pieces: Int = 1) -> Bool {
        var scan = cw_frame_scan()
        let size = max(1, bytes.count / pieces)
        var start = 0
        while start < bytes.count {
            let piece = Array(bytes[start..<min(bytes.count, start + size)])
            piece.withUnsafeBufferPointer { cw_frame_scan_feed(&scan, $0.baseAddress, $0.count) }
            start += size
        }
        return scan.unmasked != 0
    }

    static func unmasked(_ text: String, opcode: UInt8 = 1) -> [UInt8] {
        let payload = Array(text.utf8)
        return [0x80 | opcode, UInt8(payload.count)] + payload
    }

    @Test("the scan follows masked frames of every length, split anywhere, and stops at the first unmasked one")
    func scanRules() {
        let masked = RawFrames.maskedText("/who") + RawFrames.maskedText(String(repeating: "x", count: 300))
            + RawFrames.maskedText("") + RawFrames.maskedText("hi", opcode: 9)
        for pieces in [1, 2, 3, 7, masked.count] {
            #expect(!Self.scan(masked, in: pieces), "\(pieces) pieces")
            #expect(Self.scan(masked + Self.unmasked("/who"), in: pieces), "\(pieces) pieces")
        }
        // A 64-bit length is followed to its end, not read as headers.
        var long = RawFrames.maskedText(String(repeating: "y", count: 70_000))
        #expect(!Self.scan(long, in: 5))
        long += Self.unmasked("", opcode: 9)
        #expect(Self.scan(long, in: 5))
    }

    @Test("an unmasked frame after the upgrade is answered with close 1002, and its command is not run")
    func endToEnd() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let socket = try RawSocket(port: server.port)
        let head = try socket.upgrade(path: "/rooms/lobby?name=eve", protocolName: "cowatch.v1.json")
        #expect(head.hasPrefix("HTTP/1.1 101"))
        _ = socket.read(until: { String(decoding: $0, as: UTF8.self).contains("\"type\":\"state\"") })
        try socket.write(Self.unmasked("hello, unmasked"))
        let frames = RawFrames.parse(socket.read(until: { RawFrames.parse($0).contains { $0.closeCode != nil } }))
        #expect(frames.last?.closeCode == 1002, "\(frames.map(\.opcode))")
        #expect(!frames.contains { $0.text.contains("hello, unmasked") })
        // Masked clients carry on.
        alice.send("/who")
        #expect(alice.event("reply") != nil)
        #expect(alice.allFrames.allSatisfy { !$0.contains("hello, unmasked") })
    }
}
