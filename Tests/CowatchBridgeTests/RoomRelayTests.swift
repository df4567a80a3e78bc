import CowatchClient
@testable import CowatchCore
@testable import CowatchBridge
import CowatchTime
import SlashCommands
import Testing

/// One channel-room pair driven by hand: network events and room frames in,
/// the relay's actions out.
struct Pair {
    var relay: RoomRelay
    var now = Pair.at(100)

    init(maximumSpeakers: Int = 25, pacing: PacerSettings = PacerSettings(perSecond: 10, burst: 20, maximumQueued: 250),
         replyLines: Int = 8) {
        relay = RoomRelay(settings: RoomRelay.Settings(
            network: "irc.test", channel: "#cowatch", room: "lobby", link: "http://watch.test/rooms/lobby",
            maximumSpeakers: maximumSpeakers, speakerIdle: .seconds(3600), speakerPacing: pacing, maximumReplyLines: replyLines,
            reconnect: Backoff.Settings(first: .seconds(1), maximum: .seconds(60)), keptOutRetry: .seconds(600)), seed: 3)
    }

    /// The monotonic instant `seconds` after the clock's start.
    static func at(_ seconds: Double) -> MonotonicInstant {
        MonotonicInstant(microseconds: 0) + .seconds(seconds)
    }

    mutating func on(_ event: RoomRelay.Event) -> [RoomRelay.Action] { relay.handle(event) }

    /// Started, the watcher welcomed as m9, the bot in the channel.
    mutating func started() -> [RoomRelay.Action] {
        var actions = on(.start(now: now))
        actions += on(.opened(.watcher, 1, now: now))
        actions += on(.received(.watcher, 1, Self.welcome("m9", "IRC", "w-token"), now: now))
        actions += on(.network(.joined(channel: "#cowatch"), now: now))
        return actions
    }

    /// A relay started as `started()` leaves it: the watcher welcomed and the
    /// channel joined.
    static func running() -> Pair {
        var pair = Pair()
        _ = pair.started()
        return pair
    }

    mutating func said(_ nick: String, _ text: String, action: Bool = false) -> [RoomRelay.Action] {
        on(.network(.message(channel: "#cowatch", from: Self.person(nick), text: text, action: action), now: now))
    }

    /// A person's connection opened and welcomed as `id`.
    mutating func welcomed(_ serial: Int, attempt: Int = 1, id: String, name: String, resume: String = "r-token") -> [RoomRelay.Action] {
        on(.opened(.speaker(serial), attempt, now: now))
            + on(.received(.speaker(serial), attempt, Self.welcome(id, name, resume), now: now))
    }

    static func person(_ nick: String) -> NetworkSpeaker { NetworkSpeaker(id: nick.lowercased(), name: nick) }

    /// A room's event as the server writes it (its JSON encoding).
    static func frame(_ event: RoomEvent) -> String {
        String(decoding: JSONEventEncoding.encode(event), as: UTF8.self)
    }

    static func member(_ id: String, _ name: String) -> Participant {
        Participant(id: MemberID(id), name: DisplayName(name)!, role: .member, joined: false, player: false, ready: false,
                    suspensions: [], autoplay: true, connected: true, owner: false, muted: false, copy: nil, scope: nil)
    }

    static func welcome(_ id: String, _ name: String, _ resume: String, ownerKey: String? = nil) -> String {
        let history = ChatLine(from: MemberID("m1"), name: DisplayName("old")!, text: "history", at: ServerInstant(milliseconds: 1), me: false)
        return frame(.welcome(Welcome(you: member(id, name), room: RoomName("lobby")!, serverTime: ServerInstant(milliseconds: 1),
                                      resume: resume, ownerKey: ownerKey, participants: [], chat: [history])))
    }

    static func chat(_ from: String, _ name: String, _ text: String, me: Bool = false) -> String {
        frame(.chat(ChatLine(from: MemberID(from), name: DisplayName(name)!, text: text, at: ServerInstant(milliseconds: 1), me: me)))
    }

