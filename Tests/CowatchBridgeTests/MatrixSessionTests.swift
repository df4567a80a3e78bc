@testable import CowatchBridge
import CowatchClient
import CowatchTime
import Foundation
import Testing

/// A Matrix session driven by hand: the homeserver's answers in, requests out.
struct Homeserver {
    static let bot = "@cowatch:hs.test"
    var session: MatrixSession
    var now = MonotonicInstant(microseconds: 0) + .seconds(1000)

    init(token: String? = "secret-token", password: String? = nil, saved: MatrixSession.Saved? = nil,
         rooms: [String] = ["#movies:hs.test"]) {
        session = MatrixSession(settings: MatrixSession.Settings(
            homeserver: "http://127.0.0.1:8008", user: Self.bot, accessToken: token, password: password, rooms: rooms,
            pacing: PacerSettings(perSecond: 1, burst: 2, maximumQueued: 10),
            reconnect: Backoff.Settings(first: .seconds(1), maximum: .seconds(60))), saved: saved, transactionPrefix: "run", seed: 7)
    }

    mutating func on(_ event: MatrixSession.Event) -> [MatrixSession.Action] { session.handle(event) }

    static func requests(_ actions: [MatrixSession.Action]) -> [MatrixSession.Request] {
        actions.compactMap { if case .request(let request) = $0 { request } else { nil } }
    }

    static func delivered(_ actions: [MatrixSession.Action]) -> [NetworkEvent] {
        actions.compactMap { if case .deliver(let event) = $0 { event } else { nil } }
    }

    static func kept(_ actions: [MatrixSession.Action]) -> [MatrixSession.Saved] {
        actions.compactMap { if case .keep(let saved) = $0 { saved } else { nil } }
    }

    static func scheduled(_ actions: [MatrixSession.Action]) -> [(MatrixSession.Timer, MonotonicDuration)] {
        actions.compactMap { if case .schedule(let timer, let after) = $0 { (timer, after) } else { nil } }
    }

    static func logged(_ actions: [MatrixSession.Action]) -> [LogEntry] {
        actions.compactMap { if case .log(let entry) = $0 { entry } else { nil } }
    }

    mutating func answer(_ request: MatrixSession.Request, _ status: Int = 200, _ body: Any) -> [MatrixSession.Action] {
        let data = (try? JSONSerialization.data(withJSONObject: body)) ?? Data()
        return on(.response(request.id, status: status, body: data, now: now))
    }

    /// The one request in flight whose path starts with `prefix`.
    func pending(_ prefix: String, in actions: [MatrixSession.Action]) -> MatrixSession.Request? {
        Self.requests(actions).first { $0.path.hasPrefix(prefix) }
    }

    /// Started with a token, the movies room joined and reported: returns the sync in flight.
    mutating func ready(members: [(String, String?)] = [("@ann:hs.test", "Sam")]) -> MatrixSession.Request {
        let started = on(.start(now: now))
        let resolve = pending("/_matrix/client/v3/directory/room/", in: started)!
        _ = answer(resolve, 200, ["room_id": "!movies:hs.test"])
        let join = pending("/_matrix/client/v3/join/", in: started)!
        _ = answer(join, 200, ["room_id": "!movies:hs.test"])
        let sync = pending("/_matrix/client/v3/sync", in: started)!
        var state: [[String: Any]] = [member(Self.bot, "join", nil)]
        for (user, name) in members { state.append(member(user, "join", name)) }
        let next = answer(sync, 200, ["next_batch": "s1", "rooms": ["join": ["!movies:hs.test": ["state": ["events": state], "timeline": ["events": []]]]]])
        return pending("/_matrix/client/v3/sync", in: next)!
    }
}

func member(_ user: String, _ membership: String, _ name: String?, sender: String? = nil, reason: String? = nil) -> [String: Any] {
    var content: [String: Any] = ["membership": membership]
    if let name { content["displayname"] = name }
    if let reason { content["reason"] = reason }
    return ["type": "m.room.member", "state_key": user, "sender": sender ?? user, "content": content]
}

