import CowatchTime
import Foundation
import SlashCommands
import Testing
@testable import CowatchCore

/// Events built by hand, one or more of every `RoomEvent` case and `Reply` kind.
enum EncodingFixture {
    static let now = ServerInstant(milliseconds: 1_700_000_000_000)
    static let start = ServerInstant(milliseconds: 1_700_000_000_250)
    static let url = MediaURL("https://example.org/ep1.mp4")!
    static let nextURL = MediaURL("https://example.org/ep2.mp4")!

    static let alice = Participant(
        id: MemberID("m1"), name: DisplayName("alice")!, role: .host, joined: true, player: true,
        ready: true, suspensions: [], autoplay: false, connected: true, owner: true, muted: false, scope: nil)
    static let bob = Participant(
        id: MemberID("m2"), name: DisplayName("bob")!, role: .member, joined: false, player: false,
        ready: false, suspensions: [.stallRecovery, SuspensionReason(rawValue: "custom.reason")!],
        autoplay: true, connected: false, owner: false, muted: true, scope: .chat)

    static let activity = Activity(id: "a1", url: url, title: "Episode 1", identifier: url.text)
    static let queue = [QueueItem(id: "q1", url: nextURL, title: "Episode 2")]

    /// Playing at 1.5x from 723.25 s, starting 250 ms after `now`.
    static let playing = RoomState(
        seq: 7, session: GroupSession(state: .joined, reason: nil, activity: activity),
        playback: Playback(status: .playing, item: activity.identifier, rate: PlaybackRate(1.5)!,
                           position: MediaTime(seconds: 723.25), at: start, by: alice.id, cause: .play),
        queue: queue,
        policy: RoomPolicy(control: .hosts, stall: .wait, wait: ServerInterval(milliseconds: 2500)))

    /// A new room: no session.
    static let idle = RoomState(
        seq: 0, session: nil, playback: .idle(at: now, cause: .create, by: nil), queue: [], policy: RoomPolicy())

    /// `playing` with its playback's status and position (in seconds) set, and its
    /// rate where given.
    static func playing(_ status: PlaybackStatus, at seconds: Double, rate: PlaybackRate? = nil) -> RoomState {
        var state = playing
        state.playback.status = status
        state.playback.position = MediaTime(seconds: seconds)
        if let rate { state.playback.rate = rate }
        return state
    }

    /// The session ended for everyone.
    static let ended = RoomState(
        seq: 12, session: GroupSession(state: .invalidated, reason: "ended", activity: activity),
        playback: .idle(at: now, cause: .end, by: alice.id), queue: [], policy: RoomPolicy())

    static let welcome = Welcome(you: alice, room: RoomName("lobby")!, serverTime: now, resume: "tok-123",
                                 ownerKey: nil, participants: [alice, bob], chat: [])
    static let founding = Welcome(you: alice, room: RoomName("lobby")!, serverTime: now, resume: "tok-123",
                                  ownerKey: "key-456", participants: [alice], chat: [])
    static let invite = Invite(number: 3, tokenDigest: "d", usesLeft: 2,
                               expires: ServerInstant(milliseconds: 1_700_003_600_000), by: alice.name, at: now)
    static let bot = BotToken(number: 1, name: DisplayName("dj-bot")!, scope: .control, digest: "d", by: alice.name, at: now)
    static let bans = [
        Ban(number: 1, kind: .kick, name: bob.name, identities: ["d1"], address: "10.0.0.9",
            until: ServerInstant(milliseconds: 1_700_000_600_000), reason: "spam", by: alice.name, at: now),
        Ban(number: 2, kind: .ban, name: DisplayName("mallory")!, identities: [], address: nil, until: nil,
            reason: nil, by: alice.name, at: now),
    ]
    static let chat = ChatLine(from: alice.id, name: alice.name, text: "hello", at: now, me: false)
    static let me = ChatLine(from: alice.id, name: alice.name, text: "waves", at: now, me: true)
    static let notice = Notice(text: "alice paused at 0:12:03", cause: .pause, by: alice.id)
    static let plainNotice = Notice(text: "already paused", cause: nil, by: nil)
    static let unknownCommand = CommandError(.unknownCommand, command: nil, message: "unknown command /foo (try /help)")
    static let badSeek = CommandError(.badArguments, command: .seek,
                                      message: "/seek: \"x\" is not a time (usage: /seek <time>)")
    static let catchup = Catchup(from: MediaTime(seconds: 713.5), rate: PlaybackRate(2)!,
                                 until: ServerInstant(milliseconds: 1_700_000_010_000))

    static let roster = VoiceRoster(change: .speaking, member: alice.id, name: alice.name, mode: .on, seats: [
        VoiceRoster.Seat(id: alice.id, name: alice.name, muted: false, speaking: true),
        VoiceRoster.Seat(id: bob.id, name: bob.name, muted: true, speaking: false),
    ])
    static let ticket = VoiceTicket(iceServers: [
        IceServer(urls: ["stun:turn.example.org:3478"]),
        IceServer(urls: ["turn:turn.example.org:3478?transport=udp", "turns:turn.example.org:5349"],
                  username: "1700014400:lobby.m1", credential: "bXlzZWNyZXQ="),
    ], expires: ServerInstant(milliseconds: 1_700_014_400_000))

