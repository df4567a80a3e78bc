import CowatchCore
import SlashCommands
import Testing

@Suite("Rule 6 (docs/concepts.md): stall policy")
struct RuleStallPolicyTests {
    static func playingTenSeconds(stall: String) -> Scenario {
        var room = Scenario.twoPlayers()
        room.say("alice", "/policy stall \(stall)")
        room.playTogether(by: "alice")
        room.watchFor(seconds: 10)
        return room
    }

    /// Under stall wait, ten seconds in: bob stalled and alice reported ready, so
    /// the group waits for bob alone.
    static func waitingForTheStaller() -> Scenario {
        var room = playingTenSeconds(stall: "wait")
        room.say("bob", "/buffering")
        room.say("alice", "/ready \(room.state.seq)")
        return room
    }

    @Test("a stalled member is suspended alone under stall continue and the group plays on")
    func continueSuspendsTheStallerAlone() {
        var room = Self.playingTenSeconds(stall: "continue")
        let before = room.state
        room.say("bob", "/buffering")
        #expect(room.participant("bob")?.suspensions == [.stallRecovery])
        #expect(room.announced("bob", .suspended(.stallRecovery)))
        #expect(room.published.isEmpty)
        #expect(room.state == before)
        #expect(room.participant("alice")?.suspensions == [])
    }

    @Test("stall continue is the default policy")
    func continueIsTheDefault() {
        var room = Scenario.twoPlayers()
        #expect(room.state.policy.stall == .continue)
        room.playTogether(by: "alice")
        room.say("bob", "/buffering")
        #expect(room.playback.status == .playing)
    }

    @Test("under stall continue the staller rejoins at group time when it reports ready")
    func continueStallerRejoins() {
        var room = Self.playingTenSeconds(stall: "continue")
        room.say("bob", "/buffering")
        room.advance(seconds: 2)
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.participant("bob")?.suspensions == [])
        #expect(room.announced("bob", .resumed(.stallRecovery)))
        #expect(room.handedState(to: "bob") == room.state)
        #expect(room.playback.status == .playing)
    }

    @Test("a second stall report while recovering changes nothing")
    func repeatedStallIsQuiet() {
        var room = Self.playingTenSeconds(stall: "continue")
        room.say("bob", "/buffering", "/buffering")
        #expect(room.last.isEmpty)
        #expect(room.participant("bob")?.suspensions == [.stallRecovery])
    }

    @Test("under stall wait a stalled player makes the playing group wait at its position")
    func waitMakesTheGroupWait() {
        var room = Self.playingTenSeconds(stall: "wait")
        room.expectNewState(when: "bob", says: "/buffering")
        room.expectPlayback(.waiting, position: 10, cause: .stall, by: "bob")
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("under stall wait the group plays again once the staller and the others are ready")
    func waitEndsWhenTheStallerIsReady() {
        var room = Self.waitingForTheStaller()
        room.advance(seconds: 3)
        #expect(room.playback.status == .waiting)
        room.say("bob", "/ready \(room.state.seq)")
        room.expectPlayback(.playing, position: 10, anchor: room.now.advanced(by: Scenario.minimumLead))
    }

    @Test("under stall wait a staller who does not recover is left behind at the wait limit")
    func waitGivesUpAtTheLimit() {
        var room = Self.waitingForTheStaller()
        room.advance(seconds: 5)
        #expect(room.playback.status == .playing)
        #expect(room.participant("bob")?.suspensions == [.stallRecovery])
    }

    @Test("under stall wait a suspended member still stalls only itself")
    func waitSuspendedStallsAlone() {
        var room = Self.playingTenSeconds(stall: "wait")
        room.say("bob", "/suspend", "/buffering")
        #expect(room.playback.status == .playing)
        #expect(room.participant("bob")?.suspensions == [.userActionRequired, .stallRecovery])
    }

    @Test("under stall wait a player that stalls after reporting ready is waited for again")
    func waitStallWhileWaitingUndoesReadiness() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/policy stall wait", "/play")
        room.say("bob", "/ready \(room.state.seq)", "/buffering")
        #expect(room.participant("bob")?.ready == false)
        #expect(room.announced("bob", .stalled))
        room.say("alice", "/ready \(room.state.seq)")
        #expect(room.playback.status == .waiting)
    }
}
