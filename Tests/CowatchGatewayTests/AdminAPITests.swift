import CowatchClient
import CowatchCore
import CowatchStore
import Foundation
import Testing

@Suite("The operator's admin API", .serialized)
struct AdminAPITests {
    static let token = "operator-secret-0123456789"

    static func call(_ server: TestServer, _ method: String, _ path: String, token: String? = AdminAPITests.token) throws
        -> (status: Int, body: JSONObject?) {
        let address = try #require(WebSocketAddress("http://127.0.0.1:\(server.port)\(path)"))
        let (status, body) = try PlainHTTP.request(method, address, bearer: token)
        return (status, JSONObject(body))
    }

    @Test("the admin API refuses requests without the operator's token (401), and is off without one (404)")
    func refusesWithoutTheToken() throws {
        let off = try TestServer()
        defer { off.stop() }
        #expect(try Self.call(off, "GET", "/admin/rooms").status == 404)

        let server = try TestServer { $0.adminToken = Self.token }
        defer { server.stop() }
        #expect(try Self.call(server, "GET", "/admin/rooms", token: nil).status == 401)
        #expect(try Self.call(server, "GET", "/admin/rooms", token: "wrong").status == 401)
        #expect(try Self.call(server, "POST", "/admin/drain", token: "wrong").status == 401)
        #expect(try Self.call(server, "GET", "/admin/rooms").status == 200)
    }

    @Test("the operator lists rooms, closes one, and its members are told")
    func listsAndClosesRooms() throws {
        let server = try TestServer { $0.adminToken = Self.token }
        defer { server.stop() }
        let alice = try server.join("noisy", name: "alice")
        _ = try server.join("quiet", name: "bob")
        let listed = try Self.call(server, "GET", "/admin/rooms")
        #expect(listed.body?.array("rooms")?.map { $0.string("name") } == ["noisy", "quiet"])
        #expect(listed.body?.array("rooms")?.first?.int("connected") == 1)
        let closed = try Self.call(server, "POST", "/admin/rooms/noisy/close")
        #expect(closed.status == 200)
        let close = try #require(alice.waitClosed())
        #expect(close.reason.contains("operator closed this room"))
        #expect(try Self.call(server, "GET", "/admin/rooms").body?.array("rooms")?.map { $0.string("name") } == ["quiet"])
        #expect(try Self.call(server, "POST", "/admin/rooms/noisy/close").status == 404)
    }

    @Test("a server-wide address ban closes that address's connections and refuses its upgrades with 403")
    func serverWideBan() throws {
        let server = try TestServer { $0.adminToken = Self.token }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        #expect(try Self.call(server, "POST", "/admin/bans?address=127.0.0.1").status == 200)
        #expect(alice.waitClosed()?.code == 4003)
        let socket = try RawSocket(port: server.port)
        #expect(try socket.upgrade(path: "/rooms/lobby?name=x", protocolName: "cowatch.v1.json").hasPrefix("HTTP/1.1 403"))
        #expect(try Self.call(server, "POST", "/admin/bans/lift?address=127.0.0.1").status == 200)
        _ = try server.join(name: "back")
    }

    @Test("a server-wide ban takes one address: names, ranges and bad minutes are refused with 400, and ban nobody")
    func serverWideBanTakesOneAddress() throws {
        let server = try TestServer { $0.adminToken = Self.token }
        defer { server.stop() }
        for address in ["not-an-ip", "0.0.0.0/0", "10.0.0.0/8", "example.org", "127.0.0.1 ", "::1/128", "1.2.3"] {
            let encoded = address.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? address
            #expect(try Self.call(server, "POST", "/admin/bans?address=\(encoded)").status == 400, "\(address)")
        }
        #expect(try Self.call(server, "POST", "/admin/bans?address=198.51.100.7&minutes=abc").status == 400)
        #expect(try Self.call(server, "POST", "/admin/bans?address=198.51.100.7&minutes=-5").status == 400)
        #expect(try Self.call(server, "GET", "/admin/bans").body?.array("bans")?.isEmpty == true)
        // An IPv6 address is kept as the server writes peers' addresses.
        #expect(try Self.call(server, "POST", "/admin/bans?address=2001:DB8:0:0::1&minutes=5").status == 200)
        #expect(try Self.call(server, "GET", "/admin/bans").body?.array("bans")?.first?.string("address") == "2001:db8::1")
        _ = try server.join(name: "still-welcome")
    }

    @Test("draining refuses new rooms with 503 and keeps existing ones; creation tokens gate new rooms")
    func drainAndCreationTokens() throws {
        let server = try TestServer {
            $0.adminToken = Self.token
            $0.roomCreation = .token
        }
        defer { server.stop() }
        let refused = try RawSocket(port: server.port)
        #expect(try refused.upgrade(path: "/rooms/new-room?name=x", protocolName: "cowatch.v1.json").hasPrefix("HTTP/1.1 403"))
        let issued = try Self.call(server, "POST", "/admin/creation-tokens?uses=1")
        let create = try #require(issued.body?.string("token"))
        _ = try server.join("new-room", name: "alice", query: "create=\(create)")
        let again = try RawSocket(port: server.port)
        #expect(try again.upgrade(path: "/rooms/other-room?name=x&create=\(create)", protocolName: "cowatch.v1.json")
            .hasPrefix("HTTP/1.1 403"))
        _ = try server.join("new-room", name: "bob")

