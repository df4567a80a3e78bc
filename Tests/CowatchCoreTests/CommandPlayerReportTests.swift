import CowatchCore
import SlashCommands
import Testing

@Suite("/player")
struct CommandPlayerTests {
    @Test("/player on makes the connection a player, tells everyone and hands it the state")
    func playerOn() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/player on")
        #expect(room.participant("bob")?.player == true)
        #expect(room.announced("bob", .player))
        #expect(room.handedState(to: "bob") == room.state)
        room.say("alice", "/play")
        #expect(room.playback.status == .waiting)
    }

    @Test("player=1 on connect is the same as /player on")
    func playerOnConnect() {
        var room = Scenario.sharing("alice")
        room.connect("bob", player: true)
        #expect(room.participant("bob")?.player == true)
    }

    @Test("a waiting room counts the players it still waits for, which its text lines say")
    func playersAwaited() {
        var room = Scenario.twoPlayers()
        #expect(room.room.playersAwaited == 0)
        room.say("alice", "/play")
        #expect(room.room.playersAwaited == 2)
        room.say("alice", "/ready \(room.state.seq)")
        #expect(room.room.playersAwaited == 1)
        room.expectStartsOnceReady("bob")
        #expect(room.room.playersAwaited == 0)
    }

    @Test("/player off stops the group waiting for that connection")
    func playerOff() {
        var room = Scenario.twoPlayersWaitingForBob()
        room.say("bob", "/player off")
        #expect(room.participant("bob")?.player == false)
        #expect(room.playback.status == .playing)
    }

    @Test("/player off of the last player of a waiting group pauses it where it was")
    func lastPlayerOff() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("alice", "/seek 15", "/play")
        room.say("bob", "/player off")
        room.expectPlayback(.paused, position: 15)
    }

    @Test("/player to the current setting only tells the sender")
    func playerSame() {
        Scenario.expectOnlyTold("alice", after: "/player on", in: .sharing("alice", players: ["alice"]))
    }

    @Test("/player with anything but on or off is refused with bad arguments and the usage")
    func playerBadArguments() {
        Scenario.expectBadArguments("/player", usage: "usage: /player on|off")
    }
}

@Suite("/ready")
struct CommandReadyTests {
    @Test("/ready from a connection that is not a player is refused with not-a-player")
    func readyNotAPlayer() {
        var room = Scenario.sharing("alice", "bob", players: ["alice"])
        room.say("alice", "/play")
        room.say("bob", "/ready \(room.state.seq)")
        room.expectRefused("bob", .notAPlayer)
        #expect(room.playback.status == .waiting)
    }

    @Test("/ready marks the player ready and tells everyone")
    func readyAnnounced() {
        var room = Scenario.twoPlayersWaiting()
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.participant("bob")?.ready == true)
        #expect(room.announced("bob", .ready))
        #expect(room.events(for: "alice").count == 1)
    }

    @Test("past announce-ready-up-to players, /ready marks the player ready without telling everyone, and the start still comes")
    func readyQuietInABigRoom() {
        var configuration = RoomConfiguration()
        configuration.readinessAnnouncedUpTo = 2
        var room = Scenario.sharing("alice", "bob", "carol", players: ["alice", "bob", "carol"],
                                    configuration: configuration)
        room.say("alice", "/play")
        #expect(room.playback.status == .waiting)
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.participant("bob")?.ready == true)
        #expect(!room.announced("bob", .ready))
        #expect(room.events(for: "alice").isEmpty)
        room.say("alice", "/ready \(room.state.seq)")
        #expect(!room.announced("alice", .ready))
        room.expectStartsOnceReady("carol")

        // With one player fewer the room is small enough to be told again.
        room.say("carol", "/player off")
        room.say("alice", "/seek 20")
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.announced("bob", .ready))
    }

    @Test("/ready while paused marks the player ready for the held position")
    func readyWhilePaused() {
        var room = Scenario.twoPlayers()
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.participant("bob")?.ready == true)
        #expect(room.playback.status == .paused)
    }

    @Test("/ready from a player outside the session changes nothing")
    func readyOutsideTheSession() {
        var room = Scenario.twoPlayers()
        room.expectIgnoredOutsideTheSession("bob", "/ready {seq}")
    }

    @Test("/ready without a whole number is refused with bad arguments and the usage")
    func readyBadArguments() {
        Scenario.expectBadArguments("/ready", "/ready abc", "/ready -1", "/ready 1.5", usage: "usage: /ready <seq>",
                                    in: .sharing("alice", players: ["alice"]))
    }
}

@Suite("/buffering")
struct CommandBufferingTests {
    @Test("/buffering from a connection that is not a player is refused with not-a-player")
    func bufferingNotAPlayer() {
        var room = Scenario.sharing("alice", "bob", players: ["alice"])
        room.playTogether(by: "alice")
        room.say("bob", "/buffering")
        room.expectRefused("bob", .notAPlayer)
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/buffering while paused under stall continue suspends the staller until ready")
    func bufferingWhilePaused() {
        var room = Scenario.twoPlayers()
        room.say("bob", "/buffering")
        #expect(room.participant("bob")?.suspensions == [.stallRecovery])
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/buffering from a player outside the session changes nothing")
    func bufferingOutsideTheSession() {
        var room = Scenario.twoPlayersPlaying()
        room.expectIgnoredOutsideTheSession("bob", "/buffering")
    }

    @Test("/buffering takes no arguments")
    func bufferingBadArguments() {
        Scenario.expectBadArguments("/buffering 3", usage: "usage: /buffering",
                                    in: .sharing("alice", players: ["alice"]))
    }
}

@Suite("/ended")
struct CommandEndedTests {
    @Test("/ended for the playing item pauses the group where it is, naming the reporter")
    func endedPauses() {
        var room = Scenario.twoPlayersPlaying(for: 42)
        room.say("bob", "/ended \(room.state.seq)")
        room.expectPlayback(.paused, position: 42, cause: .ended, by: "bob")
        #expect(room.notices.contains { $0.cause == .ended && $0.text.contains("Episode 1") })
    }

    @Test("a second /ended after the group paused changes nothing")
    func endedTwice() {
        var room = Scenario.twoPlayersPlaying()
        let seq = room.state.seq
        room.say("alice", "/ended \(seq)")
        let paused = room.state
        room.say("bob", "/ended \(seq)")
        #expect(room.state == paused)
    }

    @Test("/ended while waiting changes nothing")
    func endedWhileWaiting() {
        var room = Scenario.twoPlayersWaiting()
        room.expectUnchanged(when: "bob", says: "/ended \(room.state.seq)")
    }

    @Test("/ended from a connection that is not a player is refused with not-a-player")
    func endedNotAPlayer() {
        var room = Scenario.sharing("alice", "bob", players: ["alice"])
        room.playTogether(by: "alice")
        room.say("bob", "/ended \(room.state.seq)")
        room.expectRefused("bob", .notAPlayer)
        #expect(room.playback.status == .playing)
    }

    @Test("/ended from a player outside the session changes nothing")
    func endedOutsideTheSession() {
        var room = Scenario.twoPlayersPlaying()
        room.expectIgnoredOutsideTheSession("bob", "/ended {seq}")
        #expect(room.playback.status == .playing)
    }

    @Test("/ended without a whole number is refused with bad arguments and the usage")
    func endedBadArguments() {
        Scenario.expectBadArguments("/ended last", usage: "usage: /ended <seq>",
                                    in: .sharing("alice", players: ["alice"]))
    }
}
