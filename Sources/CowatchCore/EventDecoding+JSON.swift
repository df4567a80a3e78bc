import CowatchTime
import SlashCommands

/// Reads the `cowatch.v1.json` encoding (docs/protocol.md, "Events") back into the
/// core's own `RoomEvent`: the one decoder of the protocol, for the desktop
/// player, the chat bridges and the load generator.
///
/// Encoding a decoded event gives the server's bytes again, and its words in the
/// text encoding are the words the server would have written. What the wire does
/// not carry comes back as follows:
/// - an activity's `liveEdge` (the room keeps it; it is not sent): nil;
/// - a link's `source` beyond its `kind` and `id` (where a link starts, whether it
///   is a `/live/` one): from its URL, as the room read it when it was shared;
/// - the room's own bookkeeping in host replies (a ban's `identities`, an invite's
///   and a bot token's digests, when they were made): empty, and the reply's
///   `serverTime`;
/// - a ban's `address`: the wire says only whether there is one: `""` when there is;
/// - `resumed`'s reason: nil; `suspended`'s: the member's newest suspension.
///
/// Keys it does not know are skipped, and an event `type` it does not know is nil,
/// so a client reads a newer server's additions as before. A value outside a
/// closed set (a role, an error code, a playback status) is an error: the text is
/// not this protocol.
public enum JSONEventDecoding {
    /// The event in `text`; nil when its `type` is not one of this protocol's.
    public static func decode(_ text: String) throws -> RoomEvent? {
        var text = text
        return try text.withUTF8 { try decode($0) }
    }

    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws -> RoomEvent? {
        // The server writes `type` first; any other order costs one more pass.
        var reader = JSONReader(bytes)
        let type = try eventType(&reader)
        reader = JSONReader(bytes)
        let event: RoomEvent?
        switch type {
        case "welcome": event = .welcome(try welcome(&reader))
        case "state": event = .state(try object(&reader, state))
        case "participant": event = try participantEvent(&reader)
        case "participant-left": event = try participantLeft(&reader)
        case "chat": event = .chat(try object(&reader, chatLine))
        case "notice": event = .notice(try notice(&reader))
        case "reply": event = .reply(try reply(&reader))
        case "error": event = .error(try commandError(&reader))
        case "time": event = try time(&reader)
        case "catchup": event = .catchup(try catchup(&reader))
        case "voice": event = .voice(try voiceRoster(&reader))
        case "voice-ticket": event = .voiceTicket(try voiceTicket(&reader))
        case "voice-answer": event = try voiceAnswer(&reader)
        default: return nil
        }
        try reader.end()
        return event
    }

    /// What the load generator reads of every frame: its `type`, and for a
    /// `state` its `seq` and playback `status`. Stops as soon as it has them, so
    /// a state frame costs about what a byte scan for the two fields did.
    public struct Head: Hashable, Sendable {
        public var type: String
        public var seq: Int64?
        public var status: PlaybackStatus?
    }

    public static func head(_ bytes: UnsafeBufferPointer<UInt8>) throws -> Head {
        var reader = JSONReader(bytes)
        try reader.beginObject()
        var head = Head(type: "", seq: nil, status: nil)
        var sawType = false
        while let key = try reader.nextKey() {
            switch key {
            case "type":
                head.type = try reader.readString()
                sawType = true
                guard head.type == "state" else { return head }
            case "seq":
                head.seq = try reader.readInteger()
            case "playback":
                try reader.beginObject()
                while let inner = try reader.nextKey() {
                    guard inner == "status" else { try reader.skipValue(); continue }
                    head.status = try closed(&reader, PlaybackStatus.self)
                    if sawType, head.seq != nil { return head }
                }
            default:
                try reader.skipValue()
            }
        }
        guard sawType else { throw reader.failure("an event without a type") }
        return head
    }

    // MARK: Events

    private static func eventType(_ reader: inout JSONReader) throws -> String {
        try reader.beginObject()
        while let key = try reader.nextKey() {
            if key == "type" { return try reader.readString() }
            try reader.skipValue()
        }
        throw reader.failure("an event without a type")
    }

