import CowatchGateway
import Foundation
import SlashCommands
import Testing

/// Shared links are looked at before the room sees them (docs/security.md, "What
/// may be shared"): the verdicts, the addresses never visited, and the check
/// end to end against a loopback HTTP server.
@Suite("Checking a shared link")
struct MediaCheckVerdictTests {
    @Test("what counts as media, what certainly is not, and what cannot be told", arguments: [
        (206, "video/mp4", "/a.mp4", "media"),
        (206, "video/webm; codecs=vp9", "/a", "media"),
        (206, "audio/mpeg", "/a", "media"),
        (200, "application/vnd.apple.mpegurl", "/index.m3u8", "media"),
        (200, "application/dash+xml", "/manifest", "media"),
        (200, nil, "/live/index.m3u8?token=1", "media"),
        (206, "application/octet-stream", "/film.mkv", "media"),
        (200, "application/octet-stream", "/download", "unchecked"),
        (206, nil, "/a.webm?sig=1", "media"),
        (200, "video/mp4", "/a.mp4", "media-no-ranges"),
        (200, "audio/mpeg", "/a", "media-no-ranges"),
        (200, "application/octet-stream", "/film.mkv", "media-no-ranges"),
        (200, nil, "/a.webm?sig=1", "media-no-ranges"),
        (200, "application/mp4", "/a", "media-no-ranges"),
        (200, "text/html; charset=utf-8", "/watch", "not-media"),
        (200, "image/png", "/poster.png", "not-media"),
        (200, "application/json", "/api", "not-media"),
        (404, "text/html", "/a.mp4", "not-media"),
        (410, nil, "/a.mp4", "not-media"),
        (403, "text/html", "/a.mp4", "unchecked"),
        (500, nil, "/a.mp4", "unchecked"),
    ] as [(Int, String?, String, String)])
    func verdicts(status: Int, type: String?, path: String, expected: String) {
        let label = switch MediaCheck.verdict(status: status, contentType: type, path: path) {
        case .media: "media"
        case .mediaWithoutSeeking: "media-no-ranges"
        case .notMedia: "not-media"
        case .unchecked: "unchecked"
        }
        #expect(label == expected)
    }

    @Test("a whole file for a range request is told in words: why seeking fails and what fixes it")
    func noRangesSaidInWords() {
        guard case .mediaWithoutSeeking(let why) = MediaCheck.verdict(status: 200, contentType: "video/mp4", path: "/a.mp4") else {
            Issue.record("a 200 for a range request was not told apart")
            return
        }
        #expect(why.contains("200 OK, not 206 Partial Content"))
        #expect(why.contains("range requests"))
        #expect(why.contains("/seek"))
        #expect(why.contains("python3 -m http.server"))
        // A web page, an error or an unreadable answer says nothing of seeking.
        #expect(MediaCheck.verdict(status: 200, contentType: "text/html", path: "/a.mp4") != .mediaWithoutSeeking(why))
        #expect(MediaCheck.verdict(status: 206, contentType: "video/mp4", path: "/a.mp4") == .media)
    }

    @Test("private, loopback, link-local and reserved addresses are not public; others are", arguments: [
        ([127, 0, 0, 1], false), ([10, 1, 2, 3], false), ([172, 16, 0, 1], false), ([172, 32, 0, 1], true),
        ([192, 168, 1, 1], false), ([169, 254, 169, 254], false), ([100, 64, 0, 1], false), ([0, 0, 0, 0], false),
        ([224, 0, 0, 1], false), ([255, 255, 255, 255], false), ([93, 184, 216, 34], true), ([8, 8, 8, 8], true),
    ] as [([UInt8], Bool)])
    func ipv4(address: [UInt8], isPublic: Bool) {
        #expect(MediaCheck.isPublic(address) == isPublic)
    }

    @Test("IPv6: loopback, unique local, link-local and mapped private IPv4 are not public")
    func ipv6() {
        var loopback = [UInt8](repeating: 0, count: 16)
        loopback[15] = 1
        #expect(!MediaCheck.isPublic(loopback))
        #expect(!MediaCheck.isPublic([0xFD] + [UInt8](repeating: 0, count: 15)))
        #expect(!MediaCheck.isPublic([0xFE, 0x80] + [UInt8](repeating: 0, count: 14)))
        let mapped = [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF]
        #expect(!MediaCheck.isPublic(mapped + [192, 168, 0, 1]))
        #expect(MediaCheck.isPublic(mapped + [8, 8, 8, 8]))
        #expect(MediaCheck.isPublic([0x26, 0x06, 0x28, 0x00] + [UInt8](repeating: 1, count: 12)))
    }
}

