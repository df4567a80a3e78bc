import CowatchTime
import Foundation
import SlashCommands
import Testing
@testable import CowatchCore

@Suite("Strings and numbers through the JSON encoding")
struct RoundTripEncodingTests {
    typealias F = EncodingFixture
    typealias J = WireJSON

    static let hostileStrings: [String] = [
        "plain", "", "\"quoted\"", "back\\slash", "\\u0041 is not A", "\\\"", "new\nline", "cr\rlf\r\n",
        "tab\there", "\u{0}\u{1}\u{7}\u{8}\u{B}\u{C}\u{1B}[2J\u{1F}", "del\u{7F}", "c1\u{85}\u{9B}",
        "\u{2028}line\u{2029}para", "é and e\u{0301}", "😀👩‍👩‍👧👋🏽", "李小龍 مرحبا", "\u{202E}evil\u{202C}",
        "mid\u{FEFF}dle", "</script><script>alert(1)</script>", "{\"type\":\"forged\"}", "/", "\u{10FFFF}",
        String(repeating: "\"\\", count: 500),
    ]

    @Test("strings with quotes, backslashes, controls and unicode round-trip exactly", arguments: hostileStrings)
    func stringsRoundTrip(_ text: String) throws {
        var chat = F.chat
        chat.text = text
        #expect(J.string(try J.object(.chat(chat))["text"]) == text)

        #expect(J.string(try J.object(.notice(Notice(text: text, cause: .pause, by: F.alice.id)))["text"]) == text)

        let error = CommandError(.badArguments, command: .me, message: text)
        #expect(J.string(try J.object(.error(error))["message"]) == text)

        var state = F.playing
        state.session?.activity.title = text
        state.queue[0].title = text
        let object = try J.object(.state(state))
        #expect(J.string(J.object(J.object(object["session"])?["activity"])?["title"]) == text)
        #expect(J.string(J.object(J.array(object["queue"])?.first)?["title"]) == text)

        let help = try J.object(.reply(.help(lines: [text, text])))
        #expect(J.array(help["lines"]) as? [String] == [text, text])

        let welcome = Welcome(you: F.alice, room: RoomName("lobby")!, serverTime: F.now, resume: text,
                              participants: [F.alice], chat: [])
        #expect(J.string(try J.object(.welcome(welcome))["resume"]) == text)
    }

    /// Foundation's JSONSerialization drops a U+FEFF at the start of a string value
    /// when reading, so this one is checked in the bytes.
    @Test("a leading U+FEFF is written as is")
    func leadingByteOrderMark() {
        var chat = F.chat
        chat.text = "\u{FEFF}bom"
        let bytes = JSONEventEncoding.encode(.chat(chat))
        let expected = Array("\"text\":\"\u{FEFF}bom\"".utf8)
        #expect(bytes.indices.contains { bytes[$0...].starts(with: expected) })
    }

    @Test("no raw control character reaches the JSON bytes", arguments: hostileStrings)
    func controlsAreEscaped(_ text: String) {
        var chat = F.chat
        chat.text = text
        #expect(!JSONEventEncoding.encode(.chat(chat)).contains { $0 < 0x20 })
    }

    /// Values `/time` accepts from a client, echoed in `client`.
    @Test("/time echoes the client's value as the parser read it",
          arguments: ["1700000000000", "1700000000000.125", "12.5", "-12.25", "0", "12345.678", "12345.678901",
                      "0.000001", "-0.5", "9999999999999999"])
    func timeEcho(_ typed: String) throws {
        guard case .success(.command(.time(let client))) = LineParser().parse("/time " + typed) else {
            return // A refusal is a fine answer; only an accepted value must be echoed.
        }
        let object = try J.object(.time(client: client, server: F.now))
        let echoed = try #require(J.number(object["client"]))
        let tolerance = Swift.max(client.magnitude * 4e-16, 1e-9)
        #expect((echoed - client).magnitude <= tolerance,
                "/time \(typed) was read as \(client) but echoed as \(J.text(.time(client: client, server: F.now)))")
    }
}

/// The `cowatch.v1.text` encoding: the contract's example lines.
@Suite("Text event encoding")
struct TextEncodingTests {
    typealias F = EncodingFixture

    @Test("chat reads <alice> hello, and /me reads *<alice> waves")
    func chat() {
        #expect(TextEventEncoding.lines(.chat(F.chat)) == ["<alice> hello"])
        #expect(TextEventEncoding.lines(.chat(F.me)) == ["*<alice> waves"])
    }

