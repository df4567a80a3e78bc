import CowatchCore
import SlashCommands
import Testing

@Suite("Rule 1 (docs/concepts.md): one authority, one sequence of states")
struct RuleAuthorityTests {
    @Test("every member sees the same sequence of states with seq strictly increasing")
    func everyoneSeesTheSameSequence() {
        var room = Scenario.sharing("alice", "bob", "carol", players: ["alice", "bob"])
        room.playTogether(by: "alice")
        room.watchFor(seconds: 3)
        room.say("bob", "/pause")
        room.say("carol", "/seek 30")
        room.say("alice", "/rate 1.5")
        room.say("bob", "/queue https://example.org/b.mp4 Episode 2")
        room.playTogether(by: "carol")

        let alice = room.states(receivedBy: "alice")
        let seqs = alice.map(\.seq)
        #expect(seqs.count == 10)
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 })
        #expect(room.states(receivedBy: "bob") == alice)
        #expect(room.states(receivedBy: "carol") == alice)
        #expect(alice.last == room.state)
    }

    @Test("each change is published once, with the next seq, to every member")
    func eachChangeIsOneBroadcast() {
        var room = Scenario.twoPlayers()
        let before = room.state.seq
        room.say("bob", "/seek 12")
        #expect(room.published.count == 1)
        #expect(room.published.first?.seq == before + 1)
        #expect(room.events(for: "alice").contains(.state(room.state)))
        #expect(room.events(for: "bob").contains(.state(room.state)))
    }

    @Test("a refused command publishes no state and leaves the seq alone")
    func refusalsPublishNothing() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/policy control hosts")
        let before = room.state
        room.say("bob", "/play")
        room.expectRefused("bob", .forbidden)
        #expect(room.published.isEmpty)
        #expect(room.state == before)
    }

    @Test("a state handed to one member repeats the current seq and never goes back")
    func handedStatesRepeatTheCurrentSeq() {
        var room = Scenario.twoPlayersPlayingBobSuspended()
        room.watchFor(seconds: 4)
        room.say("bob", "/resume")
        #expect(room.handedState(to: "bob") == room.state)
        let seqs = room.states(receivedBy: "bob").map(\.seq)
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test("who caused a state is named in by and cause for everyone")
    func byAndCauseNameTheOrigin() {
        var room = Scenario.twoPlayers()
        room.say("bob", "/seek 1:00")
        room.expectPlayback(cause: .seek, by: "bob")
        #expect(room.notices.contains { $0.cause == .seek && $0.by == room.id("bob") })
    }
}