    static func notice(_ text: String, cause: String?) -> String {
        frame(.notice(Notice(text: text, cause: cause.map { Cause(rawValue: $0) }, by: nil)))
    }

    static func error(_ code: String, _ message: String, command: String?) -> String {
        frame(.error(CommandError(ErrorCode(rawValue: code)!, command: command.flatMap { CommandName(rawValue: $0) }, message: message)))
    }

    /// Paused on a link's item.
    static func state(title: String, url: String) -> String {
        let link = MediaURL(url)!
        let activity = Activity(id: "a1", url: link, title: title, identifier: link.text)
        return frame(.state(RoomState(seq: 1, session: GroupSession(state: .joined, reason: nil, activity: activity),
                                      playback: Playback(status: .paused, item: activity.identifier, rate: .normal, position: .zero,
                                                         at: ServerInstant(milliseconds: 1), by: nil, cause: .watch),
                                      queue: [], policy: RoomPolicy())))
    }

    static func opened(_ actions: [RoomRelay.Action]) -> [(RoomRelay.Connection, Int, RoomRelay.Identity)] {
        actions.compactMap { if case .open(let connection, let attempt, let identity) = $0 { (connection, attempt, identity) } else { nil } }
    }

    static func sent(_ actions: [RoomRelay.Action]) -> [String] {
        actions.compactMap { if case .send(_, let text) = $0 { text } else { nil } }
    }

    static func network(_ actions: [RoomRelay.Action]) -> [NetworkCommand] {
        actions.compactMap { if case .network(let command) = $0 { command } else { nil } }
    }

    static func told(_ actions: [RoomRelay.Action]) -> [String] {
        network(actions).compactMap { if case .tell(_, let text) = $0 { text } else { nil } }
    }

    static func scheduled(_ actions: [RoomRelay.Action]) -> [(RoomRelay.Timer, MonotonicDuration)] {
        actions.compactMap { if case .schedule(let timer, let after) = $0 { (timer, after) } else { nil } }
    }
}

@Suite("The relay: the room heard in the channel")
struct RoomRelayWatcherTests {
    @Test("the watcher comes in as the bot, outside the session; the link is posted on first joining the channel")
    func start() {
        var pair = Pair()
        let started = pair.on(.start(now: Pair.at(100)))
        guard let (connection, attempt, identity) = Pair.opened(started).first else {
            Issue.record("no watcher opened")
            return
        }
        #expect(connection == .watcher && attempt == 1)
        #expect(identity.name == "IRC" && !identity.joinsSession && identity.isWatcher && identity.forwardedFor == nil)
        _ = pair.on(.opened(.watcher, 1, now: Pair.at(100)))
        _ = pair.on(.received(.watcher, 1, Pair.welcome("m9", "IRC", "w"), now: Pair.at(100)))
        _ = pair.on(.received(.watcher, 1, Pair.state(title: "Episode 1", url: "https://e/a.mp4"), now: Pair.at(100)))
        let joined = Pair.network(pair.on(.network(.joined(channel: "#cowatch"), now: Pair.at(100))))
        #expect(joined == [.notice(channel: "#cowatch", text: "Cowatch room lobby: http://watch.test/rooms/lobby · paused \"Episode 1\" · commands start with !, !help lists them")])
        _ = pair.on(.network(.parted(channel: "#cowatch", reason: "kicked"), now: Pair.at(101)))
        #expect(Pair.network(pair.on(.network(.joined(channel: "#cowatch"), now: Pair.at(111)))).isEmpty)
    }

