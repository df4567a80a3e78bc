import CowatchClient
import CowatchTime
import Foundation

/// The bridge's Matrix connection as a value, over the client-server API:
/// events in (the session started, a request was answered or failed, a timer
/// fired, the bridge wants something said), actions out (make an HTTP
/// request, set a timer, tell the bridge what happened in a room, keep the
/// session's state, log). `MatrixNetwork` carries the actions out with
/// URLSession; the rules are here, tested without sockets or clocks.
///
/// The rules, in short:
/// - Signed in with the configured access token, else the one kept from an
///   earlier login, else by logging in with the password (the token it gets is
///   kept, `MatrixStateFile`, so that a restart is the same device).
/// - Every configured room (alias or id) is joined at the start; a room that
///   does not let the bot in yet is joined when it invites the bot. Invites to
///   other rooms are declined.
/// - `/sync` is long-polled from the last `since` token, which is kept after
///   each answer's events were handed on: a lost homeserver is tried again with
///   a growing, jittered delay from that token, so nothing is replayed and
///   nothing is missed. The first sync without a token reads the rooms' state
///   (members, names, encryption) but not their history.
/// - People's lines (`m.text`, `m.emote`) reach the bridge, one line of the
///   message at a time, a reply's quoted fallback removed and its addressee
///   named; notices (other bots), edits, redactions and the bot's own lines do
///   not. Each person is their Matrix id, named by their display name.
/// - An end-to-end encrypted room is not read: the bot says so once there, and
///   in its log, and says nothing else there.
/// - What the bridge says goes out one request at a time, in order, through an
///   `OutboundPacer`; `M_LIMIT_EXCEEDED` is waited out for its `retry_after_ms`
///   and the same transaction sent again, as is one lost with the homeserver.
public struct MatrixSession: Sendable {
    public struct Settings: Sendable, Hashable {
        /// `https://matrix.example.org` (no trailing slash): the client-server API's base.
        public var homeserver: String
        /// `@cowatch:example.org`.
        public var user: String
        public var accessToken: String?
        public var password: String?
        /// The rooms, as configured: `#alias:server` or `!id:server`.
        public var rooms: [String]
        /// How long the homeserver may hold a `/sync` open.
        public var syncTimeout: MonotonicDuration
        /// How long any other request may take.
        public var requestTimeout: MonotonicDuration
        public var pacing: PacerSettings
        public var reconnect: Backoff.Settings
        /// A waiting configured room that refused to be joined is tried again after this, growing.
        public var joinRetry: Backoff.Settings
        /// Lines of one Matrix message relayed at most; the rest are left out and said so.
        public var maximumMessageLines: Int
        /// Display name of the bot's own device, when it logs in.
        public var deviceName: String

        public init(homeserver: String, user: String, accessToken: String?, password: String?, rooms: [String],
                    syncTimeout: MonotonicDuration = .seconds(30), requestTimeout: MonotonicDuration = .seconds(30),
                    pacing: PacerSettings = PacerSettings(perSecond: 1, burst: 10, maximumQueued: 100),
                    reconnect: Backoff.Settings = Backoff.Settings(first: .seconds(1), maximum: .seconds(120)),
                    joinRetry: Backoff.Settings = Backoff.Settings(first: .seconds(30), maximum: .seconds(600)),
                    maximumMessageLines: Int = 10, deviceName: String = "Cowatch bridge") {
            self.homeserver = homeserver
            self.user = user
            self.accessToken = accessToken
            self.password = password
            self.rooms = rooms
            self.syncTimeout = syncTimeout
            self.requestTimeout = requestTimeout
            self.pacing = pacing
            self.reconnect = reconnect
            self.joinRetry = joinRetry
            self.maximumMessageLines = maximumMessageLines
            self.deviceName = deviceName
        }
    }

    /// What is kept between runs (`MatrixStateFile`): the login the password
    /// made, where the sync stopped, and the rooms already told they are not read.
    public struct Saved: Sendable, Hashable, Codable {
        public var user: String
        public var accessToken: String?
        public var deviceID: String?
        public var since: String?
        public var toldEncrypted: [String]