@Suite("Checking a shared link, end to end")
struct MediaCheckEndToEndTests {
    static func media() throws -> FixedHTTPServer {
        try FixedHTTPServer(answers: [
            "/clip.mp4": "HTTP/1.1 206 Partial Content\r\nContent-Type: video/mp4",
            "/page": "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8",
            "/moved.mp4": "HTTP/1.1 302 Found\r\nLocation: /clip.mp4",
        ])
    }

    @Test("a web page is refused with not-media and shares nothing; a video is shared")
    func pageRefused() throws {
        let media = try Self.media()
        defer { media.stop() }
        let server = try TestServer { $0.mediaCheck = MediaCheck.Settings(enabled: true, allowPrivateAddresses: true) }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/watch \(media.url("/page")) Not a video")
        let error = try #require(alice.error())
        #expect(error.string("code") == "not-media")
        #expect(error.string("message")?.contains("a web page (text/html)") == true)
        alice.send("/watch \(media.url("/moved.mp4")) Clip")
        let state = try #require(alice.state("paused"))
        #expect(state.object("session")?.object("activity")?.string("title") == "Clip")
        #expect(media.paths == ["/page", "/moved.mp4", "/clip.mp4"])
    }

    @Test("a file from a server without range requests is shared, and its sender told that seeking will not work and why")
    func noRangesShared() throws {
        let media = try FixedHTTPServer(answers: ["/whole.mp4": "HTTP/1.1 200 OK\r\nContent-Type: video/mp4"])
        defer { media.stop() }
        let server = try TestServer { $0.mediaCheck = MediaCheck.Settings(enabled: true, allowPrivateAddresses: true) }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob")
        alice.send("/watch \(media.url("/whole.mp4")) Whole")
        let state = try #require(bob.state("paused"))
        #expect(state.object("session")?.object("activity")?.string("title") == "Whole")
        let notice = try #require(alice.event("notice") { $0.string("text")?.contains("seeking in it will not work") == true })
        #expect(notice.string("text")?.contains("range requests") == true)
        // The word is for the sender: everything bob reads up to alice's next chat line has none of it.
        alice.send("after")
        var toldBob = false
        #expect(bob.next { frame in
            toldBob = toldBob || frame.contains("seeking in it will not work")
            return JSONObject(frame)?.string("type") == "chat"
        } != nil)
        #expect(!toldBob)
    }

    @Test("the lines after a checked link wait for it, in order: /watch then /play plays")
    func orderKept() throws {
        let media = try Self.media()
        defer { media.stop() }
        let server = try TestServer { $0.mediaCheck = MediaCheck.Settings(enabled: true, allowPrivateAddresses: true) }
        defer { server.stop() }
        let alice = try server.join(name: "alice", query: "player=1")
        alice.send("/watch \(media.url("/clip.mp4")) Clip\n/play\n/status")
        #expect(alice.state("paused") != nil)
        #expect(alice.event("state") { $0.object("playback")?.string("status") != "paused" } != nil)
        #expect(try #require(alice.untilRoundTrip()).allSatisfy { $0.string("type") != "error" })
    }

    @Test("a link on a private address is not visited unless the operator allows it: shared, with a word to the sender")
    func privateAddressNotVisited() throws {
        let media = try Self.media()
        defer { media.stop() }
        let server = try TestServer { $0.mediaCheck = MediaCheck.Settings(enabled: true) }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/watch \(media.url("/page")) Page")
        #expect(alice.state("paused") != nil)
        let notice = try #require(alice.event("notice") { $0.string("text")?.contains("could not be checked") == true })
        #expect(notice.string("text")?.contains("private or local address") == true)
        #expect(media.paths.isEmpty)
    }
}