        #expect(try Self.call(server, "POST", "/admin/drain?on=false").body?.bool("draining") == false,
                "on=false is the settings' false, not a drain")
        #expect(try Self.call(server, "POST", "/admin/drain?on=maybe").status == 400)
        #expect(try Self.call(server, "POST", "/admin/drain?on=1").body?.bool("draining") == true)
        let second = try #require(try Self.call(server, "POST", "/admin/creation-tokens").body?.string("token"))
        let draining = try RawSocket(port: server.port)
        #expect(try draining.upgrade(path: "/rooms/third?name=x&create=\(second)", protocolName: "cowatch.v1.json")
            .hasPrefix("HTTP/1.1 503"))
        _ = try server.join("new-room", name: "carol")
    }

    @Test("an operator-issued bot token lets a bot into its room with its scope")
    func operatorTokens() throws {
        let server = try TestServer { $0.adminToken = Self.token }
        defer { server.stop() }
        let alice = try server.join("studio", name: "alice")
        alice.send("/lock")
        _ = alice.event("state") { $0.object("access")?.bool("locked") == true }
        let issued = try Self.call(server, "POST", "/admin/rooms/studio/tokens?name=announcer&scope=read")
        let token = try #require(issued.body?.string("token"))
        let bot = try server.join("studio", name: "x", query: "token=\(token)")
        #expect(ModerationEndToEndTests.welcome(bot)?.object("you")?.string("bot") == "read")
        bot.send("hello")
        #expect(bot.error()?.string("code") == "forbidden")
        let number = try #require(issued.body?.int("number"))
        #expect(try Self.call(server, "POST", "/admin/rooms/studio/revoke-token?number=\(number)").status == 200)
        #expect(bot.waitClosed()?.reason.contains("revoked by the server's operator") == true)
        let refused = server.open("/rooms/studio?token=\(token)")
        #expect(refused.error()?.string("code") == "bad-token")
    }

    @Test("cowatch admin drives the API from the command line")
    func commandLine() throws {
        let tokenFile = NSTemporaryDirectory() + "cowatch-admin-\(UUID().uuidString).token"
        try Self.token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let server = try ServerProcess(arguments: ["--store", "memory", "--admin-token-file", tokenFile])
        defer { _ = server.terminate() }
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        _ = try RestartTests.member(clients, server, "/rooms/movie?name=alice")
        let serverURL = "http://127.0.0.1:\(server.port)"
        func admin(_ arguments: [String]) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ServerProcess.binary)
            process.arguments = ["admin", "--server", serverURL, "--token-file", tokenFile] + arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        let (status, listing) = try admin(["rooms"])
        #expect(status == 0)
        #expect(listing.contains("movie  1/1 connected"), "\(listing)")
        #expect(try admin(["close", "nowhere"]).0 == 1)

        // cowatch token create: the operator's bot token, through the same API.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServerProcess.binary)
        process.arguments = ["token", "create", "--room", "movie", "--scope", "read", "--name", "narrator",
                             "--server", serverURL, "--token-file", tokenFile]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let issued = JSONObject(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let botToken = try #require(issued?.string("token"))
        let bot = try RestartTests.member(clients, server, "/rooms/movie?token=\(botToken)")
        #expect(ModerationEndToEndTests.welcome(bot)?.object("you")?.string("name") == "narrator")

        #expect(try admin(["close", "movie"]).0 == 0)
    }

    @Test("the operator's server-wide bans and drain outlive a restart")
    func operatorStateIsKept() throws {
        let data = NSTemporaryDirectory() + "cowatch-operator-\(UUID().uuidString)"
        let tokenFile = data + ".token"
        try Self.token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let arguments = ["--data-dir", data, "--admin-token-file", tokenFile]
        let first = try ServerProcess(arguments: arguments)
        func post(_ server: ServerProcess, _ path: String) throws -> Int {
            let address = try #require(WebSocketAddress("http://127.0.0.1:\(server.port)\(path)"))
            return try PlainHTTP.request("POST", address, bearer: Self.token).status
        }
        #expect(try post(first, "/admin/bans?address=198.51.100.7") == 200)
        #expect(try post(first, "/admin/drain?on=1") == 200)
        try first.waitUntilWritten()
        first.kill9()

        let second = try ServerProcess(arguments: arguments)
        defer { _ = second.terminate() }
        let address = try #require(WebSocketAddress("http://127.0.0.1:\(second.port)/admin/bans"))
        let bans = JSONObject(try PlainHTTP.request("GET", address, bearer: Self.token).body)
        #expect(bans?.array("bans")?.map { $0.string("address") } == ["198.51.100.7"])
        let socket = try RawSocket(port: second.port)
        #expect(try socket.upgrade(path: "/rooms/brand-new?name=x", protocolName: "cowatch.v1.json").hasPrefix("HTTP/1.1 503"))
    }
}