        public init(user: String, accessToken: String? = nil, deviceID: String? = nil, since: String? = nil, toldEncrypted: [String] = []) {
            self.user = user
            self.accessToken = accessToken
            self.deviceID = deviceID
            self.since = since
            self.toldEncrypted = toldEncrypted
        }
    }

    public typealias RequestID = Int

    /// One HTTP request for `MatrixNetwork` to make.
    public struct Request: Sendable, Hashable {
        public var id: RequestID
        public var method: String
        /// From the homeserver's base: `/_matrix/client/v3/...`, query included.
        public var path: String
        /// JSON text.
        public var body: String?
        /// Sent with the access token.
        public var authorized: Bool
        public var timeout: MonotonicDuration
    }

    public enum Timer: Sendable, Hashable {
        /// Sync (or sign in) again after a failure.
        case retry(Int)
        case pace
        /// The homeserver asked to wait before the next send.
        case sendAgain
        /// Join a configured room again (its configured name).
        case rejoin(String)
    }

    public enum Event: Sendable, Hashable {
        case start(now: MonotonicInstant)
        /// The homeserver answered with `status` and `body`.
        case response(RequestID, status: Int, body: Data, now: MonotonicInstant)
        /// No answer: the connection failed or timed out.
        case failed(RequestID, reason: String, now: MonotonicInstant)
        case timerFired(Timer, now: MonotonicInstant)
        case command(NetworkCommand, now: MonotonicInstant)
        case stop
    }

    public enum Action: Sendable, Hashable {
        case request(Request)
        /// Abandon a request (the session stops).
        case cancel(RequestID)
        case schedule(Timer, after: MonotonicDuration)
        case deliver(NetworkEvent)
        /// Keep this, replacing what was kept.
        case keep(Saved)
        case log(LogEntry)
    }

    enum Purpose: Sendable, Hashable {
        case login
        case resolve(String)
        case join(String)
        case decline(String)
        case sync(initial: Bool)
        case send(Outbound)
    }

    /// A message for a room, with its transaction id (the same when sent again).
    struct Outbound: Sendable, Hashable {
        var roomID: String
        var transaction: String
        var content: String
    }

    /// One configured room.
    struct Room: Sendable, Hashable {
        /// As configured (and as the bridge names the channel).
        var name: String
        var id: String?
        /// The bot is in the room.
        var joined = false
        /// The bridge was told the bot is in the room (not while it is encrypted).
        var reported = false
        var encrypted = false
        /// Matrix id to display name (nil: none set), of the members who are in.
        var members: [String: String?] = [:]
        /// Display name to the Matrix id that last spoke under it.
        var recentSpeakers: [String: String] = [:]
        var joinBackoff: Backoff
    }

    enum Phase: Sendable, Hashable {
        case idle
        case signingIn
        case syncing
        case stopped
    }

    public let settings: Settings
    var saved: Saved
    var phase: Phase = .idle
    var nextRequest = 1
    var inFlight: [RequestID: Purpose] = [:]
    var rooms: [Room]
    /// Failures in a row of sync and sign-in; the retry timer carries the count.
    var backoff: Backoff
    var retryNumber = 0
    var pacer: OutboundPacer<Outbound>
    var paceArmed = false
    /// Released by the pacer, waiting for the send before them.
    var ready: [Outbound] = []
    /// The send answered `M_LIMIT_EXCEEDED` or lost: sent again on `sendAgain`.
    var held: Outbound?
    var sending: RequestID?
    var nextTransaction = 0
    /// Unique to this run, so that transaction ids never repeat under one token.
    let transactionPrefix: String
    /// Where each person last spoke: a line for them alone is said there.
    var lastRoom: [String: String] = [:]
    /// A sync of this run has answered: the rooms' state is known.
    var fullStateRead = false

