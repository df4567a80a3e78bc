import CowatchCore
import SlashCommands
import Testing

/// `Room.wouldChange`: what the gateway asks before it spends anything on a line.
@Suite("Trying a line on a copy of the room")
struct RoomTrialTests {
    static func line(_ text: String) -> InputLine {
        guard case .success(let line) = LineParser(maximumLineBytes: 4096).parse(text) else { return .empty }
        return line
    }

    @Test("a /watch the room would take changes it; one it refuses or ignores does not; the room is untouched")
    func wouldChange() {
        var room = Scenario.alone("alice")
        room.connect("bob")
        let watch = Self.line("/watch https://example.org/a.mp4 A")
        #expect(room.room.wouldChange(watch, from: room.id("bob"), now: room.now))
        #expect(room.room.state.session == nil, "the trial left the room as it was")
        room.say("alice", "/policy control hosts")
        #expect(!room.room.wouldChange(watch, from: room.id("bob"), now: room.now))
        #expect(room.room.wouldChange(watch, from: room.id("alice"), now: room.now))
        room.say("alice", "/watch https://example.org/a.mp4 A")
        #expect(!room.room.wouldChange(watch, from: room.id("alice"), now: room.now), "the same video again")
        room.say("alice", "/policy control everyone", "/mute bob")
        #expect(!room.room.wouldChange(Self.line("/queue https://example.org/b.mp4"), from: room.id("bob"), now: room.now))
    }

    @Test("with media-hosts, a link from another host would not change the room")
    func mediaHosts() {
        let room = Scenario.alone("alice") { $0.mediaHosts = ["media.example.org"] }
        #expect(!room.room.wouldChange(Self.line("/watch https://example.org/a.mp4"), from: room.id("alice"), now: room.now))
        #expect(room.room.wouldChange(Self.line("/watch https://media.example.org/a.mp4"), from: room.id("alice"), now: room.now))
    }
}