    @Test("a room the bridge founds has its owner key kept for the operator, never said on IRC")
    func foundedRoomKeepsItsKey() {
        var pair = Pair()
        _ = pair.on(.start(now: Pair.at(100)))
        _ = pair.on(.opened(.watcher, 1, now: Pair.at(100)))
        let welcomed = pair.on(.received(.watcher, 1, Pair.welcome("m9", "IRC", "w", ownerKey: "key-77"), now: Pair.at(100)))
        #expect(welcomed.contains(.keepOwnerKey("key-77")))
        #expect(!Pair.network(welcomed).contains { "\($0)".contains("key-77") })
        #expect(!welcomed.contains { if case .log(let entry) = $0 { entry.metadata.values.contains("key-77") } else { false } })
        var other = Pair()
        _ = other.on(.start(now: Pair.at(100)))
        _ = other.on(.opened(.watcher, 1, now: Pair.at(100)))
        #expect(!other.on(.received(.watcher, 1, Pair.welcome("m9", "IRC", "w"), now: Pair.at(100))).contains { if case .keepOwnerKey = $0 { true } else { false } })
    }

    @Test("chat from the room's members is said in the channel; the room's history and its copy of the bridge's people are not")
    func chat() {
        var pair = Pair()
        let started = pair.started()
        #expect(!Pair.network(started).contains { if case .say = $0 { true } else { false } })
        #expect(Pair.network(pair.on(.received(.watcher, 1, Pair.chat("m1", "dana", "hello channel"), now: Pair.at(101))))
                == [.say(channel: "#cowatch", text: "<dana> hello channel")])
        #expect(Pair.network(pair.on(.received(.watcher, 1, Pair.chat("m1", "dana", "claps", me: true), now: Pair.at(101))))
                == [.say(channel: "#cowatch", text: "* dana claps")])
        _ = pair.said("ann", "hello room")
        _ = pair.welcomed(1, id: "m4", name: "ann")
        #expect(Pair.network(pair.on(.received(.watcher, 1, Pair.chat("m4", "ann", "hello room"), now: Pair.at(101)))).isEmpty)
        #expect(Pair.network(pair.on(.received(.watcher, 1, Pair.chat("m9", "IRC", "itself"), now: Pair.at(101)))).isEmpty)
    }

    @Test("the room's notices are posted as notices, a shared video with the room's link")
    func notices() {
        var pair = Pair.running()
        #expect(Pair.network(pair.on(.received(.watcher, 1, Pair.notice("dana paused at 0:01:23", cause: "pause"), now: Pair.at(101))))
                == [.notice(channel: "#cowatch", text: "dana paused at 0:01:23")])
        #expect(Pair.network(pair.on(.received(.watcher, 1, Pair.notice("dana shared \"A\"", cause: "watch"), now: Pair.at(101))))
                == [.notice(channel: "#cowatch", text: "dana shared \"A\" · http://watch.test/rooms/lobby")])
    }

    @Test("a frame that is not the protocol is logged and changes nothing; an event type this version does not know is skipped")
    func unreadableFrames() {
        var pair = Pair.running()
        let unreadable = pair.on(.received(.watcher, 1, #"{"type":"chat","text":"no sender"}"#, now: Pair.at(101)))
        #expect(unreadable.count == 1)
        if case .log(let entry)? = unreadable.first {
            #expect(entry.message == "a room event that could not be read")
        } else {
            Issue.record("not a log entry: \(unreadable)")
        }
        #expect(pair.on(.received(.watcher, 1, #"{"type":"whisper","who":[]}"#, now: Pair.at(101))).isEmpty)
        #expect(Pair.network(pair.on(.received(.watcher, 1, Pair.notice("still here", cause: nil), now: Pair.at(101))))
                == [.notice(channel: "#cowatch", text: "still here")])
    }

    @Test("while the bot is out of the channel the room's lines are counted, and the count is said on return")
    func missed() {
        var pair = Pair.running()
        _ = pair.on(.network(.parted(channel: "#cowatch", reason: "the IRC connection was lost"), now: Pair.at(101)))
        #expect(Pair.network(pair.on(.received(.watcher, 1, Pair.chat("m1", "dana", "anyone?"), now: Pair.at(102)))).isEmpty)
        _ = pair.on(.received(.watcher, 1, Pair.notice("dana paused", cause: "pause"), now: Pair.at(102)))
        #expect(Pair.network(pair.on(.network(.joined(channel: "#cowatch"), now: Pair.at(110))))
                == [.notice(channel: "#cowatch", text: "(2 lines from the room not relayed while the bridge was away)")])
    }

    @Test("the watcher lost in a restart comes back with its resume token; refused, it tries again much later")
    func watcherClosed() {
        var pair = Pair.running()
        let closed = pair.on(.closed(.watcher, 1, CloseInfo(code: 1001, reason: "server shutting down"), now: Pair.at(110)))
        guard let (timer, delay) = Pair.scheduled(closed).first else {
            Issue.record("no reconnect")
            return
        }
        #expect(timer == .reconnect(.watcher, 1) && delay <= .seconds(1))
        let reopened = Pair.opened(pair.on(.timerFired(timer, now: Pair.at(111))))
        #expect(reopened.first?.1 == 2 && reopened.first?.2.resume == "w-token")

        _ = pair.on(.received(.watcher, 2, Pair.error("banned", "you are banned from this room by dana", command: nil), now: Pair.at(112)))
        let banned = pair.on(.closed(.watcher, 2, CloseInfo(code: 4003, reason: "banned"), now: Pair.at(112)))
        #expect(Pair.scheduled(banned).first?.1 == .seconds(600))
        #expect(Pair.network(banned).contains { if case .notice(_, let text) = $0 { text.contains("you are banned from this room by dana") } else { false } })
    }
}