    private static func welcome(_ reader: inout JSONReader) throws -> Welcome {
        var you: Participant?, room: RoomName?, serverTime: ServerInstant?, resume: String?, ownerKey: String?
        var participants: [Participant] = [], chat: [ChatLine] = [], limits = Welcome.Limits.defaults
        try members(&reader) { reader, key in
            switch key {
            case "you": you = try object(&reader, participant)
            case "room": room = try valid(&reader) { RoomName($0) }
            case "serverTime": serverTime = try instant(&reader)
            case "resume": resume = try reader.readString()
            case "ownerKey": ownerKey = try optional(&reader) { reader in try reader.readString() }
            case "participants": participants = try reader.readArray { reader in try object(&reader, participant) }
            case "chat": chat = try reader.readArray { reader in try object(&reader, chatLine) }
            case "limits":
                var line: Int64?, message: Int64?
                try members(&reader) { reader, key in
                    switch key {
                    case "lineBytes": line = try reader.readInteger()
                    case "messageBytes": message = try reader.readInteger()
                    default: try reader.skipValue()
                    }
                }
                limits = Welcome.Limits(lineBytes: Int(try required(line, "lineBytes", reader)),
                                        messageBytes: Int(try required(message, "messageBytes", reader)))
            default: try reader.skipValue()
            }
        }
        return Welcome(you: try required(you, "you", reader), room: try required(room, "room", reader),
                       serverTime: try required(serverTime, "serverTime", reader), resume: try required(resume, "resume", reader),
                       ownerKey: ownerKey, participants: participants, chat: chat, limits: limits)
    }

    private static func participantEvent(_ reader: inout JSONReader) throws -> RoomEvent {
        var member: Participant?, change: String?, from: DisplayName?
        try members(&reader) { reader, key in
            switch key {
            case "participant": member = try object(&reader, participant)
            case "change": change = try reader.readString()
            case "from": from = try name(&reader)
            default: try reader.skipValue()
            }
        }
        let who = try required(member, "participant", reader)
        let changeName = try required(change, "change", reader)
        let decoded: ParticipantChange? = switch changeName {
        case "renamed": from.map { .renamed(from: $0) }
        case "suspended": who.suspensions.last.map { .suspended($0) }
        case "resumed": .resumed(nil)
        default: ParticipantChange.simple[changeName]
        }
        guard let decoded else { throw reader.failure("a participant change \"\(changeName)\" this protocol does not have") }
        return .participant(who, change: decoded)
    }

    private static func participantLeft(_ reader: inout JSONReader) throws -> RoomEvent {
        var id: MemberID?, name: DisplayName?, reason: DepartureReason?
        try members(&reader) { reader, key in
            switch key {
            case "id": id = MemberID(try reader.readString())
            case "name": name = try Self.name(&reader)
            case "reason": reason = try closed(&reader, DepartureReason.self)
            default: try reader.skipValue()
            }
        }
        return .participantLeft(try required(id, "id", reader), name: try required(name, "name", reader),
                                reason: try required(reason, "reason", reader))
    }

    private static func notice(_ reader: inout JSONReader) throws -> Notice {
        var text: String?, cause: Cause?, by: MemberID?
        try members(&reader) { reader, key in
            switch key {
            case "text": text = try reader.readString()
            case "cause": cause = try optional(&reader) { reader in Cause(rawValue: try reader.readString()) }
            case "by": by = try optional(&reader, memberID)
            default: try reader.skipValue()
            }
        }
        return Notice(text: try required(text, "text", reader), cause: cause, by: by)
    }

    private static func commandError(_ reader: inout JSONReader) throws -> CommandError {
        var code: ErrorCode?, message: String?, command: CommandName?
        try members(&reader) { reader, key in
            switch key {
            case "code": code = try closed(&reader, ErrorCode.self)
            case "message": message = try reader.readString()
            case "command": command = try optional(&reader) { reader in try closed(&reader, CommandName.self) }
            default: try reader.skipValue()
            }
        }
        return CommandError(try required(code, "code", reader), command: command, message: try required(message, "message", reader))
    }

    private static func time(_ reader: inout JSONReader) throws -> RoomEvent {
        var client: Double?, server: ServerInstant?
        try members(&reader) { reader, key in
            switch key {
            case "client": client = try reader.readNumber()
            case "server": server = try instant(&reader)
            default: try reader.skipValue()
            }
        }
        return .time(client: try required(client, "client", reader), server: try required(server, "server", reader))
    }

