import CowatchGateway
import Foundation
import Testing

/// Shared links are looked at before the room sees them (docs/security.md, "What
/// may be shared"): the verdicts, the addresses never visited, and the check
/// end to end against a loopback HTTP server.
@Suite("Checking a shared link")
struct MediaCheckVerdictTests {
    @Test("what counts as media, what certainly is not, and what cannot be told", arguments: [
        (200, "video/mp4", "/a.mp4", "media"),
        (206, "video/webm; codecs=vp9", "/a", "media"),
        (200, "audio/mpeg", "/a", "media"),
        (200, "application/vnd.apple.mpegurl", "/index.m3u8", "media"),
        (200, "application/octet-stream", "/film.mkv", "media"),
        (200, "application/octet-stream", "/download", "unchecked"),
        (200, nil, "/a.webm?sig=1", "media"),
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
        case .notMedia: "not-media"
        case .unchecked: "unchecked"
        }
        #expect(label == expected)
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
        #expect(alice.error(timeout: 0.5) == nil)
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
