import CowatchCore
import CowatchTime
import Foundation
import SlashCommands
import Testing

/// A room and its members connected, the first sharing `link` titled "Clip".
private func sharing(_ link: String, _ names: String..., players: Set<String> = []) -> Scenario {
    var room = Scenario()
    for name in names { room.connect(name, player: players.contains(name)) }
    if let first = names.first { room.say(first, "/watch \(link) Clip") }
    return room
}

@Suite("Provider links: identity, starting time, title")
struct RuleSourcesTests {
    @Test("a YouTube link is shared as the video's id, paused at its t=")
    func youTubeLink() throws {
        let room = sharing("https://youtu.be/dQw4w9WgXcQ?t=1m30s", "alice", "bob")
        let activity = try #require(room.state.session?.activity)
        #expect(activity.identifier == "youtube:dQw4w9WgXcQ")
        #expect(activity.source == .youtube(id: "dQw4w9WgXcQ", start: MediaTime(seconds: 90), live: false))
        #expect(activity.url?.text == "https://youtu.be/dQw4w9WgXcQ?t=1m30s")
        #expect(activity.live == false)
        #expect(activity.duration == nil)
        room.expectPlayback(.paused, position: 90, item: "youtube:dQw4w9WgXcQ")
    }

    @Test("a Vimeo link is shared as vimeo:<number>, paused at its #t=")
    func vimeoLink() throws {
        let room = sharing("https://player.vimeo.com/video/76979871#t=62", "alice")
        #expect(room.state.session?.activity.identifier == "vimeo:76979871")
        #expect(room.playback.position.seconds == 62)
    }

    @Test("sharing the current video by another link form changes nothing")
    func sameVideoOtherForm() {
        var room = sharing("https://www.youtube.com/watch?v=dQw4w9WgXcQ", "alice", "bob")
        room.say("alice", "/seek 30")
        room.expectUnchanged(when: "bob", says: "/watch https://youtu.be/dQw4w9WgXcQ?t=5")
        #expect(room.published.isEmpty)
        #expect(room.told("bob") == ["already watching \"Clip\" (https://www.youtube.com/watch?v=dQw4w9WgXcQ)"])
        room.say("bob", "/watch https://m.youtube.com/shorts/dQw4w9WgXcQ Clip")
        #expect(room.published.isEmpty)
    }

    @Test("/watch of the current item with a new title renames it, says so, and keeps the group where it is")
    func newTitleRenames() throws {
        var room = Scenario.twoPlayersPlaying(for: 10)
        let before = room.state
        room.say("bob", "/watch https://example.org/a.mp4 Episode 1, the director's cut")
        let published = try #require(room.published.first)
        #expect(published.session?.activity.title == "Episode 1, the director's cut")
        #expect(published.session?.activity.id == before.session?.activity.id)
        #expect(published.playback.status == .playing)
        #expect(published.playback.position == before.playback.position)
        #expect(published.playback.at == before.playback.at)
        #expect(room.notices.map(\.text) == ["bob renamed \"Episode 1\" to \"Episode 1, the director's cut\""])
        #expect(room.participant("bob")?.ready == true)
    }

