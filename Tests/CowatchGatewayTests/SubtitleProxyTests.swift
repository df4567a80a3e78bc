@testable import CowatchGateway
@testable import CowatchCore
import CowatchTime
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SlashCommands
import Testing

/// Subtitles fetched through the server for the page (docs/security.md,
/// "Subtitles through the server"): which paths name a track, that only the
/// room's current tracks are fetched, and what comes back.
@Suite("Subtitles through the server: the rules")
struct SubtitleProxyRuleTests {
    @Test("only /rooms/<room>/subtitles/<activity>/<track> names a track")
    func paths() {
        let request = SubtitleProxy.request(path: "/rooms/Lobby/subtitles/a3/s1")
        #expect(request == SubtitleProxy.Request(room: RoomName("lobby")!, activity: "a3", track: "s1"))
        for path in ["/rooms/lobby/subtitles/a3", "/rooms/lobby/subtitles/a3/s1/x", "/rooms/lobby/subtitles//s1",
                     "/rooms/lo%2Fbby/subtitles/a3/s1", "/rooms/lobby/subtitle/a3/s1", "/rooms//subtitles/a3/s1",
                     "/rooms/lobby/subtitles/a3/s%31", "/rooms/lobby", "/static/subtitles/a3/s1",
                     "/rooms/lobby/subtitles/a3/" + String(repeating: "s", count: 65)] {
            #expect(SubtitleProxy.request(path: path) == nil, "\(path)")
        }
    }

    static func state(activity: String = "a3", tracks: [String] = ["https://subs.example/en.vtt"], joined: Bool = true) -> RoomState {
        let url = MediaURL("https://example.org/a.mp4")!
        var session = GroupSession(state: joined ? .joined : .invalidated, reason: nil,
                                   activity: Activity(id: activity, url: url, title: "A", identifier: url.text))
        session.activity.subtitles = tracks.enumerated().map { SubtitleTrack(id: "s\($0 + 1)", url: MediaURL($1)!, label: "L\($0)") }
        return RoomState(seq: 1, session: session,
                         playback: Playback(status: .paused, item: url.text, rate: .normal, position: .zero,
                                            at: ServerInstant(milliseconds: 0), by: nil, cause: .watch),
                         queue: [], policy: RoomPolicy())
    }

    @Test("a track is fetched only while it is one of what the room watches now: no open proxy")
    func onlyCurrentTracks() {
        let request = SubtitleProxy.Request(room: RoomName("lobby")!, activity: "a3", track: "s1")
        #expect(SubtitleProxy.source(request, in: Self.state()) == .success("https://subs.example/en.vtt"))
        for (state, words) in [(Self.state(activity: "a4"), "not what the room lobby is watching now"),
                               (Self.state(tracks: []), "has no subtitle track s1"),
                               (Self.state(joined: false), "not what the room lobby is watching now")] {
            guard case .failure(let refusal) = SubtitleProxy.source(request, in: state) else {
                Issue.record("served \(words)")
                continue
            }
            #expect(refusal.status == 404)
            #expect(refusal.message.contains(words))
        }
        guard case .failure(let closed) = SubtitleProxy.source(request, in: nil) else {
            Issue.record("a room not open here was served")
            return
        }
        #expect(closed.status == 404 && closed.message.contains("not open on this server"))
    }

    @Test("what may be read: text/vtt, text/plain, or a .vtt file of no stated type; within the size", arguments: [
        (200, "text/vtt", "/en.vtt", nil as Int64?, true),
        (200, "text/plain; charset=utf-8", "/subs", nil, true),
        (200, "application/octet-stream", "/en.vtt", nil, true),
        (200, nil, "/en.VTT", nil, true),
        (200, "application/octet-stream", "/en.srt", nil, false),
        (200, "text/html", "/en.vtt", nil, false),
        (200, "application/json", "/en.vtt", nil, false),
        (404, "text/vtt", "/en.vtt", nil, false),
        (500, "text/vtt", "/en.vtt", nil, false),
        (200, "text/vtt", "/en.vtt", 1025, false),
        (200, "text/vtt", "/en.vtt", 1024, true),
    ] as [(Int, String?, String, Int64?, Bool)])
    func heads(status: Int, type: String?, path: String, length: Int64?, readable: Bool) {
        let refusal = SubtitleProxy.headRefusal(status: status, contentType: type, path: path, contentLength: length, limit: 1024)
        #expect((refusal == nil) == readable)
        if let refusal { #expect(refusal.status == 502 && !refusal.message.isEmpty) }
    }

    @Test("the body is a WebVTT file in UTF-8, with or without a byte order mark")
    func bodies() {
        #expect(SubtitleProxy.bodyRefusal(Array("WEBVTT\n\n00:00.000 --> 00:01.000\nhi\n".utf8)) == nil)
        #expect(SubtitleProxy.bodyRefusal([0xEF, 0xBB, 0xBF] + Array("WEBVTT\n".utf8)) == nil)
        #expect(SubtitleProxy.bodyRefusal(Array("<html>".utf8))?.message.contains("does not start with WEBVTT") == true)
        #expect(SubtitleProxy.bodyRefusal(Array("WEBVTT\n".utf8) + [0xFF, 0xFE]) != nil)
        #expect(SubtitleProxy.bodyRefusal([]) != nil)
    }

    @Test("the page gets the file as text/vtt, or the refusal in words")
    func responses() {
        let served = SubtitleProxy.response(.success(Array("WEBVTT\n".utf8)))
        #expect(served.status == 200 && served.contentType == "text/vtt; charset=utf-8" && served.body == Array("WEBVTT\n".utf8))
        let refused = SubtitleProxy.response(.failure(SubtitleProxy.Refusal(status: 502, message: "why")))
        #expect(refused.status == 502 && refused.contentType.hasPrefix("text/plain") && refused.body == Array("why\n".utf8))
    }
}

@Suite("Subtitles through the server, end to end")
struct SubtitleProxyEndToEndTests {
    static let vtt = "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nhello\n"