    private static func catchup(_ reader: inout JSONReader) throws -> Catchup {
        var from: MediaTime?, rate: PlaybackRate?, until: ServerInstant?
        try members(&reader) { reader, key in
            switch key {
            case "from": from = MediaTime(seconds: try reader.readNumber())
            case "rate": rate = try playbackRate(&reader)
            case "until": until = try instant(&reader)
            default: try reader.skipValue()
            }
        }
        return Catchup(from: try required(from, "from", reader), rate: try required(rate, "rate", reader),
                       until: try required(until, "until", reader))
    }

    // MARK: Voice

    private static func voiceRoster(_ reader: inout JSONReader) throws -> VoiceRoster {
        var change: VoiceChange?, member: MemberID?, name: DisplayName?, mode: VoiceMode?, seats: [VoiceRoster.Seat]?
        try members(&reader) { reader, key in
            switch key {
            case "change": change = try closed(&reader, VoiceChange.self)
            case "member": member = try optional(&reader, memberID)
            case "name": name = try optional(&reader, Self.name)
            case "mode": mode = try closed(&reader, VoiceMode.self)
            case "seats": seats = try reader.readArray { reader in try object(&reader, voiceSeat) }
            default: try reader.skipValue()
            }
        }
        return VoiceRoster(change: try required(change, "change", reader), member: member, name: name,
                           mode: try required(mode, "mode", reader), seats: try required(seats, "seats", reader))
    }

