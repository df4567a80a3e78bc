import CowatchTime
import SlashCommands

/// Everything a member can be sent. Encoded once per broadcast by `EncodedEvent`,
/// in JSON for `cowatch.v1.json` and as human lines for `cowatch.v1.text`.
public enum RoomEvent: Hashable, Sendable {
    case welcome(Welcome)
    case state(RoomState)
    case participant(Participant, change: ParticipantChange)
    case participantLeft(MemberID, name: DisplayName, reason: DepartureReason)
    case chat(ChatLine)
    case notice(Notice)
    case reply(Reply)
    case error(CommandError)
    /// `/time`: the client's value echoed, and the server's clock when answered.
    case time(client: Double, server: ServerInstant)
    case catchup(Catchup)
    /// Who is in the room's voice (docs/voice.md).
    case voice(VoiceRoster)
    /// To one member, the answer to `/voice join`.
    case voiceTicket(VoiceTicket)
    /// To one member, the media server's answer to its offer (a session description).
    case voiceAnswer(sdp: String)

    /// The `type` field of the JSON encoding.
    public var type: String {
        switch self {
        case .welcome: "welcome"
        case .state: "state"
        case .participant: "participant"
        case .participantLeft: "participant-left"
        case .chat: "chat"
        case .notice: "notice"
        case .reply: "reply"
        case .error: "error"
        case .time: "time"
        case .catchup: "catchup"
        case .voice: "voice"
        case .voiceTicket: "voice-ticket"
        case .voiceAnswer: "voice-answer"
        }
    }
}

public struct Welcome: Hashable, Sendable {
    public var you: Participant
    public var room: RoomName
    public var serverTime: ServerInstant
    /// The token that restores this identity on reconnect (`?resume=`).
    public var resume: String
    /// The room's owner key, to its creator alone, once: `?owner=` makes its holder
    /// the owner again from any device.
    public var ownerKey: String?
    /// Every member, in order of arrival, `you` included.
    public var participants: [Participant]
    /// The room's recent chat, oldest first.
    public var chat: [ChatLine]
    /// What this server takes from a member at most.
    public var limits = Limits.defaults

    public struct Limits: Hashable, Sendable {
        /// UTF-8 bytes of one line (a command or a chat line); longer is `too-long`.
        public var lineBytes: Int
        /// UTF-8 bytes of one WebSocket message; larger is closed with 1009.
        public var messageBytes: Int

        public init(lineBytes: Int, messageBytes: Int) {
            self.lineBytes = lineBytes
            self.messageBytes = messageBytes
        }

        /// `cowatch serve`'s defaults.
        public static let defaults = Limits(lineBytes: 4096, messageBytes: 8192)
    }
}

public enum DepartureReason: String, Hashable, Sendable {
    /// Disconnected and did not come back within the resume grace period.
    case left
    case kicked
    case banned
}

public struct ChatLine: Hashable, Sendable, Codable {
    public var from: MemberID
    public var name: DisplayName
    public var text: String
    public var at: ServerInstant
    /// An action line from `/me`.
    public var me: Bool
}

/// A sentence for people about something that happened, with what caused it.
public struct Notice: Hashable, Sendable {
    public var text: String
    public var cause: Cause?
    public var by: MemberID?

    public init(text: String, cause: Cause?, by: MemberID?) {
        self.text = text
        self.cause = cause
        self.by = by
    }
}

/// The answer to an informational command, for its sender alone.
public enum Reply: Hashable, Sendable {
    case help(lines: [String])
    case who([Participant])
    /// The state, and the group's position computed at `now`.
    case status(RoomState, position: MediaTime, now: ServerInstant)
    case queue([QueueItem])
    case policy(RoomPolicy)
    /// Bans and kick cooldowns in force, for hosts.
    case bans([Ban], now: ServerInstant)
    /// A new invite link's token, to the host who made it alone (the room keeps
    /// only its digest).
    case invite(Invite, token: String, now: ServerInstant)
    case invites([Invite], now: ServerInstant)
    /// A new bot token, to the host who made it alone (the room keeps its digest).
    case token(BotToken, token: String)
    case tokens([BotToken])

    public var command: CommandName {
        switch self {
        case .help: .help
        case .who: .who
        case .status: .status
        case .queue: .queue
        case .policy: .policy
        case .bans: .bans
        case .invite: .invite
        case .invites: .invites
        case .token: .token
        case .tokens: .tokens
        }
    }
}

/// Instructions for one member's "What happened?" replay.
public struct Catchup: Hashable, Sendable {
    /// Where to rewind to.
    public var from: MediaTime
    public var rate: PlaybackRate
    /// When the member is level with the group and its suspension ends by itself.
    public var until: ServerInstant
}