/// The room decides before anything is fetched, and one address cannot take the
/// server's places for checks.
@Suite("Checking a shared link, after the room's decision")
struct MediaCheckDecisionTests {
    static func settings() -> MediaCheck.Settings {
        MediaCheck.Settings(enabled: true, allowPrivateAddresses: true, timeout: .seconds(3))
    }

    @Test("a member the room would refuse (playback for hosts, muted) is refused by the room, and nothing is fetched")
    func refusedFirst() throws {
        let media = try MediaCheckEndToEndTests.media()
        defer { media.stop() }
        let server = try TestServer { $0.mediaCheck = Self.settings() }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob")
        alice.send("/policy control hosts")
        #expect(bob.event("state") { $0.object("policy")?.string("control") == "hosts" } != nil)
        bob.send("/watch \(media.url("/page")) Page")
        let forbidden = try #require(bob.error())
        #expect(forbidden.string("code") == "forbidden")
        alice.send("/policy control everyone")
        #expect(bob.event("state") { $0.object("policy")?.string("control") == "everyone" } != nil)
        alice.send("/mute bob")
        #expect(bob.event("notice") { $0.string("text")?.contains("muted") == true } != nil)
        bob.send("/queue \(media.url("/page")) Page")
        #expect(try #require(bob.error()).string("code") != nil)
        // What the room has said to bob so far is all it says: no "shared anyway".
        bob.send("/status")
        #expect(bob.event("reply") != nil)
        #expect(bob.allFrames.allSatisfy { !$0.contains("shared anyway") })
        #expect(media.paths.isEmpty)
    }

    @Test("a read bot's /watch is refused by the room, and its link is not fetched")
    func readBot() throws {
        let media = try MediaCheckEndToEndTests.media()
        defer { media.stop() }
        let server = try TestServer { $0.mediaCheck = Self.settings() }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/token reader read")
        let reply = try #require(alice.event("reply") { $0.string("command") == "token" })
        let token = try #require(reply.string("token"))
        let bot = try server.join(name: "reader", query: "token=\(token)")
        bot.send("/watch \(media.url("/page")) Page")
        #expect(try #require(bot.error()).string("code") == "forbidden")
        bot.send("/status")
        #expect(bot.event("reply") != nil)
        #expect(bot.allFrames.allSatisfy { !$0.contains("shared anyway") })
        #expect(media.paths.isEmpty)
    }

    @Test("with media-hosts, a link from another host is refused without being visited")
    func mediaHostsFirst() throws {
        let media = try MediaCheckEndToEndTests.media()
        defer { media.stop() }
        let server = try TestServer {
            $0.mediaCheck = Self.settings()
            $0.room.mediaHosts = ["media.example.org"]
        }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/watch \(media.url("/moved.mp4")) Clip")
        #expect(try #require(alice.error()).string("code") == "media-host")
        alice.send("/status")
        #expect(alice.event("reply") != nil)
        #expect(media.paths.isEmpty)
    }