func text(_ sender: String, _ body: String, _ extra: [String: Any] = [:], msgtype: String = "m.text") -> [String: Any] {
    var content: [String: Any] = ["msgtype": msgtype, "body": body]
    for (key, value) in extra { content[key] = value }
    return ["type": "m.room.message", "sender": sender, "content": content, "event_id": "$\(body.hashValue)"]
}

func joined(_ batch: String, timeline: [[String: Any]], room: String = "!movies:hs.test") -> [String: Any] {
    ["next_batch": batch, "rooms": ["join": [room: ["timeline": ["events": timeline]]]]]
}

@Suite("MatrixSession")
struct MatrixSessionTests {
    @Test("a password logs in once; the token it gives is kept and used, and the password is in no request but the login")
    func login() throws {
        var hs = Homeserver(token: nil, password: "hunter2")
        let started = hs.on(.start(now: hs.now))
        let login = try #require(hs.pending("/_matrix/client/v3/login", in: started))
        #expect(login.method == "POST" && !login.authorized)
        #expect(login.body?.contains("\"password\":\"hunter2\"") == true)
        let after = hs.answer(login, 200, ["access_token": "tok", "device_id": "DEV", "user_id": Homeserver.bot])
        #expect(Homeserver.kept(after).last == MatrixSession.Saved(user: Homeserver.bot, accessToken: "tok", deviceID: "DEV"))
        #expect(hs.session.accessToken == "tok")
        #expect(Homeserver.requests(after).allSatisfy { $0.authorized && $0.body?.contains("hunter2") != true })
        #expect(Homeserver.logged(after).allSatisfy { !$0.message.contains("hunter2") && !$0.metadata.values.contains("tok") })
        // Kept from an earlier run: no login at all.
        var again = Homeserver(token: nil, password: "hunter2", saved: MatrixSession.Saved(user: Homeserver.bot, accessToken: "tok"))
        #expect(again.pending("/_matrix/client/v3/login", in: again.on(.start(now: again.now))) == nil)
    }

    @Test("lines since the token reach the bridge; the token moves on only after them; the first sync of a run reads the whole state")
    func syncTokens() throws {
        var hs = Homeserver(saved: MatrixSession.Saved(user: Homeserver.bot, since: "s0"))
        let started = hs.on(.start(now: hs.now))
        let first = try #require(hs.pending("/_matrix/client/v3/sync", in: started))
        #expect(first.path.contains("since=s0") && first.path.contains("full_state=true"))
        _ = hs.answer(try #require(hs.pending("/_matrix/client/v3/join/", in: started)), 200, ["room_id": "!movies:hs.test"])
        _ = hs.answer(try #require(hs.pending("/_matrix/client/v3/directory/", in: started)), 200, ["room_id": "!movies:hs.test"])
        let actions = hs.answer(first, 200, ["next_batch": "s1", "rooms": ["join": ["!movies:hs.test": [
            "state": ["events": [member(Homeserver.bot, "join", nil), member("@ann:hs.test", "join", "Sam")]],
            "timeline": ["events": [text("@ann:hs.test", "said while the bridge was down")]]]]]])
        let ann = NetworkSpeaker(id: "@ann:hs.test", name: "Sam")
        #expect(Homeserver.delivered(actions) == [
            .joined(channel: "#movies:hs.test"), .present(channel: "#movies:hs.test", speakers: [ann]),
            .message(channel: "#movies:hs.test", from: ann, text: "said while the bridge was down", action: false)])
        let keepIndex = try #require(actions.firstIndex { if case .keep = $0 { true } else { false } })
        let lastDelivery = try #require(actions.lastIndex { if case .deliver = $0 { true } else { false } })
        #expect(keepIndex > lastDelivery)
        #expect(Homeserver.kept(actions).last?.since == "s1")
        let next = try #require(hs.pending("/_matrix/client/v3/sync", in: actions))
        #expect(next.path.contains("since=s1") && !next.path.contains("full_state"))
    }