    @Test("a /me line never reads as a notice, whatever the name and text")
    func meIsNotANotice() throws {
        let name = try #require(DisplayName("alice made mallory"))
        let forged = ChatLine(from: F.alice.id, name: name, text: "a host", at: F.now, me: true)
        let notice = Notice(text: "alice made mallory a host", cause: .op, by: F.alice.id)
        #expect(TextEventEncoding.lines(.chat(forged)) == ["*<alice made mallory> a host"])
        #expect(TextEventEncoding.lines(.notice(notice)) == ["* alice made mallory a host"])
        let plain = ChatLine(from: F.alice.id, name: F.alice.name, text: "made mallory a host", at: F.now, me: true)
        #expect(TextEventEncoding.lines(.chat(plain)) == ["*<alice> made mallory a host"])
    }

    @Test("quotes and backslashes in titles are escaped where a line quotes them")
    func quotedTitles() {
        var state = F.playing(.paused, at: 5, rate: .normal)
        state.session?.activity.title = #"Say "hi" \o/"#
        #expect(TextEventEncoding.lines(.state(state)) == [#"= paused "Say \"hi\" \\o/" at 0:00:05, rate 1"#])
    }

    @Test("an unknown command reads ! unknown command /foo (try /help)")
    func unknownCommand() throws {
        guard case .failure(let error) = LineParser().parse("/foo") else {
            Issue.record("/foo parsed")
            return
        }
        #expect(TextEventEncoding.lines(.error(error)) == ["! unknown command /foo (try /help)"])
    }

    @Test("a playing state reads = playing \"Episode 1\" at 0:12:03, rate 1")
    func playingState() {
        let state = F.playing(.playing, at: 723, rate: .normal)
        #expect(TextEventEncoding.lines(.state(state)) == ["= playing \"Episode 1\" at 0:12:03, rate 1"])
    }

    @Test("a waiting state says for how many players, in words, and never the report players send")
    func waitingState() {
        let state = F.playing(.waiting, at: 723, rate: .normal)
        #expect(TextEventEncoding.lines(.state(state), awaited: 2) == ["= waiting for 2 players to be ready: \"Episode 1\" at 0:12:03, rate 1"])
        #expect(TextEventEncoding.lines(.state(state), awaited: 1) == ["= waiting for 1 player to be ready: \"Episode 1\" at 0:12:03, rate 1"])
        #expect(TextEventEncoding.lines(.state(state)) == ["= waiting for the players to be ready: \"Episode 1\" at 0:12:03, rate 1"])
        #expect(!TextEventEncoding.lines(.state(state), awaited: 2)[0].contains("/ready"))
    }

    @Test("a state past an hour reads h:mm:ss, with the rate without trailing zeros")
    func longState() {
        let state = F.playing(.paused, at: 3605)
        #expect(TextEventEncoding.lines(.state(state)) == ["= paused \"Episode 1\" at 1:00:05, rate 1.5"])
    }

    @Test("a playing state reads the position at the instant it is sent, not its anchor")
    func positionNow() {
        var state = F.playing(.playing, at: 60, rate: .normal)
        state.playback.at = F.now
        let sixSecondsLater = F.now.advanced(by: ServerInterval(milliseconds: 6_000))
        #expect(TextEventEncoding.lines(.state(state), now: sixSecondsLater) == ["= playing \"Episode 1\" at 0:01:06, rate 1"])
    }

    @Test("a state changed by /policy, /queue, /lock or /password prints no state line: its notice says it")
    func statesANoticeSays() {
        for cause in [Cause.policy, .queue, .lock, .password] {
            var state = F.ended
            state.playback.cause = cause
            #expect(TextEventEncoding.lines(.state(state)).isEmpty, "\(cause)")
        }
        #expect(TextEventEncoding.lines(.state(F.ended)) == ["= the session ended; /watch <url> starts a new one"])
    }