    @Test("HTTP:// in upper case is checked like http://, and shared in lower case")
    func schemeNormalised() throws {
        let media = try MediaCheckEndToEndTests.media()
        defer { media.stop() }
        let server = try TestServer { $0.mediaCheck = Self.settings() }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let upper = media.url("/page").replacingOccurrences(of: "http://", with: "HTTP://")
        alice.send("/watch \(upper) Page")
        #expect(try #require(alice.error()).string("code") == "not-media")
        alice.send("/watch \(media.url("/clip.mp4").replacingOccurrences(of: "http://", with: "HtTp://")) Clip")
        let state = try #require(alice.state("paused"))
        #expect(state.object("session")?.object("activity")?.string("url")?.hasPrefix("http://") == true)
        #expect(media.paths == ["/page", "/clip.mp4"])
    }

    @Test("one address has at most max-media-checks-per-address checks in flight; past them its links are refused in words")
    func perAddress() throws {
        // A server that takes connections and never answers: each check waits out its timeout.
        let silent = try SilentListener()
        defer { silent.stop() }
        // Checks that outlast the test however slow the machine, so that the first
        // two are surely still in flight when the third link comes.
        let server = try TestServer {
            $0.mediaCheck = MediaCheck.Settings(enabled: true, allowPrivateAddresses: true, timeout: .seconds(60))
        }
        defer { server.stop() }
        let members = try (1...3).map { try server.join(name: "m\($0)") }
        members[0].send("/watch http://127.0.0.1:\(silent.port)/a.mp4 A")
        members[1].send("/watch http://127.0.0.1:\(silent.port)/b.mp4 B")
        #expect(silent.waitForConnections(2))
        members[2].send("/watch http://127.0.0.1:\(silent.port)/c.mp4 C")
        let refused = try #require(members[2].error())
        #expect(refused.string("code") == "rate-limited")
        #expect(refused.string("message")?.contains("already being checked") == true)
    }

    @Test("past max-held-lines behind a link being checked, a line is refused in words and the held ones still follow the link")
    func heldLinesBound() throws {
        let silent = try SilentListener()
        defer { silent.stop() }
        let server = try TestServer {
            // The check times out (the listener never answers) well after the
            // three lines below are in, then the link is shared unchecked.
            $0.mediaCheck = MediaCheck.Settings(enabled: true, allowPrivateAddresses: true, timeout: .seconds(5))
            $0.maximumHeldLines = 2
        }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/watch http://127.0.0.1:\(silent.port)/a.mp4 A")
        #expect(silent.waitForConnections(1))
        for text in ["one", "two", "three"] { alice.send(text) }
        let refused = try #require(alice.error())
        #expect(refused.string("code") == "rate-limited")
        #expect(refused.string("message") == "too many lines while a link is checked; this one was dropped")
        // The held lines follow the link once it is decided, in order; the connection carries on.
        #expect(alice.event("chat", timeout: 30) { $0.string("text") == "one" } != nil)
        #expect(alice.event("chat") { $0.string("text") == "two" } != nil)
        #expect(alice.closeInfo == nil)
    }
}

/// A provider's link is known by its form and never fetched; a link that could
/// not be checked does not replace what is playing unless it looks like media.
@Suite("Checking a shared link: provider links and unchecked links")
struct MediaCheckProviderTests {
    @Test("a YouTube link is shared without a fetch with the check on, and a channel page is refused in words")
    func youTubeNotFetched() throws {
        let media = try MediaCheckEndToEndTests.media()
        defer { media.stop() }
        let server = try TestServer { $0.mediaCheck = MediaCheckDecisionTests.settings() }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/watch \(media.url("/clip.mp4")) Clip")
        #expect(alice.state("paused") != nil)
        // Fetched, this link would be a web page (not-media) or, with no way out
        // to YouTube, a link that could not be checked (a notice): neither comes.
        alice.send("/watch https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42 Rick")
        let state = try #require(alice.event("state") {
            $0.object("session")?.object("activity")?.string("identifier") == "youtube:dQw4w9WgXcQ"
        })
        let activity = state.object("session")?.object("activity")
        #expect(activity?.object("source")?.string("kind") == "youtube")
        #expect(activity?.object("source")?.string("id") == "dQw4w9WgXcQ")
        #expect(activity?.bool("live") == false)
        #expect(activity?.isNull("duration") == true)
        #expect(state.object("playback")?.number("position") == 42)
        alice.send("/queue https://vimeo.com/76979871 Vimeo")
        #expect(alice.event("state") { $0.array("queue")?.count == 1 } != nil)
        alice.send("/watch https://www.youtube.com/@someone")
        let refused = try #require(alice.error())
        #expect(refused.string("code") == "bad-arguments")
        #expect(refused.string("message")?.contains("a YouTube channel, not a video") == true)
        alice.send("/status")
        #expect(alice.event("reply") != nil)
        #expect(alice.allFrames.allSatisfy { !$0.contains("could not be checked") })
        #expect(media.paths.allSatisfy { $0 == "/clip.mp4" })
    }

    @Test("a link that could not be checked and does not look like media does not replace what is playing; /queue shares it")
    func uncheckedDoesNotReplace() throws {
        let media = try FixedHTTPServer(answers: [
            "/clip.mp4": "HTTP/1.1 206 Partial Content\r\nContent-Type: video/mp4",
            "/broken": "HTTP/1.1 503 Service Unavailable",
            "/broken.webm": "HTTP/1.1 503 Service Unavailable",
        ])
        defer { media.stop() }
        let server = try TestServer { $0.mediaCheck = MediaCheckDecisionTests.settings() }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        // With nothing playing, it is shared with a word, as before.
        alice.send("/watch \(media.url("/broken")) Broken")
        #expect(alice.state("paused") != nil)
        #expect(alice.event("notice") { $0.string("text")?.contains("could not be checked") == true } != nil)
        // The same link again replaces nothing: a new title renames it.
        alice.send("/watch \(media.url("/broken")) Renamed")
        #expect(alice.event("state") { $0.object("session")?.object("activity")?.string("title") == "Renamed" } != nil)
        alice.send("/watch \(media.url("/clip.mp4")) Clip")
        #expect(alice.event("state") { $0.object("session")?.object("activity")?.string("title") == "Clip" } != nil)
        alice.send("/watch \(media.url("/broken")) Broken")
        let refused = try #require(alice.error())
        #expect(refused.string("code") == "not-media")
        #expect(refused.string("message")?.contains("/queue it to share it anyway") == true)
        alice.send("/queue \(media.url("/broken")) Broken")
        #expect(alice.event("state") { $0.array("queue")?.count == 1 } != nil)
        alice.send("/watch \(media.url("/broken.webm")) Named like media")
        #expect(alice.event("state") {
            $0.object("session")?.object("activity")?.string("title") == "Named like media"
        } != nil)
    }
}

