import CowatchCore
import SlashCommands
import Testing

@Suite("Coordinated start (CONCEPTS rule 2)")
struct CoordinatedStartTests {
    static func roomWithTwoPlayers() -> Scenario {
        var room = Scenario()
        room.connect("alice", player: true)
        room.connect("bob", player: true)
        room.say("alice", "/watch https://example.org/a.mp4 Episode 1")
        return room
    }

    @Test("/play waits until every player reports ready, then plays with a start in the near future")
    func playWaitsForEveryone() {
        var room = Self.roomWithTwoPlayers()
        room.say("alice", "/play")
        #expect(room.playback.status == .waiting)
        let waitingSeq = room.state.seq
        room.say("alice", "/ready \(waitingSeq)")
        #expect(room.playback.status == .waiting)
        room.say("bob", "/ready \(waitingSeq)")
        #expect(room.playback.status == .playing)
        #expect(room.playback.at > room.now)
        #expect(room.playback.at.interval(since: room.now) <= ServerInterval(milliseconds: 1000))
        #expect(room.playback.cause == .play)
        #expect(room.playback.by == room.id("alice"))
    }
}
