import Foundation
import Testing

/// What one stranger can make the whole server keep, over real sockets.
@Suite("Server bounds end to end")
struct ServerBoundsTests {
    @Test("one address creates at most room-creation-rate rooms a minute; the next upgrade is refused with 429 and why, while joining an existing room still works")
    func roomCreationRate() throws {
        let server = try TestServer { $0.roomCreationRate = 3 }
        defer { server.stop() }
        for index in 0..<3 {
            let member = try server.join("made\(index)", name: "eve")
            member.close()
        }
        let socket = try RawSocket(port: server.port)
        defer { socket.close() }
        let head = try socket.upgrade(path: "/rooms/made3?name=eve", protocolName: "cowatch.v1.json")
        #expect(head.hasPrefix("HTTP/1.1 429"))
        let body = String(decoding: socket.read(until: { String(decoding: $0, as: UTF8.self).contains("rooms in the last minute") }), as: UTF8.self)
        #expect(body.contains("created 3 rooms in the last minute"))
        // An existing room is not a new one.
        _ = try server.join("made0", name: "eve")
    }

    @Test("a server holding max-rooms gives up an empty room nobody used for a new one, and keeps rooms people used")
    func unusedRoomsGoFirst() throws {
        let server = try TestServer { configuration in
            configuration.maximumRooms = 2
            configuration.roomCreationRate = 0
        }
        defer { server.stop() }
        let idle = try server.join("idle", name: "alice")
        idle.close()
        let used = try server.join("used", name: "bob")
        used.send("hello, anyone?")
        _ = used.event("chat")
        used.close()
        let fresh = try server.join("fresh", name: "carol")
        // The server now holds "used" and "fresh" (carol is in it): a fourth is refused.
        let refused = server.open("/rooms/fourth?name=dave")
        #expect(refused.error()?.string("code") == "room-full")
        let back = try server.join("used", name: "bob")
        let chat = IdentityEndToEndTests.welcome(back)?.array("chat")?.map { $0.string("text") }
        #expect(chat == ["hello, anyone?"])
        #expect(fresh.closeInfo == nil)
        let metrics = try server.get("/metrics").body
        #expect(metrics.contains("cowatch_unused_rooms_given_up_total 1"))
    }

    @Test("all rooms' chat together stays within chat-total-bytes: empty rooms' chat goes first")
    func chatTotal() throws {
        let server = try TestServer { $0.chatTotalBytes = 1_000 }
        defer { server.stop() }
        let line = String(repeating: "c", count: 300)
        for room in ["talk1", "talk2", "talk3"] {
            let member = try server.join(room, name: "alice")
            member.send("\(line)\n\(line)")
            _ = member.event("chat")
            _ = member.event("chat")
            member.close()
        }
        // The total is added up every 5 s (GatewayState's housekeeping): once that
        // much time has passed, it has been brought back under.
        try server.skip(.seconds(5))
        let counter = try server.get("/metrics").body.split(separator: "\n")
            .first { $0.hasPrefix("cowatch_chat_bytes_dropped_total ") }
        #expect(counter.map { $0 != "cowatch_chat_bytes_dropped_total 0" } ?? false)
        var kept = 0
        for room in ["talk1", "talk2", "talk3"] {
            let member = try server.join(room, name: "bob")
            kept += IdentityEndToEndTests.welcome(member)?.array("chat")?.reduce(0) { $0 + ($1.string("text")?.utf8.count ?? 0) } ?? 0
        }
        #expect(kept <= 1_000)
        #expect(kept > 0)
    }
}

@Suite("Forwarded addresses", .serialized)
struct ForwardedAddressTests {
    @Test("a peer that is not a trusted proxy but sends X-Forwarded-For is warned about in the log, once")
    func untrustedForwardingIsWarned() throws {
        let server = try ServerProcess(arguments: ["--store", "memory"], logLevel: "warning")
        let socket = try RawSocket(port: server.port)
        let head = try socket.upgrade(path: "/rooms/proxied?name=alice", protocolName: "cowatch.v1.json",
                                      headers: ["X-Forwarded-For: 203.0.113.4"])
        #expect(head.hasPrefix("HTTP/1.1 101"))
        let second = try RawSocket(port: server.port)
        _ = try second.upgrade(path: "/rooms/proxied?name=bob", protocolName: "cowatch.v1.json",
                               headers: ["X-Forwarded-For: 203.0.113.5"])
        socket.close()
        second.close()
        #expect(server.terminate() == 0)
        let log = server.remainingOutput()
        let warnings = log.split(separator: "\n").filter { $0.contains("not a trusted proxy sent X-Forwarded-For") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("127.0.0.1") == true)
    }
}