@Suite("The relay: people from the channel in the room")
struct RoomRelaySpeakerTests {
    @Test("a person's first line opens their own member, named after the nick, with a device and an address of their own")
    func identity() {
        var pair = Pair.running()
        let first = pair.said("Ann", "hello room")
        guard let (connection, attempt, identity) = Pair.opened(first).first else {
            Issue.record("no connection opened")
            return
        }
        #expect(connection == .speaker(1) && attempt == 1)
        #expect(identity.name == "Ann" && identity.joinsSession && !identity.isWatcher && identity.resume == nil)
        #expect(identity.forwardedFor == "bridge:irc.test/ann")
        #expect(identity.device.count == 32)
        // Nothing is sent before the welcome, whose member id keeps the echo out.
        #expect(Pair.sent(first).isEmpty)
        #expect(Pair.sent(pair.welcomed(1, id: "m4", name: "Ann")) == ["hello room"])

        var other = Pair()
        _ = other.started()
        let bob = Pair.opened(other.said("bob", "hi")).first?.2
        let ann = Pair.opened(other.said("ANN", "hi")).first?.2
        #expect(bob?.device != identity.device)
        #expect(ann?.device == identity.device)
        #expect(ann?.forwardedFor == identity.forwardedFor)
    }

    @Test("commands go as slash lines; a bad one is answered in the channel and never sent")
    func commands() {
        var pair = Pair.running()
        _ = pair.said("ann", "!play")
        #expect(Pair.sent(pair.welcomed(1, id: "m4", name: "ann")) == ["/play"])
        let bad = pair.said("ann", "!seek soon")
        #expect(Pair.sent(bad).isEmpty)
        #expect(Pair.network(bad).first.map { if case .notice(_, let text) = $0 { text.hasPrefix("ann: !seek: ") && text.hasSuffix("(usage: !seek <time>)") } else { false } } == true)
        #expect(Pair.network(pair.said("ann", "!help")).first.map { if case .notice("#cowatch", let text) = $0 { text.hasPrefix("ann: Cowatch commands, in the room: !help !nick") } else { false } } == true)
        #expect(Pair.sent(pair.said("ann", "waves", action: true)) == ["/me waves"])
        #expect(Pair.sent(pair.said("ann", "/etc/hosts")) == ["//etc/hosts"])
    }