    @Test("the first sync ever reads who is in, not what was said before")
    func noHistory() throws {
        var hs = Homeserver()
        let started = hs.on(.start(now: hs.now))
        let sync = try #require(hs.pending("/_matrix/client/v3/sync", in: started))
        #expect(!sync.path.contains("since="))
        _ = hs.answer(try #require(hs.pending("/_matrix/client/v3/directory/", in: started)), 200, ["room_id": "!movies:hs.test"])
        let actions = hs.answer(sync, 200, ["next_batch": "s1", "rooms": ["join": ["!movies:hs.test": [
            "state": ["events": [member("@ann:hs.test", "join", "Sam")]], "timeline": ["events": [text("@ann:hs.test", "old news")]]]]]])
        #expect(!Homeserver.delivered(actions).contains { if case .message = $0 { true } else { false } })
        #expect(Homeserver.delivered(actions).contains(.joined(channel: "#movies:hs.test")))
    }

    @Test("a lost homeserver is tried again, growing, from the same token: nothing replayed, nothing missed")
    func lostHomeserver() throws {
        var hs = Homeserver()
        let sync = hs.ready()
        #expect(sync.path.contains("since=s1"))
        let failed = hs.on(.failed(sync.id, reason: "connection refused", now: hs.now))
        let (timer, delay) = try #require(Homeserver.scheduled(failed).first)
        #expect(delay <= .seconds(1))
        #expect(Homeserver.delivered(failed).isEmpty, "the rooms stay joined; what the bridge says waits")
        let retried = hs.on(.timerFired(timer, now: hs.now + delay))
        let again = try #require(hs.pending("/_matrix/client/v3/sync", in: retried))
        #expect(again.path.contains("since=s1"))
        let twice = hs.on(.failed(again.id, reason: "connection refused", now: hs.now))
        #expect(try #require(Homeserver.scheduled(twice).first).1 > MonotonicDuration.milliseconds(999))
        // A 502 from a proxy in front of a restarting homeserver is the same.
        let third = try #require(hs.pending("/_matrix/client/v3/sync", in: hs.on(.timerFired(Homeserver.scheduled(twice)[0].0, now: hs.now))))
        #expect(!Homeserver.scheduled(hs.answer(third, 502, ["error": "bad gateway"])).isEmpty)
    }

    @Test("M_LIMIT_EXCEEDED is waited out for retry_after_ms, and the same transaction sent again")
    func rateLimit() throws {
        var hs = Homeserver()
        _ = hs.ready()
        let said = hs.on(.command(.say(channel: "#movies:hs.test", text: "<dana> hi"), now: hs.now))
        let send = try #require(hs.pending("/_matrix/client/v3/rooms/%21movies%3Ahs.test/send/m.room.message/", in: said))
        #expect(send.method == "PUT" && send.body?.contains("\"msgtype\":\"m.text\"") == true)
        let second = hs.on(.command(.notice(channel: "#movies:hs.test", text: "dana paused"), now: hs.now))
        #expect(Homeserver.requests(second).isEmpty, "one send at a time, in order")
        let limited = hs.answer(send, 429, ["errcode": "M_LIMIT_EXCEEDED", "error": "Too Many Requests", "retry_after_ms": 1500])
        let (timer, delay) = try #require(Homeserver.scheduled(limited).first)
        #expect(timer == .sendAgain && delay == .milliseconds(1500))
        let resent = try #require(Homeserver.requests(hs.on(.timerFired(timer, now: hs.now + delay))).first)
        #expect(resent.path == send.path && resent.body == send.body)
        let next = try #require(Homeserver.requests(hs.answer(resent, 200, ["event_id": "$1"])).first)
        #expect(next.body?.contains("\"msgtype\":\"m.notice\"") == true && next.path != send.path)
    }

    @Test("a send lost with the homeserver goes again with its transaction id, so it shows once")
    func sendLost() throws {
        var hs = Homeserver()
        _ = hs.ready()
        let send = try #require(Homeserver.requests(hs.on(.command(.say(channel: "#movies:hs.test", text: "x"), now: hs.now))).first)
        let failed = hs.on(.failed(send.id, reason: "connection reset", now: hs.now))
        let (timer, _) = try #require(Homeserver.scheduled(failed).first)
        #expect(Homeserver.requests(hs.on(.timerFired(timer, now: hs.now + .seconds(5)))).first?.path == send.path)
    }

    @Test("edits, redactions, notices, the bot's own lines and redacted messages are not relayed; replies read naturally")
    func whatIsRelayed() throws {
        var hs = Homeserver()
        let sync = hs.ready(members: [("@ann:hs.test", "Sam"), ("@bob:hs.test", "Bob")])
        let actions = hs.answer(sync, 200, joined("s2", timeline: [
            text("@ann:hs.test", "* fixed", ["m.new_content": ["msgtype": "m.text", "body": "fixed"],
                                             "m.relates_to": ["rel_type": "m.replace", "event_id": "$a"]]),
            ["type": "m.room.redaction", "sender": "@ann:hs.test", "redacts": "$a", "content": [:]],
            text("@ann:hs.test", "a bot's notice", msgtype: "m.notice"),
            text(Homeserver.bot, "<dana> echo"),
            ["type": "m.room.message", "sender": "@ann:hs.test", "content": [:], "unsigned": ["redacted_because": ["type": "m.room.redaction"]]],
            text("@ann:hs.test", "> <@bob:hs.test> shall we?\n> second quoted line\n\nyes, now", ["m.relates_to": ["m.in_reply_to": ["event_id": "$b"]]]),
            text("@ann:hs.test", "> <@bob:hs.test> play it\n\n!play", ["m.relates_to": ["m.in_reply_to": ["event_id": "$c"]]]),
            text("@ann:hs.test", "two\nlines"),
            text("@bob:hs.test", "dances", msgtype: "m.emote"),
        ]))
        let ann = NetworkSpeaker(id: "@ann:hs.test", name: "Sam")
        #expect(Homeserver.delivered(actions) == [
            .message(channel: "#movies:hs.test", from: ann, text: "Bob: yes, now", action: false),
            .message(channel: "#movies:hs.test", from: ann, text: "!play", action: false),
            .message(channel: "#movies:hs.test", from: ann, text: "two", action: false),
            .message(channel: "#movies:hs.test", from: ann, text: "lines", action: false),
            .message(channel: "#movies:hs.test", from: NetworkSpeaker(id: "@bob:hs.test", name: "Bob"), text: "dances", action: true),
        ])
    }

    @Test("two people with one display name are two speakers; names, leaves and renames follow the member events")
    func members() throws {
        var hs = Homeserver()
        let sync = hs.ready(members: [("@ann:hs.test", "Sam"), ("@sam:other.test", "Sam"), ("@nameless:hs.test", nil)])
        let actions = hs.answer(sync, 200, joined("s2", timeline: [
            text("@ann:hs.test", "one"), text("@sam:other.test", "two"), text("@nameless:hs.test", "three"),
            member("@ann:hs.test", "join", "Ann"), member("@sam:other.test", "leave", nil),
            member("@nameless:hs.test", "ban", nil, sender: "@ann:hs.test", reason: "spam"),
        ]))
        let channel = "#movies:hs.test"
        #expect(Homeserver.delivered(actions) == [
            .message(channel: channel, from: NetworkSpeaker(id: "@ann:hs.test", name: "Sam"), text: "one", action: false),
            .message(channel: channel, from: NetworkSpeaker(id: "@sam:other.test", name: "Sam"), text: "two", action: false),
            .message(channel: channel, from: NetworkSpeaker(id: "@nameless:hs.test", name: "nameless"), text: "three", action: false),
            .renamed(from: NetworkSpeaker(id: "@ann:hs.test", name: "Sam"), to: NetworkSpeaker(id: "@ann:hs.test", name: "Ann")),
            .left(channel: channel, speaker: NetworkSpeaker(id: "@sam:other.test", name: "Sam")),
            .left(channel: channel, speaker: NetworkSpeaker(id: "@nameless:hs.test", name: "nameless")),
        ])
    }

    @Test("a gappy sync's state tells the renames and leaves of the gap, as its timeline would have")
    func gappySync() throws {
        var hs = Homeserver()
        let sync = hs.ready(members: [("@ann:hs.test", "Sam"), ("@sam:other.test", "Sam")])
        let actions = hs.answer(sync, 200, ["next_batch": "s2", "rooms": ["join": ["!movies:hs.test": [
            "state": ["events": [member("@ann:hs.test", "join", "Ann"), member("@sam:other.test", "leave", nil)]],
            "timeline": ["limited": true, "events": [text("@ann:hs.test", "after the gap")]],
        ]]]])
        let channel = "#movies:hs.test"
        #expect(Homeserver.delivered(actions) == [
            .renamed(from: NetworkSpeaker(id: "@ann:hs.test", name: "Sam"), to: NetworkSpeaker(id: "@ann:hs.test", name: "Ann")),
            .left(channel: channel, speaker: NetworkSpeaker(id: "@sam:other.test", name: "Sam")),
            .message(channel: channel, from: NetworkSpeaker(id: "@ann:hs.test", name: "Ann"), text: "after the gap", action: false),
        ])
    }

    @Test("an invite to a configured room is accepted, others declined; a kick is reported and the room joined again")
    func invites() throws {
        var hs = Homeserver(rooms: ["#movies:hs.test", "!byid:hs.test"])
        let started = hs.on(.start(now: hs.now))
        _ = hs.answer(try #require(hs.pending("/_matrix/client/v3/directory/", in: started)), 200, ["room_id": "!movies:hs.test"])
        let joinMovies = try #require(Homeserver.requests(started).first { $0.path.hasSuffix("join/%23movies%3Ahs.test") })
        let refused = hs.answer(joinMovies, 403, ["errcode": "M_FORBIDDEN", "error": "not invited"])
        #expect(Homeserver.logged(refused).contains { $0.message.contains("joins when invited") })
        let sync = try #require(hs.pending("/_matrix/client/v3/sync", in: started))
        let actions = hs.answer(sync, 200, ["next_batch": "s1", "rooms": ["invite": [
            "!movies:hs.test": ["invite_state": ["events": [member(Homeserver.bot, "invite", nil, sender: "@ann:hs.test")]]],
            "!spam:hs.test": ["invite_state": ["events": [member(Homeserver.bot, "invite", nil, sender: "@eve:hs.test")]]],
        ]]])
        let paths = Homeserver.requests(actions).map(\.path)
        #expect(paths.contains("/_matrix/client/v3/join/%21movies%3Ahs.test"))
        #expect(paths.contains("/_matrix/client/v3/rooms/%21spam%3Ahs.test/leave"))

        var joinedHS = Homeserver()
        let next = joinedHS.ready()
        let kicked = joinedHS.answer(next, 200, ["next_batch": "s2", "rooms": ["leave": ["!movies:hs.test": ["timeline": ["events": [
            member(Homeserver.bot, "leave", nil, sender: "@ann:hs.test", reason: "go away")]]]]]])
        #expect(Homeserver.delivered(kicked) == [.parted(channel: "#movies:hs.test", reason: "removed by @ann:hs.test: go away")])
        let rejoin = try #require(Homeserver.scheduled(kicked).first { $0.0 == .rejoin("#movies:hs.test") })
        #expect(joinedHS.pending("/_matrix/client/v3/join/", in: joinedHS.on(.timerFired(rejoin.0, now: joinedHS.now + rejoin.1))) != nil)
    }

    @Test("an encrypted room is not read: said once in the room and in the log, and nothing else is said there")
    func encrypted() throws {
        var hs = Homeserver()
        let started = hs.on(.start(now: hs.now))
        _ = hs.answer(try #require(hs.pending("/_matrix/client/v3/directory/", in: started)), 200, ["room_id": "!movies:hs.test"])
        let sync = try #require(hs.pending("/_matrix/client/v3/sync", in: started))
        let actions = hs.answer(sync, 200, ["next_batch": "s1", "rooms": ["join": ["!movies:hs.test": ["state": ["events": [
            member(Homeserver.bot, "join", nil),
            ["type": "m.room.encryption", "state_key": "", "content": ["algorithm": "m.megolm.v1.aes-sha2"]]]]]]]])
        #expect(Homeserver.delivered(actions).isEmpty)
        #expect(Homeserver.logged(actions).contains { $0.level == .warning && $0.message.contains("end-to-end encrypted") })
        let notice = try #require(Homeserver.requests(actions).first { $0.path.contains("/send/") })
        #expect(notice.body?.contains("end-to-end encrypted") == true && notice.body?.contains("m.notice") == true)
        #expect(Homeserver.kept(actions).last?.toldEncrypted == ["!movies:hs.test"])
        let said = hs.on(.command(.say(channel: "#movies:hs.test", text: "<dana> hi"), now: hs.now))
        #expect(Homeserver.requests(said).isEmpty)
        let next = try #require(hs.pending("/_matrix/client/v3/sync", in: actions))
        let later = hs.answer(next, 200, ["next_batch": "s2", "rooms": ["join": ["!movies:hs.test": ["timeline": ["events": [
            ["type": "m.room.encrypted", "sender": "@ann:hs.test", "content": ["ciphertext": "..."]]]]]]]])
        #expect(!Homeserver.requests(hs.answer(notice, 200, ["event_id": "$n"]) + later).contains { $0.path.contains("/send/") })
    }

    @Test("a line for one person is said where they last spoke, addressed to them with a mention")
    func tell() throws {
        var hs = Homeserver()
        let sync = hs.ready()
        _ = hs.answer(sync, 200, joined("s2", timeline: [text("@ann:hs.test", "!seek soon")]))
        let told = hs.on(.command(.tell(speaker: NetworkSpeaker(id: "@ann:hs.test", name: "Sam"), text: "try !seek 1:23"), now: hs.now))
        let send = try #require(Homeserver.requests(told).first)
        let body = try #require(send.body.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(body["msgtype"] as? String == "m.notice" && body["body"] as? String == "Sam: try !seek 1:23")
        #expect((body["m.mentions"] as? [String: Any])?["user_ids"] as? [String] == ["@ann:hs.test"])
        #expect((body["formatted_body"] as? String)?.hasPrefix("<a href=\"https://matrix.to/#/@ann:hs.test\">Sam</a>: ") == true)
    }

    @Test("an answer addressed to a display name two people share mentions the one who last spoke")
    func sharedNameMention() throws {
        var hs = Homeserver()
        let sync = hs.ready(members: [("@ann:hs.test", "Sam"), ("@bob:hs.test", "Sam")])
        _ = hs.answer(sync, 200, joined("s2", timeline: [text("@ann:hs.test", "hi"), text("@bob:hs.test", "!who")]))
        let said = hs.on(.command(.notice(channel: "#movies:hs.test", text: "Sam: 3 people here"), now: hs.now))
        let body = try #require(Homeserver.requests(said).first?.body)
        #expect(body.contains("\"m.mentions\":{\"user_ids\":[\"@bob:hs.test\"]}"))
    }

    @Test("a refused token stops with a clear error when there is no password to log in with again")
    func refusedToken() throws {
        var hs = Homeserver()
        let sync = hs.ready()
        let actions = hs.answer(sync, 401, ["errcode": "M_UNKNOWN_TOKEN", "error": "Invalid access token"])
        #expect(Homeserver.logged(actions).contains { $0.level == .error && $0.message.contains("matrix-token") })
        #expect(Homeserver.requests(actions).isEmpty)
    }
}

@Suite("PrefixCommands with slash commands")
struct SlashCommandTests {
    @Test("where clients pass a slash, /watch is a command, //x the chat text /x, and !watch still works")
    func slash() {
        let commands = PrefixCommands(prefix: "!", slashCommands: true)
        #expect(commands.read("/watch https://example.org/a.mp4", action: false) == .line("/watch https://example.org/a.mp4"))
        #expect(commands.read("!play", action: false) == .line("/play"))
        #expect(commands.read("//not a command", action: false) == .line("//not a command"))
        #expect(commands.read("/help", action: false) == .help)
        #expect(commands.read("/ not a command", action: false) == .line("// not a command"))
        // IRC keeps its rule: a slash line that reached the channel is chat.
        #expect(PrefixCommands(prefix: "!").read("/watch x", action: false) == .line("//watch x"))
    }
}
