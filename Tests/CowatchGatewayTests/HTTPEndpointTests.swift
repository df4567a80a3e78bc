import Testing

@Suite("Plain HTTP endpoints")
struct HTTPEndpointTests {
    @Test("/healthz answers ok")
    func health() throws {
        let server = try TestServer()
        defer { server.stop() }
        let response = try server.get("/healthz")
        #expect(response.status == 200)
        #expect(response.body == "ok")
    }

    @Test("/metrics exports connections, rooms, members, commands, errors, closes and the fan-out histogram")
    func metrics() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/nope")
        #expect(alice.error() != nil)
        alice.send("/watch https://example.org/a.mp4")
        #expect(alice.state("paused") != nil)
        let body = try server.get("/metrics").body
        #expect(body.contains("cowatch_connections 1"))
        #expect(body.contains("cowatch_rooms 1"))
        #expect(body.contains("cowatch_members 1"))
        #expect(body.contains("cowatch_commands_total{command=\"watch\"} 1"))
        #expect(body.contains("cowatch_errors_total{code=\"unknown-command\"} 1"))
        #expect(body.contains("cowatch_broadcast_fanout_seconds_bucket{le=\"+Inf\"}"))
        #expect(body.contains("# TYPE cowatch_closes_total counter"))
        #expect(body.contains("cowatch_outbox_drops_total 0"))
    }

    @Test("the browser client is served: the landing form, the room page with its video, its modules")
    func pages() throws {
        let server = try TestServer()
        defer { server.stop() }
        let landing = try server.get("/")
        #expect(landing.status == 200)
        #expect(landing.body.contains("id=\"open-room\""))
        let room = try server.get("/rooms/movie-night")
        #expect(room.status == 200)
        #expect(room.body.contains("<video"))
        #expect(room.body.contains("/static/"))
        #expect(try server.get("/static/style.css").status == 200)
        // The room page's parts are modules in a folder of their own.
        let part = try server.get("/static/room/page.js")
        #expect(part.status == 200)
        #expect(part.body.contains("export class RoomPage"))
        #expect(try server.get("/static/missing.js").status == 404)
        #expect(try server.get("/static/../room.html").status != 200)
    }

    @Test("a bad room name is refused with 400, for pages and upgrades alike", arguments: [
        "/rooms/has%20space", "/rooms/", "/rooms/\(String(repeating: "a", count: 65))", "/rooms/a/b",
    ])
    func badRoomName(path: String) throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.get(path).status == 400)
        let socket = try RawSocket(port: server.port)
        let head = try socket.upgrade(path: path)
        #expect(head.hasPrefix("HTTP/1.1 400 "))
        #expect(!head.contains("101"))
    }

    @Test("an unknown path is 404")
    func notFound() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.get("/nowhere").status == 404)
    }
}