@Suite("What becomes of a checked link")
struct LinkDecisionTests {
    static func link(_ text: String) -> MediaURL {
        guard let url = MediaURL(text) else { fatalError("test URL \(text) is not valid") }
        return url
    }

    @Test("media is shared; not-media is refused naming the command")
    func checked() {
        #expect(LinkDecision.after(.media, link: Self.link("https://example.org/a"), command: .watch, replacesItem: true) == .share)
        #expect(LinkDecision.after(.notMedia("a page"), link: Self.link("https://example.org/a"), command: .queue, replacesItem: false)
                == .refuse(.notMedia, "/queue: a page"))
    }

    @Test("unchecked: refused only for a /watch that would replace an item with a link that does not look like media", arguments: [
        ("https://example.org/page", CommandName.watch, true, false),
        ("https://example.org/page", .watch, false, true),
        ("https://example.org/page", .queue, true, true),
        ("https://example.org/film.mp4", .watch, true, true),
        ("https://example.org/live/index.M3U8?token=1", .watch, true, true),
        ("https://example.org/film.mp4#t=5", .watch, true, true),
        ("https://example.mp4/page", .watch, true, false),
        ("https://example.org/page?name=a.mp4", .watch, true, false),
        ("https://youtu.be/dQw4w9WgXcQ", .watch, true, true),
    ] as [(String, CommandName, Bool, Bool)])
    func unchecked(link: String, command: CommandName, replacesItem: Bool, shared: Bool) {
        let decision = LinkDecision.after(.unchecked("it timed out"), link: Self.link(link), command: command, replacesItem: replacesItem)
        switch decision {
        case .shareWithNotice(let text):
            #expect(shared)
            #expect(text.contains("could not be checked (it timed out); shared anyway"))
        case .refuse(let code, let message):
            #expect(!shared)
            #expect(code == .notMedia)
            #expect(message.hasPrefix("/watch: that link could not be checked (it timed out) and does not look like a media file"))
        case .share:
            Issue.record("an unchecked link was shared without a word")
        }
    }
}

/// A TCP listener that accepts connections and never answers them.
final class SilentListener: @unchecked Sendable {
    let port: Int
    private let descriptor: Int32
    /// Guards `accepted` and is signalled at each connection accepted.
    private let condition = NSCondition()
    private var accepted: [Int32] = []

    init() throws {
        (descriptor, port) = try FixedHTTPServer.listening()
        let descriptor = descriptor
        Thread { [self] in
            while true {
                let client = accept(descriptor, nil, nil)
                if client < 0 { return }
                condition.withLock {
                    accepted.append(client)
                    condition.broadcast()
                }
            }
        }.start()
    }

    func waitForConnections(_ count: Int, timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while accepted.count < count {
                if !condition.wait(until: deadline) { return accepted.count >= count }
            }
            return true
        }
    }

    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
        condition.withLock { for client in accepted { close(client) } }
    }
}
