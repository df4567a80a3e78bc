import CowatchTime
import SlashCommands

/// What the room asks its host (the gateway) to do, in order.
public enum RoomAction: Hashable, Sendable {
    /// To every connected member but `except`. One event, however many recipients:
    /// the gateway encodes it once and fans the bytes out.
    case broadcast(RoomEvent, except: MemberID? = nil)
    case send(RoomEvent, to: MemberID)
    /// Call `timerFired(_:now:)` with this timer at (or after) the instant.
    case schedule(RoomTimer, at: ServerInstant)
    case cancel(RoomTimer)
    /// Close this member's connection (it was kicked); the room has already forgotten it.
    case closeConnection(MemberID, reason: String)
    /// Keep this snapshot so the room survives a restart.
    case persist(RoomSnapshot)
    /// Keep (or replace) what a restart needs of this member.
    case persistMember(MemberRecord)
    /// The member is gone for good.
    case forgetMember(MemberID)
    /// Keep this chat line among the room's recent ones.
    case persistChat(ChatLine)
    /// The room expired (empty for the configured time): forget it and all it kept.
    case forgetRoom
    /// To the media server's link (docs/voice.md): the room decided who speaks.
    case voice(VoiceOrder)
}

/// The timers a room may arm. Each carries what it was armed for, so a timer that
/// fires after the situation moved on is recognised and ignored.
public enum RoomTimer: Hashable, Sendable {
    /// The wait limit of the coordinated start whose readiness anchor is `anchor`.
    case waitLimit(anchor: Int64)
    /// The end of a member's catch-up replay.
    case catchupEnds(MemberID, serial: Int64)
    /// The end of a disconnected member's resume grace period.
    case resumeExpires(MemberID, serial: Int64)
    /// The end of the time an empty room is kept; `emptySince` tells a stale one.
    case roomExpires(emptySince: ServerInstant)
}

/// The room-level state to persist: what a restart needs to bring the room back.
public struct RoomSnapshot: Hashable, Sendable, Codable {
    public var room: RoomName
    public var state: RoomState
    /// When it was taken: how long the room was down is measured from the latest.
    public var savedAt: ServerInstant
    /// The counters that keep ids unique across restarts.
    public var nextMemberNumber: Int64
    public var nextActivityNumber: Int64
    public var nextQueueNumber: Int64
    /// The seq at which the current item became current (for `/ended`).
    public var itemSeq: Int64
    /// Owner, bans, slow mode; nil in snapshots saved before rooms had them.
    public var protection: RoomProtection?
}

/// What a restart needs of one member: who it is and how it stood in the room.
/// Readiness and connection are not kept: a restored member is disconnected
/// until it comes back with its resume token.
public struct MemberRecord: Hashable, Sendable, Codable {
    public var id: MemberID
    public var name: DisplayName
    public var role: Role
    public var joined: Bool
    public var joinsNewSessions: Bool
    public var player: Bool
    public var autoplay: Bool
    public var suspensions: [SuspensionReason]
    public var arrival: Int64
    public var resumeToken: String
    public var owner: Bool
    public var muted: Bool
    public var deviceDigest: String?
    public var scope: TokenScope?
    public var tokenNumber: Int64?

    public init(id: MemberID, name: DisplayName, role: Role, joined: Bool, joinsNewSessions: Bool, player: Bool,
                autoplay: Bool, suspensions: [SuspensionReason], arrival: Int64, resumeToken: String,
                owner: Bool = false, muted: Bool = false, deviceDigest: String? = nil, scope: TokenScope? = nil,
                tokenNumber: Int64? = nil) {
        self.id = id
        self.name = name
        self.role = role
        self.joined = joined
        self.joinsNewSessions = joinsNewSessions
        self.player = player
        self.autoplay = autoplay
        self.suspensions = suspensions
        self.arrival = arrival
        self.resumeToken = resumeToken
        self.owner = owner
        self.muted = muted
        self.deviceDigest = deviceDigest
        self.scope = scope
        self.tokenNumber = tokenNumber
    }

    /// Records saved before owners, mutes and devices existed read as none of them.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try values.decode(MemberID.self, forKey: .id), name: try values.decode(DisplayName.self, forKey: .name),
                  role: try values.decode(Role.self, forKey: .role), joined: try values.decode(Bool.self, forKey: .joined),
                  joinsNewSessions: try values.decode(Bool.self, forKey: .joinsNewSessions),
                  player: try values.decode(Bool.self, forKey: .player), autoplay: try values.decode(Bool.self, forKey: .autoplay),
                  suspensions: try values.decode([SuspensionReason].self, forKey: .suspensions),
                  arrival: try values.decode(Int64.self, forKey: .arrival),
                  resumeToken: try values.decode(String.self, forKey: .resumeToken),
                  owner: try values.decodeIfPresent(Bool.self, forKey: .owner) ?? false,
                  muted: try values.decodeIfPresent(Bool.self, forKey: .muted) ?? false,
                  deviceDigest: try values.decodeIfPresent(String.self, forKey: .deviceDigest),
                  scope: try values.decodeIfPresent(TokenScope.self, forKey: .scope),
                  tokenNumber: try values.decodeIfPresent(Int64.self, forKey: .tokenNumber))
    }
}