    /// - Parameters:
    ///   - saved: what an earlier run kept (for this user), if anything.
    ///   - transactionPrefix: unique to the run (the glue gives a random one).
    public init(settings: Settings, saved: Saved?, transactionPrefix: String, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        self.settings = settings
        self.saved = saved.flatMap { $0.user == settings.user ? $0 : nil } ?? Saved(user: settings.user)
        self.transactionPrefix = transactionPrefix
        backoff = Backoff(settings: settings.reconnect, seed: seed)
        pacer = OutboundPacer(settings: settings.pacing)
        rooms = settings.rooms.map { name in
            Room(name: name, id: name.hasPrefix("!") ? name : nil,
                 joinBackoff: Backoff(settings: settings.joinRetry, seed: seed ^ Backoff.seed(name)))
        }
    }

    /// The access token in use: the configured one, else the one a login made.
    var accessToken: String? { settings.accessToken ?? saved.accessToken }

    public mutating func handle(_ event: Event) -> [Action] {
        guard phase != .stopped else { return [] }
        switch event {
        case .start:
            guard phase == .idle else { return [] }
            return signIn()
        case .response(let id, let status, let body, let now):
            guard let purpose = inFlight.removeValue(forKey: id) else { return [] }
            return answered(purpose, id: id, status: status, body: body, now: now)
        case .failed(let id, let reason, let now):
            guard let purpose = inFlight.removeValue(forKey: id) else { return [] }
            return failed(purpose, id: id, reason: reason, now: now)
        case .timerFired(let timer, let now):
            return fired(timer, now: now)
        case .command(let command, let now):
            return perform(command, now: now)
        case .stop:
            phase = .stopped
            let ids = inFlight.keys.sorted()
            inFlight = [:]
            return ids.map { .cancel($0) }
        }
    }

    // MARK: - Signing in and syncing

    mutating func signIn() -> [Action] {
        if accessToken != nil {
            phase = .syncing
            return joinAll() + sync()
        }
        guard let password = settings.password else {
            phase = .stopped
            return [.log(LogEntry(.error, "no Matrix access token and no password: the bridge cannot sign in", ["user": settings.user]))]
        }
        phase = .signingIn
        let body = Self.json([
            "type": "m.login.password",
            "identifier": ["type": "m.id.user", "user": settings.user],
            "password": password,
            "initial_device_display_name": settings.deviceName,
        ])
        return [.log(LogEntry(.info, "logging in to the Matrix homeserver", ["user": settings.user])),
                request(.login, "POST", "/_matrix/client/v3/login", body: body, authorized: false)]
    }

    mutating func sync() -> [Action] {
        var query = "timeout=\(Int(settings.syncTimeout.seconds * 1000))"
        let initial = saved.since == nil
        if let since = saved.since {
            query += "&since=" + Self.escape(since)
            // The first sync of a run, from where the last run stopped: the
            // rooms' whole state (who is in), with only the lines since then.
            if !fullStateRead { query += "&full_state=true" }
        } else {
            // The first sync reads who is in the rooms, not what they said before.
            query += "&filter=" + Self.escape(Self.json(["room": ["timeline": ["limit": 1]]]))
        }
        let id = nextRequest
        nextRequest += 1
        inFlight[id] = .sync(initial: initial)
        return [.request(Request(id: id, method: "GET", path: "/_matrix/client/v3/sync?" + query, body: nil, authorized: true,
                                 timeout: settings.syncTimeout + settings.requestTimeout))]
    }

    /// Joins each configured room not joined yet; an alias is resolved first, so
    /// that an invite to its room (which names the room by id) is recognised.
    mutating func joinAll() -> [Action] {
        var actions: [Action] = []
        for room in rooms where !room.joined {
            actions += join(room.name)
        }
        return actions
    }

    mutating func join(_ name: String) -> [Action] {
        guard let room = rooms.first(where: { $0.name == name }) else { return [] }
        var actions: [Action] = []
        if room.id == nil {
            actions.append(request(.resolve(name), "GET", "/_matrix/client/v3/directory/room/" + Self.escape(name), body: nil, authorized: true))
        }
        actions.append(request(.join(name), "POST", "/_matrix/client/v3/join/" + Self.escape(room.id ?? name), body: "{}", authorized: true))
        return actions
    }