    @Test("/next of a queued YouTube link starts at its t=, together when the group was playing")
    func nextStartsAtTheLinkTime() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/queue https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42 Rick")
        room.playTogether(by: "alice")
        room.say("alice", "/next")
        room.expectPlayback(.waiting, position: 42, item: "youtube:dQw4w9WgXcQ")
        room.everyoneReady()
        room.expectPlayback(.playing, position: 42)
    }

    @Test("a provider's video shared without a title is named by its provider and id")
    func defaultTitles() {
        var room = Scenario.alone("alice")
        room.say("alice", "/watch https://www.youtube.com/watch?v=dQw4w9WgXcQ")
        #expect(room.state.session?.activity.title == "YouTube video dQw4w9WgXcQ")
        room.say("alice", "/queue https://vimeo.com/76979871")
        #expect(room.state.queue.first?.title == "Vimeo video 76979871")
    }

    @Test("media-hosts applies to a provider's link by the link's host")
    func mediaHostsApply() {
        var room = Scenario.alone("alice") { $0.mediaHosts = ["example.org"] }
        room.say("alice", "/watch https://youtu.be/dQw4w9WgXcQ")
        room.expectRefused("alice", .mediaHost)
        #expect(room.state.session == nil)
    }

    @Test("a room saved before sources comes back with its item a file of unknown length")
    func oldActivityDecodes() throws {
        let saved = #"{"id":"a1","url":"https://example.org/a.mp4","title":"A","identifier":"https://example.org/a.mp4"}"#
        let activity = try JSONDecoder().decode(Activity.self, from: Data(saved.utf8))
        #expect(activity.source == .file)
        #expect(activity.live == false)
        #expect(activity.duration == nil)
        #expect(activity.liveEdge == nil)
        #expect(activity.subtitles.isEmpty)
    }

    @Test("an activity with its source, length and live edge is kept across a restart as it was")
    func activityRoundTrips() throws {
        let link = try #require(MediaURL("https://www.youtube.com/live/jfKfPfyJRdk?t=5"))
        let activity = Activity(id: "a3", url: link, title: "Radio", identifier: "youtube:jfKfPfyJRdk",
                                source: .youtube(id: "jfKfPfyJRdk", start: MediaTime(seconds: 5), live: true), live: true,
                                liveEdge: LiveEdge(position: MediaTime(seconds: 7200.5), at: ServerInstant(milliseconds: 1_700_000_000_000)))
        let again = try JSONDecoder().decode(Activity.self, from: JSONEncoder().encode(activity))
        #expect(again == activity)
        let damaged = #"{"id":"a1","url":"https://youtu.be/x","title":"A","identifier":"youtube:x","source":{"kind":"youtube","id":"x"}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Activity.self, from: Data(damaged.utf8)) }
    }
}

@Suite("/duration: the item's length, and seeking within it")
struct RuleDurationTests {
    @Test("the first report of the item's length sets its duration and publishes it, cause media; later ones change nothing")
    func firstReportCounts() throws {
        var room = Scenario.twoPlayers()
        let item = room.state.seq
        room.say("bob", "/duration \(item) 60")
        let published = try #require(room.published.first)
        #expect(published.session?.activity.duration == MediaTime(seconds: 60))
        #expect(published.session?.activity.live == false)
        #expect(published.playback.cause == .media)
        #expect(published.playback.by == room.id("bob"))
        #expect(published.playback.status == .paused)
        room.say("alice", "/duration \(room.state.seq) 61")
        #expect(room.published.isEmpty)
        #expect(room.state.session?.activity.duration == MediaTime(seconds: 60))
    }

    @Test("a report for the previous item, or for a state not yet sent, is stale and changes nothing")
    func staleReports() {
        var room = Scenario.twoPlayers()
        let oldItem = room.state.seq
        room.say("alice", "/watch https://example.org/b.mp4 B")
        room.say("bob", "/duration \(oldItem) 60")
        room.expectRefused("bob", .staleReport)
        #expect(room.published.isEmpty)
        room.say("bob", "/duration \(room.state.seq + 1) 60")
        room.expectRefused("bob", .staleReport)
        #expect(room.state.session?.activity.duration == nil)
    }

    @Test("a report for the item after a seek within it still counts")
    func reportAfterSeekCounts() {
        var room = Scenario.twoPlayers()
        let item = room.state.seq
        room.say("alice", "/seek 20")
        room.say("bob", "/duration \(item) 60")
        #expect(room.state.session?.activity.duration == MediaTime(seconds: 60))
    }