    private static func voiceSeat(_ reader: inout JSONReader) throws -> VoiceRoster.Seat {
        var id: MemberID?, name: DisplayName?, muted: Bool?, speaking: Bool?
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "id": id = try memberID(&reader)
            case "name": name = try Self.name(&reader)
            case "muted": muted = try reader.readBool()
            case "speaking": speaking = try reader.readBool()
            default: try reader.skipValue()
            }
        }
        return VoiceRoster.Seat(id: try required(id, "id", reader), name: try required(name, "name", reader),
                                muted: try required(muted, "muted", reader), speaking: try required(speaking, "speaking", reader))
    }

    private static func voiceTicket(_ reader: inout JSONReader) throws -> VoiceTicket {
        var servers: [IceServer]?, expires: ServerInstant?
        try members(&reader) { reader, key in
            switch key {
            case "iceServers": servers = try reader.readArray { reader in try object(&reader, iceServer) }
            case "expires": expires = try instant(&reader)
            default: try reader.skipValue()
            }
        }
        return VoiceTicket(iceServers: try required(servers, "iceServers", reader), expires: try required(expires, "expires", reader))
    }

    private static func iceServer(_ reader: inout JSONReader) throws -> IceServer {
        var urls: [String]?, username: String?, credential: String?
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "urls": urls = try reader.readArray { reader in try reader.readString() }
            case "username": username = try reader.readString()
            case "credential": credential = try reader.readString()
            default: try reader.skipValue()
            }
        }
        return IceServer(urls: try required(urls, "urls", reader), username: username, credential: credential)
    }

    private static func voiceAnswer(_ reader: inout JSONReader) throws -> RoomEvent {
        var sdp: String?
        try members(&reader) { reader, key in
            switch key {
            case "sdp": sdp = try reader.readString()
            default: try reader.skipValue()
            }
        }
        return .voiceAnswer(sdp: try required(sdp, "sdp", reader))
    }

    // MARK: Replies

    private static func reply(_ reader: inout JSONReader) throws -> Reply {
        var command: CommandName?, lines: [String]?, participants: [Participant]?, state: RoomState?
        var position: MediaTime?, serverTime: ServerInstant?, queue: [QueueItem]?, policy: RoomPolicy?
        var access: Access?, bans: [BanFields]?, invite: InviteFields?, invites: [InviteFields]?, token: String?
        var bot: BotFields?, tokens: [BotFields]?
        try members(&reader) { reader, key in
            switch key {
            case "command": command = try closed(&reader, CommandName.self)
            case "lines": lines = try reader.readArray { reader in try reader.readString() }
            case "participants": participants = try reader.readArray { reader in try object(&reader, participant) }
            case "state": state = try object(&reader, Self.state)
            case "position": position = MediaTime(seconds: try reader.readNumber())
            case "serverTime": serverTime = try instant(&reader)
            case "queue": queue = try reader.readArray { reader in try object(&reader, queueItem) }
            case "policy": policy = try object(&reader, Self.policy)
            case "access": access = try object(&reader, Self.access)
            case "bans": bans = try reader.readArray { reader in try ban(&reader) }
            case "invite": invite = try Self.invite(&reader)
            case "invites": invites = try reader.readArray { reader in try Self.invite(&reader) }
            case "token": token = try reader.readString()
            case "bot": bot = try Self.bot(&reader)
            case "tokens": tokens = try reader.readArray { reader in try Self.bot(&reader) }
            default: try reader.skipValue()
            }
        }
        let now = serverTime
        switch try required(command, "command", reader) {
        case .help:
            return .help(lines: try required(lines, "lines", reader))
        case .who:
            return .who(try required(participants, "participants", reader))
        case .status:
            return .status(try required(state, "state", reader), position: try required(position, "position", reader),
                           now: try required(now, "serverTime", reader))
        case .queue:
            return .queue(try required(queue, "queue", reader))
        case .policy:
            var value = try required(policy, "policy", reader)
            access?.apply(to: &value)
            return .policy(value)
        case .bans:
            let now = try required(now, "serverTime", reader)
            return .bans(try required(bans, "bans", reader).map { $0.ban(at: now) }, now: now)
        case .invite:
            let now = try required(now, "serverTime", reader)
            return .invite(try required(invite, "invite", reader).invite(at: now), token: try required(token, "token", reader), now: now)
        case .invites:
            let now = try required(now, "serverTime", reader)
            return .invites(try required(invites, "invites", reader).map { $0.invite(at: now) }, now: now)
        case .token:
            return .token(try required(bot, "bot", reader).token(at: now), token: try required(token, "token", reader))
        case .tokens:
            return .tokens(try required(tokens, "tokens", reader).map { $0.token(at: now) })
        default:
            throw reader.failure("a reply to a command that has none")
        }
    }

    /// A ban as the wire shows it to hosts: no identities, and whether an address is kept out.
    private struct BanFields {
        var number: Int64, kind: Ban.Kind, name: DisplayName, until: ServerInstant?, reason: String?, by: DisplayName
        var address: Bool

        func ban(at now: ServerInstant) -> Ban {
            Ban(number: number, kind: kind, name: name, identities: [], address: address ? "" : nil, until: until,
                reason: reason, by: by, at: now)
        }
    }

    private struct InviteFields {
        var number: Int64, usesLeft: Int, expires: ServerInstant, by: DisplayName

        func invite(at now: ServerInstant) -> Invite {
            Invite(number: number, tokenDigest: "", usesLeft: usesLeft, expires: expires, by: by, at: now)
        }
    }

    private struct BotFields {
        var number: Int64, name: DisplayName, scope: TokenScope, by: DisplayName

        func token(at now: ServerInstant?) -> BotToken {
            BotToken(number: number, name: name, scope: scope, digest: "", by: by, at: now ?? ServerInstant(milliseconds: 0))
        }
    }

    private static func ban(_ reader: inout JSONReader) throws -> BanFields {
        var number: Int64?, kind: Ban.Kind?, name: DisplayName?, until: ServerInstant?, reason: String?, by: DisplayName?
        var address = false
        try members(&reader) { reader, key in
            switch key {
            case "number": number = try reader.readInteger()
            case "kind": kind = try closed(&reader, Ban.Kind.self)
            case "name": name = try Self.name(&reader)
            case "until": until = try optional(&reader, instant)
            case "reason": reason = try optional(&reader) { reader in try reader.readString() }
            case "by": by = try Self.name(&reader)
            case "address": address = try reader.readBool()
            default: try reader.skipValue()
            }
        }
        return BanFields(number: try required(number, "number", reader), kind: try required(kind, "kind", reader),
                         name: try required(name, "name", reader), until: until, reason: reason,
                         by: try required(by, "by", reader), address: address)
    }

    private static func invite(_ reader: inout JSONReader) throws -> InviteFields {
        var number: Int64?, uses: Int64?, expires: ServerInstant?, by: DisplayName?
        try members(&reader) { reader, key in
            switch key {
            case "number": number = try reader.readInteger()
            case "usesLeft": uses = try reader.readInteger()
            case "expires": expires = try instant(&reader)
            case "by": by = try name(&reader)
            default: try reader.skipValue()
            }
        }
        return InviteFields(number: try required(number, "number", reader), usesLeft: Int(try required(uses, "usesLeft", reader)),
                            expires: try required(expires, "expires", reader), by: try required(by, "by", reader))
    }

    private static func bot(_ reader: inout JSONReader) throws -> BotFields {
        var number: Int64?, name: DisplayName?, scope: TokenScope?, by: DisplayName?
        try members(&reader) { reader, key in
            switch key {
            case "number": number = try reader.readInteger()
            case "name": name = try Self.name(&reader)
            case "scope": scope = try closed(&reader, TokenScope.self)
            case "by": by = try Self.name(&reader)
            default: try reader.skipValue()
            }
        }
        return BotFields(number: try required(number, "number", reader), name: try required(name, "name", reader),
                         scope: try required(scope, "scope", reader), by: try required(by, "by", reader))
    }

    // MARK: The state

    private static func state(_ reader: inout JSONReader) throws -> RoomState {
        var seq: Int64?, session: GroupSession?, playback: Playback?, queue: [QueueItem] = [], policy: RoomPolicy?
        var access: Access?
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "seq": seq = try reader.readInteger()
            case "session": session = try optional(&reader) { reader in try object(&reader, groupSession) }
            case "playback": playback = try object(&reader, Self.playback)
            case "queue": queue = try reader.readArray { reader in try object(&reader, queueItem) }
            case "policy": policy = try object(&reader, Self.policy)
            case "access": access = try object(&reader, Self.access)
            default: try reader.skipValue()
            }
        }
        var rules = try required(policy, "policy", reader)
        access?.apply(to: &rules)
        return RoomState(seq: try required(seq, "seq", reader), session: session,
                         playback: try required(playback, "playback", reader), queue: queue, policy: rules)
    }

    private static func groupSession(_ reader: inout JSONReader) throws -> GroupSession {
        var state: GroupSession.State?, reason: String?, activity: Activity?
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "state": state = try closed(&reader, GroupSession.State.self)
            case "reason": reason = try optional(&reader) { reader in try reader.readString() }
            case "activity": activity = try object(&reader, Self.activity)
            default: try reader.skipValue()
            }
        }
        return GroupSession(state: try required(state, "state", reader), reason: reason,
                            activity: try required(activity, "activity", reader))
    }

    private static func activity(_ reader: inout JSONReader) throws -> Activity {
        var id: String?, url: MediaURL?, title: String?, identifier: String?, live = false, duration: MediaTime?
        var subtitles: [SubtitleTrack] = [], kind: String?, own: (hash: UInt64, size: Int64)?
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "id": id = try reader.readString()
            case "url": url = try optional(&reader, mediaURL)
            case "title": title = try reader.readString()
            case "identifier": identifier = try reader.readString()
            case "live": live = try reader.readBool()
            case "duration": duration = try optional(&reader) { reader in MediaTime(seconds: try reader.readNumber()) }
            case "subtitles": subtitles = try reader.readArray { reader in try object(&reader, subtitle) }
            case "source":
                var hash: UInt64?, size: Int64?
                try members(&reader) { reader, key in
                    switch key {
                    case "kind": kind = try reader.readString()
                    case "hash": hash = OwnCopy.parseHash(Substring(try reader.readString()))
                    case "size": size = try reader.readInteger()
                    default: try reader.skipValue()
                    }
                }
                if let hash, let size { own = (hash, size) }
            default: try reader.skipValue()
            }
        }
        // A link's source is what the room read from the link; an own copy's is on the wire.
        let source: MediaSource
        if let url {
            guard let classified = MediaSource.classify(url).source else { throw reader.failure("an activity of a link no player plays") }
            source = classified
        } else if kind == "own", let own, let copy = OwnCopy(hash: own.hash, size: own.size, duration: duration?.seconds ?? 0) {
            source = .own(copy)
        } else {
            throw reader.failure("an activity with neither a link nor an own copy")
        }
        guard kind == nil || kind == source.kind else { throw reader.failure("an activity whose source is not its link's") }
        return Activity(id: try required(id, "id", reader), url: url, title: try required(title, "title", reader),
                        identifier: try required(identifier, "identifier", reader), subtitles: subtitles, source: source,
                        live: live, duration: duration)
    }

    private static func subtitle(_ reader: inout JSONReader) throws -> SubtitleTrack {
        var id: String?, url: MediaURL?, label: String?
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "id": id = try reader.readString()
            case "url": url = try mediaURL(&reader)
            case "label": label = try reader.readString()
            default: try reader.skipValue()
            }
        }
        return SubtitleTrack(id: try required(id, "id", reader), url: try required(url, "url", reader),
                             label: try required(label, "label", reader))
    }

    private static func playback(_ reader: inout JSONReader) throws -> Playback {
        var status: PlaybackStatus?, item: String?, rate: PlaybackRate?, position: MediaTime?, at: ServerInstant?
        var by: MemberID?, cause: Cause?
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "status": status = try closed(&reader, PlaybackStatus.self)
            case "item": item = try optional(&reader) { reader in try reader.readString() }
            case "rate": rate = try playbackRate(&reader)
            case "position": position = MediaTime(seconds: try reader.readNumber())
            case "at": at = try instant(&reader)
            case "by": by = try optional(&reader, memberID)
            case "cause": cause = Cause(rawValue: try reader.readString())
            default: try reader.skipValue()
            }
        }
        return Playback(status: try required(status, "status", reader), item: item, rate: try required(rate, "rate", reader),
                        position: try required(position, "position", reader), at: try required(at, "at", reader), by: by,
                        cause: try required(cause, "cause", reader))
    }

    private static func queueItem(_ reader: inout JSONReader) throws -> QueueItem {
        var id: String?, url: MediaURL?, title: String?
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "id": id = try reader.readString()
            case "url": url = try mediaURL(&reader)
            case "title": title = try reader.readString()
            default: try reader.skipValue()
            }
        }
        return QueueItem(id: try required(id, "id", reader), url: try required(url, "url", reader),
                         title: try required(title, "title", reader))
    }

    private static func policy(_ reader: inout JSONReader) throws -> RoomPolicy {
        var control: ControlPolicy?, stall: StallPolicy?, wait: ServerInterval?
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "control": control = try closed(&reader, ControlPolicy.self)
            case "stall": stall = try closed(&reader, StallPolicy.self)
            case "wait": wait = ServerInterval(seconds: try reader.readNumber())
            default: try reader.skipValue()
            }
        }
        return RoomPolicy(control: try required(control, "control", reader), stall: try required(stall, "stall", reader),
                          wait: try required(wait, "wait", reader))
    }

    /// The policy's three fields the contract lists are apart from these (`access`).
    private struct Access {
        var locked = false, password = false, listed = false

        func apply(to policy: inout RoomPolicy) {
            policy.locked = locked
            policy.password = password
            policy.listed = listed
        }
    }

    private static func access(_ reader: inout JSONReader) throws -> Access {
        var access = Access()
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "locked": access.locked = try reader.readBool()
            case "password": access.password = try reader.readBool()
            case "public": access.listed = try reader.readBool()
            default: try reader.skipValue()
            }
        }
        return access
    }

    // MARK: Members and chat

    private static func participant(_ reader: inout JSONReader) throws -> Participant {
        var id: MemberID?, name: DisplayName?, role: Role?, joined = false, player = false, ready = false
        var suspensions: [SuspensionReason] = [], autoplay = false, connected = true, owner = false, muted = false
        var copy: Bool?, scope: TokenScope?, software: String?
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "id": id = try memberID(&reader)
            case "name": name = try Self.name(&reader)
            case "role": role = try closed(&reader, Role.self)
            case "joined": joined = try reader.readBool()
            case "player": player = try reader.readBool()
            case "ready": ready = try reader.readBool()
            case "suspensions": suspensions = try reader.readArray { reader in try valid(&reader, SuspensionReason.init(rawValue:)) }
            case "autoplay": autoplay = try reader.readBool()
            case "connected": connected = try reader.readBool()
            case "owner": owner = try reader.readBool()
            case "muted": muted = try reader.readBool()
            case "copy": copy = try reader.readBool()
            case "bot": scope = try closed(&reader, TokenScope.self)
            case "software": software = Participant.softwareName(try reader.readString())
            default: try reader.skipValue()
            }
        }
        return Participant(id: try required(id, "id", reader), name: try required(name, "name", reader),
                           role: try required(role, "role", reader), joined: joined, player: player, ready: ready,
                           suspensions: suspensions, autoplay: autoplay, connected: connected, owner: owner, muted: muted,
                           copy: copy, scope: scope, software: software)
    }

    private static func chatLine(_ reader: inout JSONReader) throws -> ChatLine {
        var from: MemberID?, name: DisplayName?, text: String?, at: ServerInstant?, me = false
        try membersOfOpenObject(&reader) { reader, key in
            switch key {
            case "from": from = try memberID(&reader)
            case "name": name = try Self.name(&reader)
            case "text": text = try reader.readString()
            case "at": at = try instant(&reader)
            case "me": me = try reader.readBool()
            default: try reader.skipValue()
            }
        }
        return ChatLine(from: try required(from, "from", reader), name: try required(name, "name", reader),
                        text: try required(text, "text", reader), at: try required(at, "at", reader), me: me)
    }

    // MARK: Pieces

    /// Reads `{`, then hands each key to `member`, which reads its value.
    private static func members(_ reader: inout JSONReader,
                                _ member: (inout JSONReader, String) throws -> Void) throws {
        try reader.beginObject()
        try membersOfOpenObject(&reader, member)
    }

    private static func membersOfOpenObject(_ reader: inout JSONReader,
                                            _ member: (inout JSONReader, String) throws -> Void) throws {
        while let key = try reader.nextKey() { try member(&reader, key) }
    }

    /// An object read by `fields`, which expects the reader past its `{`.
    private static func object<T>(_ reader: inout JSONReader,
                                  _ fields: (inout JSONReader) throws -> T) throws -> T {
        try reader.beginObject()
        return try fields(&reader)
    }

    private static func optional<T>(_ reader: inout JSONReader,
                                    _ value: (inout JSONReader) throws -> T?) throws -> T? {
        reader.readNull() ? nil : try value(&reader)
    }

    private static func required<T>(_ value: T?, _ key: String, _ reader: JSONReader) throws -> T {
        guard let value else { throw reader.failure("no \"\(key)\"") }
        return value
    }

    private static func closed<T: RawRepresentable<String>>(_ reader: inout JSONReader, _ type: T.Type) throws -> T {
        let text = try reader.readString()
        guard let value = T(rawValue: text) else { throw reader.failure("\"\(text)\" is not a \(T.self) of this protocol") }
        return value
    }

    private static func valid<T>(_ reader: inout JSONReader, _ make: (String) -> T?) throws -> T {
        let text = try reader.readString()
        guard let value = make(text) else { throw reader.failure("\"\(text)\" is not a valid \(T.self)") }
        return value
    }

    private static func name(_ reader: inout JSONReader) throws -> DisplayName {
        // A name the room announced: stored names from before the lookalike rules included.
        try valid(&reader, DisplayName.init(stored:))
    }

    private static func memberID(_ reader: inout JSONReader) throws -> MemberID {
        MemberID(try reader.readString())
    }

    private static func mediaURL(_ reader: inout JSONReader) throws -> MediaURL {
        try valid(&reader) { MediaURL($0) }
    }

    private static func instant(_ reader: inout JSONReader) throws -> ServerInstant {
        ServerInstant(milliseconds: try reader.readInteger())
    }

    private static func playbackRate(_ reader: inout JSONReader) throws -> PlaybackRate {
        let value = try reader.readNumber()
        guard let rate = PlaybackRate(value) else { throw reader.failure("a rate of \(value) is out of range") }
        return rate
    }
}

extension ParticipantChange {
    /// The changes whose name says all of them, by name.
    static let simple: [String: ParticipantChange] = Dictionary(uniqueKeysWithValues: [
        ParticipantChange.arrived, .reconnected, .disconnected, .role, .joinedSession, .leftSession, .player, .autoplay,
        .ready, .stalled, .muted, .unmuted, .copy,
    ].map { ($0.name, $0) })
}