    mutating func request(_ purpose: Purpose, _ method: String, _ path: String, body: String?, authorized: Bool) -> Action {
        let id = nextRequest
        nextRequest += 1
        inFlight[id] = purpose
        return .request(Request(id: id, method: method, path: path, body: body, authorized: authorized, timeout: settings.requestTimeout))
    }

    private mutating func answered(_ purpose: Purpose, id: RequestID, status: Int, body: Data, now: MonotonicInstant) -> [Action] {
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        let code = object["errcode"] as? String
        let words = object["error"] as? String ?? "HTTP \(status)"
        switch purpose {
        case .login:
            guard status == 200, let token = object["access_token"] as? String else {
                return retry(what: "logging in to the Matrix homeserver", why: "\(code ?? "HTTP \(status)"): \(words)",
                             forever: status >= 500 || status == 429, hint: object)
            }
            saved.accessToken = token
            saved.deviceID = object["device_id"] as? String
            saved.since = nil
            backoff.succeeded()
            phase = .syncing
            return [.log(LogEntry(.notice, "logged in to the Matrix homeserver; the access token is kept in the bridge's state file",
                                  ["user": settings.user, "device": saved.deviceID ?? "?"])),
                    .keep(saved)] + joinAll() + sync()
        case .resolve(let name):
            guard status == 200, let roomID = object["room_id"] as? String,
                  let index = rooms.firstIndex(where: { $0.name == name }) else {
                return [.log(LogEntry(.warning, "a Matrix room alias could not be resolved", ["room": name, "why": "\(code ?? "") \(words)"]))]
            }
            rooms[index].id = roomID
            return []
        case .join(let name):
            guard let index = rooms.firstIndex(where: { $0.name == name }) else { return [] }
            if status == 200, let roomID = object["room_id"] as? String {
                rooms[index].id = roomID
                rooms[index].joinBackoff.succeeded()
                return [.log(LogEntry(.info, "joined the Matrix room", ["room": name, "room_id": roomID]))]
            }
            if status == 429 || status >= 500 {
                let delay = Self.retryAfter(object) ?? rooms[index].joinBackoff.next()
                return [.schedule(.rejoin(name), after: delay)]
            }
            // Not invited (yet): the invite, when it comes, is accepted.
            let delay = rooms[index].joinBackoff.next()
            return [.log(LogEntry(.warning, "the Matrix room does not let the bot in; it joins when invited",
                                  ["room": name, "why": "\(code ?? "HTTP \(status)"): \(words)", "retry_in": Self.seconds(delay)])),
                    .schedule(.rejoin(name), after: delay)]
        case .decline(let roomID):
            return [.log(LogEntry(.info, "declined an invite to a Matrix room not in the configuration",
                                  ["room_id": roomID, "status": "\(status)"]))]
        case .sync(let initial):
            if status == 200 {
                backoff.succeeded()
                let actions = synced(object, initial: initial, now: now)
                fullStateRead = true
                return actions + sync()
            }
            if code == "M_UNKNOWN_TOKEN" || status == 401 {
                return tokenRefused(words)
            }
            return retry(what: "syncing with the Matrix homeserver", why: "\(code ?? "HTTP \(status)"): \(words)", forever: true, hint: object)
        case .send(let outbound):
            sending = nil
            if status == 200 {
                return pump(now: now)
            }
            if status == 429 || code == "M_LIMIT_EXCEEDED" || status >= 500 {
                held = outbound
                let delay = Self.retryAfter(object) ?? backoff.next()
                return [.log(LogEntry(status == 429 ? .info : .warning, status == 429 ? "the Matrix homeserver limits the bot's rate; waiting" : "the Matrix homeserver failed a send; trying again",
                                      ["room_id": outbound.roomID, "retry_in": Self.seconds(delay), "why": "\(code ?? "HTTP \(status)"): \(words)"])),
                        .schedule(.sendAgain, after: delay)]
            }
            return [.log(LogEntry(.warning, "the Matrix homeserver refused a message", ["room_id": outbound.roomID, "why": "\(code ?? "HTTP \(status)"): \(words)"]))]
                + pump(now: now)
        }
    }

