import CowatchCore
import SlashCommands
import Testing

@Suite("Rule 10 (docs/concepts.md): leaving and ending")
struct RuleLeavingTests {
    @Test("a member who leaves stops counting for coordination and the group state does not change")
    func leavingChangesNoState() {
        var room = Scenario.twoPlayersPlaying()
        let before = room.state
        room.say("bob", "/leave")
        #expect(room.participant("bob")?.joined == false)
        #expect(room.announced("bob", .leftSession))
        #expect(room.published.isEmpty)
        #expect(room.state == before)
        room.say("alice", "/seek 40")
        room.expectStartsOnceReady("alice")
    }

    @Test("a member who left stays in the room and its chat")
    func leaverKeepsChatting() {
        var room = Scenario.twoPlayers()
        room.say("bob", "/leave", "still here")
        #expect(room.chats(for: "alice").map(\.text) == ["still here"])
        room.say("alice", "hi bob")
        #expect(room.chats(for: "bob").map(\.text) == ["hi bob"])
    }

    @Test("a waiting group whose last player leaves pauses where it was")
    func lastPlayerLeavingAWaitingGroupPauses() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("alice", "/seek 20", "/play")
        #expect(room.playback.status == .waiting)
        room.say("bob", "/leave")
        room.expectPlayback(.paused, position: 20, cause: .leave)
        #expect(room.playback.by == nil)
        #expect(room.armedWaitLimits.isEmpty)
    }

    @Test("a playing group whose last player leaves keeps playing")
    func lastPlayerLeavingAPlayingGroupChangesNothing() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.playTogether(by: "alice")
        room.expectUnchanged(when: "bob", says: "/leave")
        #expect(room.playback.status == .playing)
    }

    @Test("a waiting group whose only straggler leaves starts with the players who are ready")
    func stragglerLeavingStartsTheGroup() {
        var room = Scenario.twoPlayersWaitingForBob()
        room.say("bob", "/leave")
        room.expectPlayback(.playing, cause: .play, by: "alice")
    }

    @Test("/end invalidates the session for everyone")
    func endInvalidatesForEveryone() {
        var room = Scenario.sharing("alice", "bob", "carol", players: ["alice", "bob"])
        room.playTogether(by: "alice")
        room.say("carol", "/suspend")
        room.say("bob", "/end")
        #expect(room.state.session?.state == .invalidated)
        #expect(room.state.session?.reason == "ended")
        #expect(room.playback.status == .idle)
        #expect(room.playback.item == nil)
        room.expectPlayback(cause: .end, by: "bob")
        #expect(room.room.participants.allSatisfy { !$0.joined && $0.suspensions.isEmpty })
        for name in ["alice", "bob", "carol"] {
            #expect(room.events(for: name).contains(.state(room.state)))
        }
    }

    @Test("after /end nobody is in a session until a new /watch starts one")
    func endThenWatchStartsAgain() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/end")
        room.say("bob", "/join")
        room.expectRefused("bob", .noSession)
        room.say("bob", "/watch https://example.org/b.mp4")
        #expect(room.state.session?.state == .joined)
        #expect(room.participant("alice")?.joined == true)
        #expect(room.participant("bob")?.joined == true)
        #expect(room.playback.status == .paused)
    }

    @Test("/end cancels a waiting start and every catch-up")
    func endCancelsTimers() {
        var room = Scenario.sharing("alice", "bob", "carol", players: ["alice", "bob"])
        room.playTogether(by: "alice")
        room.watchFor(seconds: 30)
        room.say("carol", "/catchup")
        room.say("alice", "/seek 10", "/end")
        #expect(room.armedWaitLimits.isEmpty)
        #expect(room.armedCatchupEnds.isEmpty)
        room.advance(seconds: 30)
        #expect(room.playback.status == .idle)
    }
}
