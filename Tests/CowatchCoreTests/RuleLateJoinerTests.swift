import CowatchCore
import SlashCommands
import Testing

@Suite("Rule 7 (docs/concepts.md): late joiners adopt the group state")
struct RuleLateJoinerTests {
    @Test("a player who connects during playback is handed the group state and the group does not move")
    func connectingAdoptsTheState() {
        var room = Scenario.twoPlayersPlaying(for: 20)
        let before = room.state
        room.connect("dave", player: true)
        #expect(room.handedState(to: "dave") == before)
        #expect(room.published.isEmpty)
        #expect(room.state == before)
        #expect(room.participant("dave")?.joined == true)
        #expect(room.position == 20)
    }

    @Test("a member who joins with /join is handed the group state and the group does not move")
    func joiningAdoptsTheState() {
        var room = Scenario.twoPlayersPlaying(for: 20)
        room.connect("dave", player: true, join: false)
        #expect(room.participant("dave")?.joined == false)
        let before = room.state
        room.say("dave", "/join")
        #expect(room.participant("dave")?.joined == true)
        #expect(room.announced("dave", .joinedSession))
        #expect(room.handedState(to: "dave") == before)
        #expect(room.published.isEmpty)
        #expect(room.state == before)
    }

    @Test("a member who rejoins after /leave adopts where the group is now")
    func rejoiningAdoptsTheState() {
        var room = Scenario.twoPlayersPlaying(for: 20)
        room.say("bob", "/leave")
        room.say("alice", "/seek 2:00")
        room.everyoneReady()
        room.say("bob", "/join")
        #expect(room.handedState(to: "bob") == room.state)
        #expect(room.handedState(to: "bob")?.playback.position.seconds == 120)
    }

    @Test("a player who turns its player on mid-session is handed the state without moving the group")
    func playerOnAdoptsTheState() {
        var room = Scenario.sharing("alice", "bob", players: ["alice"])
        room.playTogether(by: "alice")
        let before = room.state
        room.say("bob", "/player on")
        #expect(room.handedState(to: "bob") == before)
        #expect(room.state == before)
    }

    @Test("a reconnecting member is handed the current state")
    func reconnectingAdoptsTheState() {
        var room = Scenario.twoPlayersPlaying(for: 20)
        room.disconnect("bob")
        room.advance(seconds: 10)
        room.reconnect("bob", player: true)
        #expect(room.handedState(to: "bob") == room.state)
        #expect(room.published.isEmpty)
    }
}