    @Test("only player connections report the length")
    func onlyPlayers() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("alice", "/duration \(room.state.seq) 60")
        room.expectRefused("alice", .notAPlayer)
        #expect(room.state.session?.activity.duration == nil)
    }

    @Test("/seek past a known length is refused in words; up to its end is taken")
    func seekPastTheEnd() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("bob", "/duration \(room.state.seq) 60")
        room.say("alice", "/seek 2:00:00")
        room.expectRefused("alice", .notPossible)
        #expect(room.error(for: "alice")?.message == "/seek: 2:00:00 is past the end of \"Episode 1\", which lasts 0:01:00")
        #expect(room.published.isEmpty)
        room.say("alice", "/seek +61")
        room.expectRefused("alice", .notPossible)
        room.say("alice", "/resume at 1:01")
        room.expectRefused("alice", .notPossible)
        room.say("alice", "/seek 1:00")
        #expect(room.playback.position.seconds == 60)
    }

    @Test("/seek of an item whose length no player reported yet is taken")
    func seekUnknownLength() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/seek 2:00:00")
        #expect(room.playback.position.seconds == 7200)
    }

    @Test("a link's starting time past the reported end holds the item at its end")
    func startPastTheEnd() {
        var room = sharing("https://youtu.be/dQw4w9WgXcQ?t=500", "alice", players: ["alice"])
        room.say("alice", "/duration \(room.state.seq) 212")
        room.expectPlayback(.paused, position: 212, cause: .media)
    }

    @Test("the state carries source, live and duration in JSON, and the length in the text line")
    func encodings() throws {
        var room = sharing("https://youtu.be/dQw4w9WgXcQ", "alice", players: ["alice"])
        let before = String(decoding: JSONEventEncoding.encode(.state(room.state)), as: UTF8.self)
        #expect(before.contains(#""identifier":"youtube:dQw4w9WgXcQ","source":{"kind":"youtube","id":"dQw4w9WgXcQ"},"live":false,"duration":null"#))
        #expect(TextEventEncoding.lines(.state(room.state)) == ["= paused \"Clip\" at 0:00:00, rate 1"])
        room.say("alice", "/duration \(room.state.seq) 212.5")
        let after = String(decoding: JSONEventEncoding.encode(.state(room.state)), as: UTF8.self)
        #expect(after.contains(#""live":false,"duration":212.5"#))
        #expect(after.contains(#""cause":"media""#))
        #expect(TextEventEncoding.lines(.state(room.state)) == ["= paused \"Clip\" at 0:00:00 of 0:03:32, rate 1"])
        let file = Scenario.sharing("bob")
        let json = String(decoding: JSONEventEncoding.encode(.state(file.state)), as: UTF8.self)
        #expect(json.contains(#""source":{"kind":"file"},"live":false,"duration":null"#))
    }
}

@Suite("Live streams: the room follows the live edge together")
struct RuleLiveTests {
    /// alice (host) and bob, players, sharing a YouTube video a player then reports live.
    static func live(edge: Double = 7200) -> Scenario {
        var room = sharing("https://www.youtube.com/watch?v=jfKfPfyJRdk", "alice", "bob", players: ["alice", "bob"])
        room.say("bob", "/duration \(room.state.seq) live \(NumberText.decimal(edge, places: 3))")
        return room
    }

    @Test("the first live report of an item not yet playing moves its held position to the edge, cause media, and says so")
    func firstLiveReportMovesToTheEdge() throws {
        let room = Self.live()
        let published = try #require(room.published.first)
        #expect(published.session?.activity.live == true)
        #expect(published.session?.activity.duration == nil)
        #expect(published.playback.status == .paused)
        #expect(published.playback.position.seconds == 7200)
        #expect(published.playback.cause == .media)
        #expect(room.notices.map(\.text) == ["\"Clip\" is a live stream: everyone follows its live edge; /pause holds it and /play rejoins the edge"])
        #expect(TextEventEncoding.lines(.state(room.state)) == ["= paused \"Clip\" (live) at 2:00:00, rate 1"])
        let json = String(decoding: JSONEventEncoding.encode(.state(room.state)), as: UTF8.self)
        #expect(json.contains(#""live":true,"duration":null"#))
        #expect(!json.contains("liveEdge"))
    }

    @Test("a live report while the group waits to start moves the start to the edge, and players ready again there")
    func liveReportWhileWaiting() {
        var room = sharing("https://www.youtube.com/watch?v=jfKfPfyJRdk", "alice", "bob", players: ["alice", "bob"])
        room.say("alice", "/play")
        room.say("alice", "/ready \(room.state.seq)")
        room.say("bob", "/duration \(room.state.seq) live 500")
        room.expectPlayback(.waiting, position: 500)
        #expect(room.participant("alice")?.ready == false)
        room.everyoneReady()
        room.expectPlayback(.playing, position: 500)
    }

