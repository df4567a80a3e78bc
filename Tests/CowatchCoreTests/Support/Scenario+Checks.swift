import CowatchCore
import CowatchTime
import SlashCommands
import Testing

// Checks that many rule and command tests make in the same words: the group's
// playback after an input, and the refusal an input earned. Each checks only the
// parts it is given, and reports a failure at the test's line.

extension Scenario {
    /// The group's playback: its status, and each of position (in seconds), item,
    /// anchor (the instant the position holds at), cause, author and rate that is
    /// given.
    func expectPlayback(_ status: PlaybackStatus? = nil, position seconds: Double? = nil, item: String? = nil,
                        anchor: ServerInstant? = nil, cause: Cause? = nil, by name: String? = nil, rate: Double? = nil,
                        sourceLocation: SourceLocation = #_sourceLocation) {
        if let status { #expect(playback.status == status, sourceLocation: sourceLocation) }
        if let seconds { #expect(playback.position.seconds == seconds, sourceLocation: sourceLocation) }
        if let item { #expect(playback.item == item, sourceLocation: sourceLocation) }
        if let anchor { #expect(playback.at == anchor, sourceLocation: sourceLocation) }
        if let cause { #expect(playback.cause == cause, sourceLocation: sourceLocation) }
        if let name { #expect(playback.by == id(name), sourceLocation: sourceLocation) }
        if let rate { #expect(playback.rate.value == rate, sourceLocation: sourceLocation) }
    }

    /// The last input refused `name` with `code`; where given, naming `command` and
    /// with a message that contains `fragment`.
    func expectRefused(_ name: String, _ code: ErrorCode, command: CommandName? = nil, saying fragment: String? = nil,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        let error = error(for: name)
        #expect(error?.code == code, sourceLocation: sourceLocation)
        if let command { #expect(error?.command == command, sourceLocation: sourceLocation) }
        if let fragment { #expect(error?.message.contains(fragment) == true, sourceLocation: sourceLocation) }
    }
}

// MARK: - Refusals that many commands share

extension Scenario {
    /// `line` from the only member of a room that has no session is refused with
    /// no-session.
    static func expectRefusedWithoutSession(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var room = Scenario()
        room.connect("alice")
        room.say("alice", line)
        room.expectRefused("alice", .noSession, sourceLocation: sourceLocation)
    }

    /// `name` leaves the session, then says `line`: refused with no-session.
    mutating func expectRefusedOutsideTheSession(_ name: String, _ line: String,
                                                 sourceLocation: SourceLocation = #_sourceLocation) {
        say(name, "/leave")
        say(name, line)
        expectRefused(name, .noSession, sourceLocation: sourceLocation)
    }

    /// `name` says `line`, which leaves the room's state as it was.
    mutating func expectUnchanged(when name: String, says line: String,
                                  sourceLocation: SourceLocation = #_sourceLocation) {
        let before = state
        say(name, line)
        #expect(state == before, sourceLocation: sourceLocation)
    }

    /// `name` says `line`, which publishes one new state: the seq grows by one.
    mutating func expectNewState(when name: String, says line: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
        let before = state.seq
        say(name, line)
        #expect(state.seq == before + 1, sourceLocation: sourceLocation)
    }

    /// Each of `names`, in turn, reports ready for the seq of the current wait:
    /// the group waits until the last of them, then plays.
    mutating func expectStartsOnceReady(_ names: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        let seq = state.seq
        for (index, name) in names.enumerated() {
            say(name, "/ready \(seq)")
            #expect(playback.status == (index == names.count - 1 ? .playing : .waiting), sourceLocation: sourceLocation)
        }
    }

    /// In `twoPlayers`, after bob says `line`, alice's `/play` and her `/ready`
    /// start the group: bob is not waited for.
    static func expectBobNotWaitedFor(after line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var room = twoPlayers()
        room.say("bob", line)
        room.say("alice", "/play")
        room.expectStartsOnceReady("alice", sourceLocation: sourceLocation)
    }

    /// `name` leaves the session, then says `line` (`{seq}` in it stands for the
    /// room's seq when it is said): nothing happens, not even a reply.
    mutating func expectIgnoredOutsideTheSession(_ name: String, _ line: String,
                                                 sourceLocation: SourceLocation = #_sourceLocation) {
        say(name, "/leave")
        say(name, line.replacing("{seq}", with: "\(state.seq)"))
        #expect(last.isEmpty, sourceLocation: sourceLocation)
    }

    /// `host` gives control to hosts, then `name`, a member, says `line`: refused
    /// with forbidden.
    mutating func expectForbiddenUnderControlHosts(_ name: String, _ line: String, host: String = "alice",
                                                   sourceLocation: SourceLocation = #_sourceLocation) {
        say(host, "/policy control hosts")
        say(name, line)
        expectRefused(name, .forbidden, sourceLocation: sourceLocation)
    }

    /// In a room of alice (the host), bob and carol: `line` from carol after she
    /// left is refused with no-session, from bob while suspended with suspended,
    /// and from bob, resumed, under control hosts with forbidden.
    mutating func expectRefusedOutsideSuspendedAndForbidden(_ line: String,
                                                            sourceLocation: SourceLocation = #_sourceLocation) {
        expectRefusedOutsideTheSession("carol", line, sourceLocation: sourceLocation)
        say("bob", "/suspend")
        say("bob", line)
        expectRefused("bob", .suspended, sourceLocation: sourceLocation)
        say("bob", "/resume")
        expectForbiddenUnderControlHosts("bob", line, sourceLocation: sourceLocation)
    }

    /// Each of `lines` from `name` is refused with bad arguments and a message that
    /// contains `usage`, naming `command` where given.
    mutating func expectBadArguments(_ lines: String..., from name: String = "alice", command: CommandName? = nil,
                                     usage: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectEachBadArguments(lines, from: name, command: command, usage: usage, sourceLocation: sourceLocation)
    }

    /// `expectBadArguments` in `room` (by default one alice shares alone).
    static func expectBadArguments(_ lines: String..., from name: String = "alice", command: CommandName? = nil,
                                   usage: String, in room: Scenario = .sharing("alice"),
                                   sourceLocation: SourceLocation = #_sourceLocation) {
        var room = room
        room.expectEachBadArguments(lines, from: name, command: command, usage: usage, sourceLocation: sourceLocation)
    }

    private mutating func expectEachBadArguments(_ lines: [String], from name: String, command: CommandName?,
                                                 usage: String, sourceLocation: SourceLocation) {
        for line in lines {
            say(name, line)
            expectRefused(name, .badArguments, command: command, saying: usage, sourceLocation: sourceLocation)
        }
    }

    /// `name` says `line`, which changes nothing: `name` alone is told so, in one
    /// notice, and the room's state is as it was.
    mutating func expectOnlyTold(_ name: String, after line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let before = state
        say(name, line)
        #expect(told(name).count == 1, sourceLocation: sourceLocation)
        #expect(state == before, sourceLocation: sourceLocation)
    }

    /// `expectOnlyTold` in `room` (by default one alice shares alone).
    static func expectOnlyTold(_ name: String, after line: String, in room: Scenario = .sharing("alice"),
                               sourceLocation: SourceLocation = #_sourceLocation) {
        var room = room
        room.expectOnlyTold(name, after: line, sourceLocation: sourceLocation)
    }
}

// MARK: - Rooms the rules start from

extension Scenario {
    /// `name` alone, connected to a room with no session (whose configuration
    /// `configure` sets, where given).
    static func alone(_ name: String, configuration configure: (inout RoomConfiguration) -> Void = { _ in }) -> Scenario {
        var configuration = RoomConfiguration()
        configure(&configuration)
        var room = Scenario(configuration: configuration)
        room.connect(name)
        return room
    }

    /// alice (the host) and bob, both players, sharing "Episode 1", paused at 0.
    static func twoPlayers() -> Scenario {
        sharing("alice", "bob", players: ["alice", "bob"])
    }

    /// `twoPlayers` after alice's `/play`: the group waits for both.
    static func twoPlayersWaiting() -> Scenario {
        var room = twoPlayers()
        room.say("alice", "/play")
        return room
    }

    /// `twoPlayersWaiting` after alice's `/ready`: the group waits for bob alone.
    static func twoPlayersWaitingForBob() -> Scenario {
        var room = twoPlayersWaiting()
        room.say("alice", "/ready \(room.state.seq)")
        return room
    }

    /// `twoPlayers` after alice's `/play` and both ready: the group plays from a
    /// start instant a lead ahead, and has played for `seconds` since.
    static func twoPlayersPlaying(for seconds: Double = 0) -> Scenario {
        var room = twoPlayers()
        room.playTogether(by: "alice")
        if seconds > 0 { room.watchFor(seconds: seconds) }
        return room
    }

    /// `twoPlayersPlaying` with bob suspended (`/suspend`, for userActionRequired).
    static func twoPlayersPlayingBobSuspended() -> Scenario {
        var room = twoPlayersPlaying()
        room.say("bob", "/suspend")
        return room
    }
}