    static func files() throws -> FixedHTTPServer {
        try FixedHTTPServer(answers: [
            "/en.vtt": "HTTP/1.1 200 OK\r\nContent-Type: text/vtt",
            "/big.vtt": "HTTP/1.1 200 OK\r\nContent-Type: text/vtt",
            "/page.vtt": "HTTP/1.1 200 OK\r\nContent-Type: text/html",
        ], bodies: ["/en.vtt": vtt, "/big.vtt": "WEBVTT\n\n" + String(repeating: "x", count: 4096), "/page.vtt": "<html>"])
    }

    /// Shares a video and the given tracks; the activity's id and its tracks' ids.
    static func share(_ member: TestMember, tracks: [String]) throws -> (activity: String, tracks: [String]) {
        member.send("/watch https://example.org/a.mp4 A")
        _ = try #require(member.state("paused"))
        var ids: (String, [String]) = ("", [])
        for track in tracks {
            member.send("/subtitles \(track)")
            let state = try #require(member.event("state") { ($0.object("session")?.object("activity")?.array("subtitles")?.count ?? 0) > 0 && $0.object("session")?.object("activity")?.array("subtitles")?.last?.string("url") == track })
            let activity = try #require(state.object("session")?.object("activity"))
            ids = (activity.string("id") ?? "", activity.array("subtitles")?.compactMap { $0.string("id") } ?? [])
        }
        return ids
    }

    @Test("a current track is fetched through the server and served as WebVTT; any other path is refused without a fetch")
    func served() throws {
        let files = try Self.files()
        defer { files.stop() }
        let server = try TestServer { $0.mediaCheck = MediaCheck.Settings(enabled: false, allowPrivateAddresses: true, maximumSubtitleBytes: 1024) }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let (activity, tracks) = try Self.share(alice, tracks: [files.url("/en.vtt"), files.url("/big.vtt"), files.url("/page.vtt")])
        #expect(tracks == ["s1", "s2", "s3"])

        let served = try server.get("/rooms/lobby/subtitles/\(activity)/s1")
        #expect(served.status == 200)
        #expect(served.body == Self.vtt)
        #expect(files.paths == ["/en.vtt"])

        // Not one of the room's current tracks: refused by the server, nothing fetched.
        let unknown = try server.get("/rooms/lobby/subtitles/\(activity)/s9")
        #expect(unknown.status == 404 && unknown.body.contains("no subtitle track s9"))
        let old = try server.get("/rooms/lobby/subtitles/a999/s1")
        #expect(old.status == 404 && old.body.contains("not what the room lobby is watching now"))
        #expect(try server.get("/rooms/elsewhere/subtitles/\(activity)/s1").status == 404)
        #expect(try server.get("/rooms/lobby/subtitles/\(activity)/s1/../../x").status != 200)
        #expect(files.paths == ["/en.vtt"])

        // Too large, and not WebVTT: said in words.
        let big = try server.get("/rooms/lobby/subtitles/\(activity)/s2")
        #expect(big.status == 502 && big.body.contains("larger than this server fetches (1024 bytes"))
        let page = try server.get("/rooms/lobby/subtitles/\(activity)/s3")
        #expect(page.status == 502 && page.body.contains("text/html"))
    }

    @Test("a track whose server never answers is refused in words after the timeout; a page that left meanwhile changes nothing")
    func silentServer() throws {
        // Listening, never accepting: connections are made, and nothing is ever answered.
        let silent = try FixedHTTPServer.listening()
        defer { close(silent.descriptor) }
        let link = "http://127.0.0.1:\(silent.port)/en.vtt"
        let server = try TestServer { $0.mediaCheck = MediaCheck.Settings(enabled: false, allowPrivateAddresses: true, timeout: .seconds(1)) }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let (activity, _) = try Self.share(alice, tracks: [link])
        let path = "/rooms/lobby/subtitles/\(activity)/s1"

        let leaving = try RawSocket(port: server.port)
        try leaving.write("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        leaving.close()
        let waited = try server.get(path)
        #expect(waited.status == 502 && waited.body.contains("did not answer within 1 s"))
        #expect(try server.get("/healthz").status == 200)
        alice.send("/status")
        #expect(alice.event("reply") != nil)
    }

    @Test("a track on a private or loopback address is not fetched unless the operator allows it")
    func privateAddressNotFetched() throws {
        let files = try Self.files()
        defer { files.stop() }
        let server = try TestServer { $0.mediaCheck = MediaCheck.Settings(enabled: false) }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let (activity, _) = try Self.share(alice, tracks: [files.url("/en.vtt")])
        let refused = try server.get("/rooms/lobby/subtitles/\(activity)/s1")
        #expect(refused.status == 502 && refused.body.contains("private or local address"))
        #expect(files.paths.isEmpty)
    }
}
