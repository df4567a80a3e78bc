import CowatchClient
import Foundation
import Testing

/// Names and text that cannot pass for someone else, through the real server:
/// lookalike and invisible names beside "Alice", a `/me` line dressed as a
/// notice, a title with quotes, chat with a right-to-left override.
@Suite("Names and text that cannot pass for someone else")
struct NameSpoofingEndToEndTests {
    /// A name as the query of a room's address carries it.
    static func query(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
    }

    /// The name the server gave `member` in its welcome.
    static func welcomedName(_ member: TestMember) -> String? {
        member.allFrames.lazy.compactMap(JSONObject.init).first { $0.string("type") == "welcome" }?
            .object("you")?.string("name")
    }

    @Test("names that look like Alice's are renamed beside her; mixed-script and invisible names are refused with a reason",
          arguments: [
              // Fullwidth letters are "Alice" once NFKC-normalized; a capital I reads as l.
              ("\u{FF21}\u{FF4C}\u{FF49}\u{FF43}\u{FF45}", "Alice-2", nil),
              ("AIice", "AIice-2", nil),
              ("ALICE", "ALICE-2", nil),
              // Cyrillic А among Latin letters.
              ("\u{0410}lice", "guest", "mixes"),
              ("Alice\u{200D}", "guest", "invisible"),
              ("\u{2800}", "guest", "invisible"),
              ("\u{3164}", "guest", "invisible"),
              ("Al\u{00AD}ice", "guest", "invisible"),
          ] as [(String, String, String?)])
    func lookalikes(asked: String, given: String, refusal: String?) throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "Alice")
        let other = try server.join(name: Self.query(asked))
        #expect(Self.welcomedName(other) == given)
        if let refusal {
            let error = try #require(other.error())
            #expect(error.string("code") == "bad-name")
            #expect(error.string("message")?.contains(refusal) == true)
        } else {
            #expect(other.event("notice") { $0.string("text")?.contains("is taken here; you are \(given)") == true } != nil)
        }
        #expect(alice.event("participant") { $0.object("participant")?.string("name") == given } != nil)
    }

    @Test("/nick to a lookalike of someone present gives a suffix; to a mixed-script name, an error")
    func nickLookalike() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.join(name: "Alice")
        let bob = try server.join(name: "bob")
        bob.send("/nick \u{FF21}lice")
        #expect(bob.event("participant") { $0.object("participant")?.string("name") == "Alice-2" } != nil)
        bob.send("/nick \u{0410}lice")
        let error = try #require(bob.error())
        #expect(error.string("code") == "bad-arguments")
        #expect(error.string("message")?.contains("mixes") == true)
    }

    @Test("a /me line cannot read as a notice in cowatch.v1.text")
    func meIsMarked() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let mallory = try server.join(name: Self.query("alice made mallory"))
        let bob = try server.join(name: "bob", encoding: .text)
        mallory.send("/me a host")
        #expect(bob.next { $0 == "*<alice made mallory> a host" } != nil)
        alice.send("/op bob")
        #expect(bob.next { $0 == "* alice made bob a host" } != nil)
        #expect(!bob.allFrames.contains("* alice made mallory a host"))
    }

    @Test("quotes and backslashes in a title are escaped where the text protocol quotes it")
    func quotedTitle() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob", encoding: .text)
        alice.send(#"/watch https://example.org/a.mp4 Say "hi" \o/"#)
        #expect(alice.state("paused")?.object("session")?.object("activity")?.string("title") == #"Say "hi" \o/"#)
        #expect(bob.next { $0 == #"= paused "Say \"hi\" \\o/" at 0:00:00, rate 1"# } != nil)
        #expect(bob.next { $0 == #"* alice shared "Say \"hi\" \\o/""# } != nil)
    }

    @Test("bidirectional controls are taken out of chat, titles and reasons")
    func bidiControls() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob", encoding: .text)
        let carol = try server.join(name: "carol")
        alice.send("nice \u{202E}gnorw si ti\u{202C} film")
        #expect(bob.next { $0 == "<alice> nice gnorw si ti film" } != nil)
        #expect(carol.event("chat") { $0.string("text") == "nice gnorw si ti film" } != nil)
        alice.send("/me \u{2067}waves\u{2069}")
        #expect(bob.next { $0 == "*<alice> waves" } != nil)
        alice.send("/watch https://example.org/a.mp4 Episode\u{200F} 1")
        #expect(carol.state("paused")?.object("session")?.object("activity")?.string("title") == "Episode 1")
        alice.send("/kick carol \u{202D}spam")
        #expect(carol.waitClosed()?.reason.contains("\u{202D}") == false)
        #expect(bob.next { $0 == "* carol was kicked by alice (spam)" } != nil)
    }
}