    @Test("/play restarts everyone at the live edge: the reported edge plus the time since, at rate 1, together")
    func playRejoinsTheEdge() {
        var room = Self.live(edge: 7200)
        room.advance(seconds: 30)
        room.say("alice", "/play")
        room.expectPlayback(.waiting, position: 7230)
        #expect(room.playback.rate == .normal)
        room.everyoneReady()
        #expect(room.playback.status == .playing)
        room.watchFor(seconds: 60)
        room.say("alice", "/pause")
        room.expectPlayback(.paused, position: 7290)
        // Paused for ten minutes, the group comes back at the edge, not where it paused.
        room.advance(seconds: 600)
        room.say("bob", "/play now")
        #expect(room.playback.status == .playing)
        #expect(abs(room.playback.position.seconds - (7200 + 30 + 0.15 + 60 + 600)) < 0.001)
        #expect(room.notices.first?.text.contains("at the live edge") == true)
    }

    @Test("/seek, /rate, /resume at and /catchup are refused in words for a live stream; /pause holds")
    func timelineCommandsRefused() {
        var room = Self.live()
        room.playTogether(by: "alice")
        room.watchFor(seconds: 5)
        let before = room.state
        room.say("alice", "/seek 10")
        room.expectRefused("alice", .notPossible)
        #expect(room.error(for: "alice")?.message == "/seek: a live stream has no timeline to seek in; /play rejoins the live edge")
        room.say("alice", "/seek -30")
        room.expectRefused("alice", .notPossible)
        room.say("alice", "/rate 1.5")
        #expect(room.error(for: "alice")?.message == "/rate: a live stream plays at rate 1, as fast as it is made; /play rejoins the live edge")
        room.say("alice", "/resume at 10")
        room.expectRefused("alice", .notPossible)
        room.say("bob", "/catchup")
        room.expectRefused("bob", .notPossible)
        #expect(room.state == before)
        let held = room.position
        room.say("bob", "/pause")
        #expect(room.playback.status == .paused)
        #expect(room.playback.position.seconds == held)
    }

    @Test("a live report sets the rate to 1: a stream cannot be watched faster than it is made")
    func liveReportSetsRateOne() {
        var room = sharing("https://www.youtube.com/watch?v=jfKfPfyJRdk", "alice", "bob", players: ["alice", "bob"])
        room.say("alice", "/rate 2")
        room.say("bob", "/duration \(room.state.seq) live 100")
        #expect(room.playback.rate == .normal)
    }

    @Test("a /live/ link is live from the start: seeking is refused before any report, and the report gives the edge")
    func liveLink() {
        var room = sharing("https://www.youtube.com/live/jfKfPfyJRdk", "alice", "bob", players: ["alice", "bob"])
        #expect(room.state.session?.activity.live == true)
        room.say("alice", "/seek 10")
        room.expectRefused("alice", .notPossible)
        room.say("bob", "/duration \(room.state.seq) live 300")
        #expect(room.playback.position.seconds == 300)
        #expect(room.state.session?.activity.live == true)
    }

    @Test("a /live/ link whose stream has ended plays as a video once a player reports its length")
    func endedLiveLink() {
        var room = sharing("https://www.youtube.com/live/jfKfPfyJRdk", "alice", "bob", players: ["alice", "bob"])
        room.say("bob", "/duration \(room.state.seq) 5400")
        #expect(room.state.session?.activity.live == false)
        room.say("alice", "/seek 10")
        #expect(room.playback.position.seconds == 10)
    }

    @Test("the next item is not live: a new item starts clean")
    func newItemStartsClean() {
        var room = Self.live()
        room.say("alice", "/watch https://example.org/b.mp4 B")
        #expect(room.state.session?.activity.live == false)
        #expect(room.state.session?.activity.liveEdge == nil)
        room.say("alice", "/seek 10")
        #expect(room.playback.position.seconds == 10)
    }
}
