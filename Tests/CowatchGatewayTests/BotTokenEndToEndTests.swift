import CowatchClient
import CowatchCore
import CowatchStore
import Foundation
import Testing

@Suite("Bot tokens end to end", .serialized)
struct BotTokenEndToEndTests {
    @Test("a bot presents its token as Authorization: Bearer or token=; each scope allows what it says and nothing more")
    func scopesOverSockets() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join("studio", name: "alice")
        alice.send("/watch https://example.org/a.mp4\n/policy control hosts\n/token reader read\n/token dj control")
        let reader = try #require(alice.event("reply") { $0.string("command") == "token" && $0.object("bot")?.string("name") == "reader" })
        let dj = try #require(alice.event("reply") { $0.string("command") == "token" && $0.object("bot")?.string("name") == "dj" })
        let readToken = try #require(reader.string("token")), controlToken = try #require(dj.string("token"))

        // Bearer header, by a raw upgrade.
        let socket = try RawSocket(port: server.port)
        let head = try socket.upgrade(path: "/rooms/studio", protocolName: "cowatch.v1.json",
                                      headers: ["Authorization: Bearer \(readToken)"])
        #expect(head.hasPrefix("HTTP/1.1 101"))
        _ = alice.event("participant") { $0.object("participant")?.string("bot") == "read" }
        try socket.write(RawFrames.maskedText("hello from a reader"))
        let frames = String(decoding: socket.read(until: { String(decoding: $0, as: UTF8.self).contains("\"code\":\"forbidden\"") }), as: UTF8.self)
        #expect(frames.contains("\"code\":\"forbidden\""))

        let bot = try server.join("studio", name: "ignored", query: "token=\(controlToken)")
        #expect(ModerationEndToEndTests.welcome(bot)?.object("you")?.string("name") == "dj")
        bot.send("/play now")
        #expect(alice.state("playing") != nil)

        let fake = server.open("/rooms/studio?token=nope")
        #expect(fake.error()?.string("code") == "bad-token")
        #expect(fake.waitClosed()?.code == 4006)
    }
}