    static let events: [RoomEvent] = [
        .welcome(welcome), .welcome(founding),
        .state(playing), .state(idle), .state(ended),
        .participant(alice, change: .arrived), .participant(bob, change: .suspended(bob.suspensions[1])),
        .participant(alice, change: .renamed(from: DisplayName("alicia")!)), .participant(bob, change: .resumed(nil)),
        .participantLeft(bob.id, name: bob.name, reason: .left),
        .participantLeft(bob.id, name: bob.name, reason: .kicked),
        .participantLeft(bob.id, name: bob.name, reason: .banned),
        .participant(bob, change: .muted),
        .chat(chat), .chat(me),
        .notice(notice), .notice(plainNotice),
        .reply(.help(lines: CommandReference.helpLines())),
        .reply(.who([alice, bob])),
        .reply(.status(playing, position: MediaTime(seconds: 730), now: now)),
        .reply(.queue(queue)), .reply(.queue([])),
        .reply(.policy(RoomPolicy())),
        .reply(.bans(bans, now: now)), .reply(.bans([], now: now)),
        .reply(.invite(invite, token: "0123456789abcdef0123456789abcdef", now: now)),
        .reply(.invites([invite], now: now)), .reply(.invites([], now: now)),
        .reply(.token(bot, token: "feedbeef")), .reply(.tokens([bot])), .reply(.tokens([])),
        .reply(.policy(RoomPolicy(control: .hosts, locked: true, password: true))),
        .error(unknownCommand), .error(badSeek),
        .time(client: 1_700_000_000_000.5, server: now),
        .catchup(catchup),
        .voice(roster), .voice(VoiceRoster(change: .left, member: bob.id, name: bob.name, mode: .hosts, seats: [])),
        .voice(VoiceRoster(change: .list, member: nil, name: nil, mode: .off, seats: [])),
        .voiceTicket(ticket), .voiceTicket(VoiceTicket(iceServers: [], expires: now)),
        .voiceAnswer(sdp: "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"),
    ]

    /// The case name, exhaustively: a new case fails to compile here until the
    /// fixtures and the tests know about it.
    static func caseName(_ event: RoomEvent) -> String {
        switch event {
        case .welcome: "welcome"
        case .state: "state"
        case .participant: "participant"
        case .participantLeft: "participantLeft"
        case .chat: "chat"
        case .notice: "notice"
        case .reply(let reply):
            switch reply {
            case .help: "reply.help"
            case .who: "reply.who"
            case .status: "reply.status"
            case .queue: "reply.queue"
            case .policy: "reply.policy"
            case .bans: "reply.bans"
            case .invite: "reply.invite"
            case .invites: "reply.invites"
            case .token: "reply.token"
            case .tokens: "reply.tokens"
            }
        case .error: "error"
        case .time: "time"
        case .catchup: "catchup"
        case .voice: "voice"
        case .voiceTicket: "voiceTicket"
        case .voiceAnswer: "voiceAnswer"
        }
    }

    static let allCaseNames: Set<String> = [
        "welcome", "state", "participant", "participantLeft", "chat", "notice", "reply.help", "reply.who",
        "reply.status", "reply.queue", "reply.policy", "reply.bans", "reply.invite", "reply.invites", "reply.token",
        "reply.tokens", "error", "time",
        "catchup", "voice", "voiceTicket", "voiceAnswer",
    ]
}

/// Reading the JSON encoding back with Foundation, and checking JSON types.
enum WireJSON {
    static func object(_ event: RoomEvent, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let bytes = JSONEventEncoding.encode(event)
        let parsed = try JSONSerialization.jsonObject(with: Data(bytes))
        return try #require(parsed as? [String: Any], "not a JSON object: \(String(decoding: bytes, as: UTF8.self))",
                            sourceLocation: sourceLocation)
    }

    static func text(_ event: RoomEvent) -> String {
        String(decoding: JSONEventEncoding.encode(event), as: UTF8.self)
    }

    private static func numberType(_ value: Any?) -> String? {
        guard let number = value as? NSNumber else { return nil }
        return String(cString: number.objCType)
    }

    static func isBool(_ value: Any?) -> Bool { numberType(value) == "c" }

    static func isInteger(_ value: Any?) -> Bool {
        guard let type = numberType(value) else { return false }
        return ["i", "l", "q", "s", "I", "L", "Q", "S"].contains(type)
    }

    static func isNumber(_ value: Any?) -> Bool {
        guard let type = numberType(value) else { return false }
        return type != "c"
    }

    static func isNull(_ value: Any?) -> Bool { value is NSNull }

    static func string(_ value: Any?) -> String? { value as? String }

    static func number(_ value: Any?) -> Double? { isNumber(value) ? (value as? NSNumber)?.doubleValue : nil }

    static func integer(_ value: Any?) -> Int64? { isInteger(value) ? (value as? NSNumber)?.int64Value : nil }

    static func bool(_ value: Any?) -> Bool? { isBool(value) ? (value as? NSNumber)?.boolValue : nil }

    static func object(_ value: Any?) -> [String: Any]? { value as? [String: Any] }

    static func array(_ value: Any?) -> [Any]? { value as? [Any] }
}