    @Test("the same state sent to one member alone (on arrival, after falling behind) is said: no notice comes with it")
    func addressedStatesAreSaid() {
        for cause in [Cause.policy, .queue, .lock, .password] {
            var state = F.playing
            state.playback.cause = cause
            #expect(TextEventEncoding.lines(.state(state), now: F.now, addressed: true).first?.hasPrefix("= playing \"Episode 1\"") == true,
                    "\(cause)")
        }
    }

    @Test("suspensions are said in words, the codes stay in the JSON")
    func suspensionsInWords() {
        var bob = F.bob
        bob.suspensions = [.userIsChangingCurrentTime]
        #expect(TextEventEncoding.lines(.participant(bob, change: .suspended(.userIsChangingCurrentTime))) == ["* bob is scrubbing"])
        #expect(TextEventEncoding.lines(.participant(bob, change: .suspended(.stallRecovery))) == ["* bob is buffering"])
        // A player that cannot play the item at all says what and what follows, not "cannot follow".
        #expect(TextEventEncoding.lines(.participant(bob, change: .suspended(.coordinatedPlaybackNotPossible)))
                == ["* bob cannot play this item in their player, so the room does not wait for them"])
        // The room page's own reasons (a page in the background, a pause just for one person).
        #expect(TextEventEncoding.lines(.participant(bob, change: .suspended(.away)))
                == ["* bob is away (their page is in the background)"])
        #expect(TextEventEncoding.lines(.participant(bob, change: .suspended(.pausedForMe))) == ["* bob paused just for themselves"])
        bob.suspensions = []
        #expect(TextEventEncoding.lines(.participant(bob, change: .resumed(nil))) == ["* bob rejoined the group"])
        #expect(WireJSON.text(.participant(F.bob, change: .suspended(.stallRecovery))).contains("stallRecovery"))
    }

    @Test("a catch-up says for how long, not a server time")
    func catchupInWords() {
        #expect(TextEventEncoding.lines(.catchup(F.catchup), now: F.now)
                == ["* catching up: replaying from 0:11:53 at 2x for 10 s, then back with the group"])
    }

    @Test("the welcome says how to come back with what the reader can type")
    func welcomeSaysHowToComeBack() {
        let lines = TextEventEncoding.lines(.welcome(F.welcome))
        #expect(lines.contains("* to come back as yourself: cowatch connect --resume tok-123 (or ?resume=tok-123 in the room's address)"))
    }

    @Test("one word per role, the page's: the owner is 'owner' (not 'host'), a host 'host', a member 'member'")
    func roleWords() {
        #expect(TextEventEncoding.lines(.welcome(F.founding)).first == "* welcome to lobby, alice (owner); 1 here: alice")
        var host = F.alice
        host.owner = false
        #expect(TextEventEncoding.replyLines(.who([F.alice, host, F.bob])).map { $0.split(separator: ";").first ?? "" }
                == ["= 3 here:", "=   alice (owner", "=   alice (host", "=   bob (member"])
    }

    @Test("the founder's welcome names the terminal's --owner flag beside the key")
    func welcomeNamesOwnerFlag() {
        let lines = TextEventEncoding.lines(.welcome(F.founding))
        #expect(lines.contains("* you created this room: your owner key is key-456 (shown once: keep it)"))
        #expect(lines.contains { $0.contains("cowatch connect <this room's address> --owner key-456") })
        #expect(!TextEventEncoding.lines(.welcome(F.welcome)).contains { $0.contains("--owner") })
    }

    @Test("a notice reads * followed by its text")
    func notice() {
        #expect(TextEventEncoding.lines(.notice(F.notice)) == ["* alice paused at 0:12:03"])
    }

    @Test("every event is written as lines without line breaks inside (none for a change a notice says with who did it, nor for who speaks)",
          arguments: EncodingFixture.events)
    func oneLineEach(_ event: RoomEvent) {
        let lines = TextEventEncoding.lines(event)
        let repeatedByANotice: Bool = switch event {
        case .participant(_, .role), .participant(_, .muted), .participant(_, .unmuted): true
        // Said when asked (/voice): a line for each breath would drown the chat.
        case .voice(let roster): roster.change == .speaking || roster.change == .quiet || roster.change == .mode
        default: false
        }
        #expect(lines.isEmpty == repeatedByANotice)
        for line in lines {
            #expect(!line.isEmpty)
            #expect(!line.contains("\n") && !line.contains("\r"), "\(line)")
        }
    }
}

/// Events taken from a real room, through both encodings.
@Suite("Encodings of a real room's events")
struct RoomEncodingTests {
    static let t0 = ServerInstant(milliseconds: 1_700_000_000_000)

    struct Refused: Error {}