    private mutating func failed(_ purpose: Purpose, id: RequestID, reason: String, now: MonotonicInstant) -> [Action] {
        switch purpose {
        case .login:
            return retry(what: "logging in to the Matrix homeserver", why: reason, forever: true, hint: [:])
        case .sync:
            return retry(what: "syncing with the Matrix homeserver", why: reason, forever: true, hint: [:])
        case .resolve(let name), .join(let name):
            guard let index = rooms.firstIndex(where: { $0.name == name }), !rooms[index].joined else { return [] }
            // One rejoin timer for the resolve and the join of one try.
            if case .resolve = purpose { return [] }
            return [.schedule(.rejoin(name), after: rooms[index].joinBackoff.next())]
        case .decline:
            return []
        case .send(let outbound):
            // The same transaction id again: the homeserver keeps it from showing twice.
            sending = nil
            held = outbound
            return [.schedule(.sendAgain, after: backoff.next())]
        }
    }

    /// Sync or login failed: wait, growing, then the same again from the same token.
    private mutating func retry(what: String, why: String, forever: Bool, hint: [String: Any]) -> [Action] {
        guard forever else {
            phase = .stopped
            return [.log(LogEntry(.error, "\(what) failed; the Matrix side stops (check the bot's user and password)", ["why": why]))]
        }
        let delay = Self.retryAfter(hint) ?? backoff.next()
        retryNumber += 1
        // The rooms stay joined meanwhile: what the bridge says waits in the
        // queue, and the next sync starts where this one would have.
        return [.log(LogEntry(.warning, "\(what) failed; trying again", ["why": why, "retry_in": Self.seconds(delay)])),
                .schedule(.retry(retryNumber), after: delay)]
    }

    /// The access token is no longer good: log in again when there is a password.
    private mutating func tokenRefused(_ words: String) -> [Action] {
        if settings.accessToken == nil, settings.password != nil {
            saved.accessToken = nil
            saved.deviceID = nil
            return [.log(LogEntry(.warning, "the Matrix homeserver no longer accepts the bot's token; logging in again", ["why": words])),
                    .keep(saved)] + signIn()
        }
        phase = .stopped
        return [.log(LogEntry(.error, "the Matrix homeserver refuses the bot's access token; the Matrix side stops (set matrix-token again)",
                              ["user": settings.user, "why": words]))]
    }

    private mutating func fired(_ timer: Timer, now: MonotonicInstant) -> [Action] {
        switch timer {
        case .retry(let number):
            guard number == retryNumber else { return [] }
            if phase == .signingIn || accessToken == nil { return signIn() }
            return joinAll() + sync()
        case .pace:
            paceArmed = false
            return pump(now: now)
        case .sendAgain:
            guard sending == nil, let outbound = held else { return [] }
            held = nil
            return send(outbound)
        case .rejoin(let name):
            guard phase == .syncing, let room = rooms.first(where: { $0.name == name }), !room.joined,
                  !inFlight.values.contains(.join(name)) else { return [] }
            return join(name)
        }
    }

    // MARK: - Helpers

    static func json(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A path segment or query value: everything but unreserved characters escaped.
    static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(0x7F)))
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// The wait an `M_LIMIT_EXCEEDED` answer asks for.
    static func retryAfter(_ object: [String: Any]) -> MonotonicDuration? {
        guard let milliseconds = (object["retry_after_ms"] as? NSNumber)?.int64Value, milliseconds >= 0 else { return nil }
        // A homeserver's word, bounded: an hour at most.
        return .milliseconds(min(milliseconds, 3_600_000))
    }

    static func seconds(_ span: MonotonicDuration) -> String {
        let value = span.seconds
        return value < 10 ? "\(Double(Int(value * 10)) / 10)s" : "\(Int(value))s"
    }
}