    @Test("a link shared without a check is told to its sharer alone; other notices on their connection are the watcher's to say")
    func uncheckedLink() {
        var pair = Pair.running()
        _ = pair.said("ann", "!watch http://example.org/film.mp4")
        _ = pair.welcomed(1, id: "m4", name: "ann")
        let unchecked = pair.on(.received(.speaker(1), 1, Pair.notice("that link could not be checked (timed out); shared anyway", cause: "unchecked"),
                                          now: Pair.at(101)))
        #expect(Pair.told(unchecked) == ["that link could not be checked (timed out); shared anyway"])
        let roomWide = pair.on(.received(.speaker(1), 1, Pair.notice("ann is now a host", cause: "op"), now: Pair.at(101)))
        #expect(Pair.network(roomWide).isEmpty)
    }

    @Test("the room's refusal of a command and its answers are said in the channel, addressed to the person, cut short")
    func answers() {
        var pair = Pair(replyLines: 3)
        _ = pair.started()
        _ = pair.said("ann", "!pause")
        _ = pair.welcomed(1, id: "m4", name: "ann")
        let forbidden = pair.on(.received(.speaker(1), 1, Pair.error("forbidden", "/pause is for hosts here", command: "pause"), now: Pair.at(101)))
        #expect(Pair.network(forbidden) == [.notice(channel: "#cowatch", text: "ann: !pause is for hosts here")])
        let muted = pair.on(.received(.speaker(1), 1, Pair.error("muted", "you are muted by a host", command: nil), now: Pair.at(101)))
        #expect(Pair.told(muted) == ["you are muted by a host"])
        let reply = Pair.frame(.reply(.help(lines: ["5 here:", "  a", "  b", "  c", "  d"])))
        #expect(Pair.network(pair.on(.received(.speaker(1), 1, reply, now: Pair.at(101))))
                == ["ann: 5 here:", "  a", "(3 more lines: see http://watch.test/rooms/lobby)"].map { .notice(channel: "#cowatch", text: $0) })
    }

    @Test("a person's lines go at their pace, in order, the rest on the timer")
    func paced() {
        var pair = Pair(pacing: PacerSettings(perSecond: 10, burst: 5, maximumQueued: 100))
        _ = pair.started()
        for n in 0..<12 { _ = pair.said("carl", "line \(n)") }
        let welcomed = pair.welcomed(1, id: "m5", name: "carl")
        #expect(Pair.sent(welcomed) == (0..<5).map { "line \($0)" })
        #expect(Pair.scheduled(welcomed).first.map { $0.0 == .pace(1) && $0.1 == .milliseconds(100) } == true)
        pair.now = pair.now + .milliseconds(500)
        #expect(Pair.sent(pair.on(.timerFired(.pace(1), now: pair.now))) == (5..<10).map { "line \($0)" })
        pair.now = pair.now + .seconds(1)
        #expect(Pair.sent(pair.on(.timerFired(.pace(1), now: pair.now))) == ["line 10", "line 11"])
    }

    @Test("a kick is told to the person, who is kept out: not reconnected, lines not relayed, until the retry")
    func kicked() {
        var pair = Pair.running()
        _ = pair.said("bob", "hi")
        _ = pair.welcomed(1, id: "m6", name: "bob")
        let closed = pair.on(.closed(.speaker(1), 1, CloseInfo(code: 4001, reason: "you were kicked from this room by dana (spam)"), now: Pair.at(110)))
        #expect(Pair.told(closed) == ["You were removed from the room lobby: you were kicked from this room by dana (spam). Your lines are not relayed there for now."])
        #expect(Pair.opened(closed).isEmpty && Pair.scheduled(closed).isEmpty)
        let again = pair.said("bob", "am I back?")
        #expect(Pair.opened(again).isEmpty && Pair.sent(again).isEmpty)
        #expect(Pair.told(again).first?.hasPrefix("Your lines are not relayed to the room lobby") == true)
        #expect(Pair.told(pair.said("bob", "hello?")).isEmpty)
        // Another person is not kept out with him.
        #expect(!Pair.opened(pair.said("ann", "still here")).isEmpty)
        pair.now = Pair.at(711)
        #expect(Pair.opened(pair.said("bob", "later")).first?.1 == 2)
    }

    @Test("a ban's refusal is told in the room's words")
    func banned() {
        var pair = Pair.running()
        _ = pair.said("bob", "hi")
        _ = pair.on(.opened(.speaker(1), 1, now: Pair.at(100)))
        let refusal = pair.on(.received(.speaker(1), 1, Pair.error("banned", "you are banned from this room by dana until a host lifts the ban", command: nil), now: Pair.at(100)))
        #expect(Pair.network(refusal).isEmpty)
        let closed = pair.on(.closed(.speaker(1), 1, CloseInfo(code: 4003, reason: "banned"), now: Pair.at(100)))
        #expect(Pair.told(closed) == ["The room lobby does not let you in: you are banned from this room by dana until a host lifts the ban"])
    }

    @Test("a server restart: the person comes back with their resume token, their waiting lines after")
    func restart() {
        var pair = Pair.running()
        _ = pair.said("ann", "one")
        _ = pair.welcomed(1, id: "m4", name: "ann", resume: "ann-token")
        let closed = pair.on(.closed(.speaker(1), 1, CloseInfo(code: 1001, reason: "server shutting down"), now: Pair.at(110)))
        guard let (timer, _) = Pair.scheduled(closed).first else {
            Issue.record("no reconnect")
            return
        }
        #expect(Pair.sent(pair.said("ann", "two")).isEmpty)
        let reopened = Pair.opened(pair.on(.timerFired(timer, now: Pair.at(111))))
        #expect(reopened.first?.1 == 2 && reopened.first?.2.resume == "ann-token")
        #expect(Pair.sent(pair.welcomed(1, attempt: 2, id: "m4", name: "ann", resume: "ann-token")) == ["two"])
    }

    @Test("at most max-speakers people at once; the next is told why")
    func full() {
        var pair = Pair(maximumSpeakers: 2)
        _ = pair.started()
        _ = pair.said("ann", "a")
        _ = pair.said("bob", "b")
        let third = pair.said("cid", "c")
        #expect(Pair.opened(third).isEmpty)
        #expect(Pair.told(third).first?.contains("already brings 2 people into the room lobby") == true)
    }

    @Test("a person who leaves is closed once their lines are sent, and comes back as themselves within the grace")
    func leaving() {
        var pair = Pair.running()
        _ = pair.said("ann", "bye all")
        let gone = pair.on(.network(.left(channel: "#cowatch", speaker: Pair.person("ann")), now: Pair.at(101)))
        #expect(gone.isEmpty)
        let welcomed = pair.welcomed(1, id: "m4", name: "ann", resume: "ann-token")
        #expect(Pair.sent(welcomed) == ["bye all"])
        #expect(welcomed.contains(.close(.speaker(1))))
        _ = pair.on(.closed(.speaker(1), 1, CloseInfo(code: nil, reason: ""), now: Pair.at(102)))
        let back = Pair.opened(pair.said("ann", "back"))
        #expect(back.first?.0 == .speaker(1) && back.first?.2.resume == "ann-token")
    }

    @Test("a nick change follows in the room's name")
    func renamed() {
        var pair = Pair.running()
        _ = pair.said("ann", "hi")
        _ = pair.welcomed(1, id: "m4", name: "ann")
        let renamed = pair.on(.network(.renamed(from: Pair.person("ann"), to: Pair.person("Anna")), now: Pair.at(101)))
        #expect(Pair.sent(renamed) == ["/nick Anna"])
        #expect(Pair.sent(pair.said("Anna", "still me")) == ["still me"])
    }

    @Test("a quiet person's connection is let go")
    func idle() {
        var pair = Pair.running()
        _ = pair.said("ann", "hi")
        _ = pair.welcomed(1, id: "m4", name: "ann")
        #expect(!pair.on(.timerFired(.housekeeping, now: Pair.at(200))).contains(.close(.speaker(1))))
        #expect(pair.on(.timerFired(.housekeeping, now: Pair.at(3800))).contains(.close(.speaker(1))))
    }
}