    /// alice connects to `room` at t0 (token t1): her id and the actions of her
    /// connecting.
    static func aliceJoins(_ room: inout Room) throws -> (alice: MemberID, actions: [RoomAction]) {
        guard case .accepted(let alice, let actions) = room.connectionOpened(ConnectRequest(name: "alice", newToken: "t1"),
                                                                             now: t0)
        else { throw Refused() }
        return (alice, actions)
    }

    static func sentEvents(_ actions: [RoomAction]) -> [RoomEvent] {
        actions.compactMap { action in
            switch action {
            case .send(let event, _), .broadcast(let event, _): event
            default: nil
            }
        }
    }

    @Test("connecting sends welcome then the state: no session, item null")
    func connect() throws {
        var room = Room(name: RoomName("lobby")!, now: Self.t0)
        let (id, actions) = try Self.aliceJoins(&room)
        let events = Self.sentEvents(actions)
        #expect(events.map(\.type).prefix(2) == ["welcome", "state"])
        let welcome = try WireJSON.object(try #require(events.first))
        let you = try #require(WireJSON.object(welcome["you"]))
        #expect(WireJSON.string(you["id"]) == id.rawValue)
        #expect(WireJSON.string(you["name"]) == "alice")
        #expect(WireJSON.string(you["role"]) == "host")
        #expect(WireJSON.string(welcome["resume"]) == "t1")
        #expect(WireJSON.integer(welcome["serverTime"]) == Self.t0.milliseconds)
        let state = try WireJSON.object(events[1])
        #expect(WireJSON.isNull(state["session"]))
        #expect(WireJSON.isNull(WireJSON.object(state["playback"])?["item"]))
    }

    @Test("/watch, /play now, /pause: JSON state and the notice * alice paused at 0:12:03")
    func watchPlayPause() throws {
        var room = Room(name: RoomName("lobby")!, now: Self.t0)
        let (alice, _) = try Self.aliceJoins(&room)
        let url = MediaURL("https://example.org/ep1.mp4")!
        let watched = Self.sentEvents(room.receive(.command(.watch(url, title: "Episode 1")), from: alice, now: Self.t0))
        let watchState = try #require(watched.first { $0.type == "state" })
        let object = try WireJSON.object(watchState)
        let session = try #require(WireJSON.object(object["session"]))
        #expect(WireJSON.string(session["state"]) == "joined")
        #expect(WireJSON.string(WireJSON.object(session["activity"])?["url"]) == url.text)
        let playback = try #require(WireJSON.object(object["playback"]))
        #expect(WireJSON.string(playback["status"]) == "paused")
        #expect(WireJSON.string(playback["item"]) == WireJSON.string(WireJSON.object(session["activity"])?["identifier"]))
        #expect(WireJSON.string(playback["cause"]) == "watch")
        #expect(WireJSON.string(playback["by"]) == alice.rawValue)

        _ = room.receive(.command(.play(now: true)), from: alice, now: Self.t0)
        #expect(room.state.playback.status == .playing)
        let pauseTime = room.state.playback.at.advanced(by: ServerInterval(milliseconds: 723_000))
        let paused = Self.sentEvents(room.receive(.command(.pause), from: alice, now: pauseTime))
        let notice = try #require(paused.first { $0.type == "notice" })
        let noticeObject = try WireJSON.object(notice)
        #expect(WireJSON.string(noticeObject["cause"]) == "pause")
        #expect(WireJSON.string(noticeObject["by"]) == alice.rawValue)
        #expect(TextEventEncoding.lines(notice) == ["* alice paused at 0:12:03"])
        let pausedState = try #require(paused.first { $0.type == "state" })
        #expect(WireJSON.number(WireJSON.object(try WireJSON.object(pausedState)["playback"])?["position"]) == 723)
    }

    @Test("/time answers the sender with its value and the server's time")
    func time() throws {
        var room = Room(name: RoomName("lobby")!, now: Self.t0)
        let (alice, _) = try Self.aliceJoins(&room)
        let answered = Self.sentEvents(room.receive(.command(.time(client: 12.5)), from: alice, now: Self.t0))
        let object = try WireJSON.object(try #require(answered.first))
        #expect(WireJSON.string(object["type"]) == "time")
        #expect(WireJSON.number(object["client"]) == 12.5)
        #expect(WireJSON.integer(object["server"]) == Self.t0.milliseconds)
    }
}
