import CowatchTime

/// Limits and timings of a room. Every value is explicit so the server's
/// configuration can set it; the defaults suit a community server.
public struct RoomConfiguration: Hashable, Sendable {
    /// Members (connected or within their resume grace) a room accepts.
    public var maximumMembers: Int
    public var maximumQueueLength: Int
    /// Subtitle tracks one activity may have.
    public var maximumSubtitleTracks: Int
    /// How long a disconnected member's identity is kept for `resume`.
    public var resumeGrace: ServerInterval
    /// The shortest lead of a coordinated start: time for clients to schedule a
    /// start even when measured round trips are tiny.
    public var minimumLead: ServerInterval
    /// The contract caps a start's lead at one second.
    public var maximumLead: ServerInterval
    /// Added to the slowest measured round trip.
    public var leadMargin: ServerInterval
    /// The policy of a new room.
    public var defaultPolicy: RoomPolicy
    /// Chat lines a room keeps for newcomers and restarts.
    public var chatHistory: Int
    /// How long `/kick` keeps the member out.
    public var kickCooldown: ServerInterval
    /// How long an empty room, with its owner, policy and bans, is kept.
    public var roomExpiry: ServerInterval
    /// Bans and kicks also keep out the member's address.
    public var addressBans: Bool
    /// Bans and kick cooldowns a room keeps; the oldest goes first.
    public var maximumBans: Int
    /// Wrong passwords one address may try in `passwordAttemptWindow` before it
    /// is refused without checking.
    public var passwordAttempts: Int
    public var passwordAttemptWindow: ServerInterval
    /// scrypt's parameters for room passwords set from now on (each check at
    /// the door costs one scrypt); digests made with others are re-made on the
    /// next right password.
    public var passwordHashing: PasswordHashing
    /// Invite links a room keeps in force.
    public var maximumInvites: Int
    /// Hosts `/watch` and `/queue` may share media from (lowercase, exact); empty: any.
    public var mediaHosts: [String]
    /// How long an empty room that nobody ever used (nothing shared, said or set
    /// in it) is kept: such rooms cost a stranger nothing to make.
    public var unusedRoomExpiry = ServerInterval(milliseconds: 86_400_000)
    /// Bytes of chat text a room keeps for newcomers and restarts, within
    /// `chatHistory` lines: the oldest lines go first.
    public var chatHistoryBytes = 32 * 1024
    /// Bytes the links, titles and labels of the queue and the subtitle tracks may
    /// take together: every `state` carries them, so a one-line command could
    /// otherwise make the server send this much to every member.
    public var maximumStateBytes = 32 * 1024
    /// The gateway's limits on what a member sends, told in the welcome so that a
    /// client keeps under them rather than learning them from a refusal: the
    /// longest line (`max-line-bytes`) and message (`max-message-bytes`).
    public var announcedLimits = Welcome.Limits.defaults
    /// Players a room may have for each one's `/ready` to be told to every member.
    /// Every such `participant` goes to every member, so a start of N players
    /// would send N x N frames (250,000 for 500, over a second of the server's
    /// time); past this, a `/ready` changes the member's `ready` quietly and the
    /// `state` that starts the group says that everyone is ready.
    public var readinessAnnouncedUpTo = 50
    /// How long the identity of a member whose connection closed while it was
    /// `away` (a page in the background: on a phone the connection goes with the
    /// screen) is kept, when that is longer than `resumeGrace`: the room shows
    /// them away, not gone, and they come back as themselves.
    public var awayGrace = ServerInterval(milliseconds: 1_800_000)
    /// The room's voice: whether there is any, and its seats (docs/voice.md).
    public var voice = VoiceLimits()

    public init(
        maximumMembers: Int = 1_000,
        maximumQueueLength: Int = 100,
        maximumSubtitleTracks: Int = 8,
        resumeGrace: ServerInterval = ServerInterval(milliseconds: 60_000),
        minimumLead: ServerInterval = ServerInterval(milliseconds: 150),
        maximumLead: ServerInterval = ServerInterval(milliseconds: 1_000),
        leadMargin: ServerInterval = ServerInterval(milliseconds: 50),
        defaultPolicy: RoomPolicy = RoomPolicy(),
        chatHistory: Int = 200,
        kickCooldown: ServerInterval = ServerInterval(milliseconds: 600_000),
        roomExpiry: ServerInterval = ServerInterval(milliseconds: 30 * 86_400_000),
        addressBans: Bool = true,
        maximumBans: Int = 1_000,
        passwordAttempts: Int = 5,
        passwordAttemptWindow: ServerInterval = ServerInterval(milliseconds: 60_000),
        passwordHashing: PasswordHashing = PasswordHashing(),
        maximumInvites: Int = 100,
        mediaHosts: [String] = []
    ) {
        self.maximumMembers = maximumMembers
        self.maximumQueueLength = maximumQueueLength
        self.maximumSubtitleTracks = maximumSubtitleTracks
        self.resumeGrace = resumeGrace
        self.minimumLead = minimumLead
        self.maximumLead = maximumLead
        self.leadMargin = leadMargin
        self.defaultPolicy = defaultPolicy
        self.chatHistory = chatHistory
        self.kickCooldown = kickCooldown
        self.roomExpiry = roomExpiry
        self.addressBans = addressBans
        self.maximumBans = maximumBans
        self.passwordAttempts = passwordAttempts
        self.passwordAttemptWindow = passwordAttemptWindow
        self.passwordHashing = passwordHashing
        self.maximumInvites = maximumInvites
        self.mediaHosts = mediaHosts
    }
}

extension RoomConfiguration {
    /// How long a disconnected member's identity is kept: the resume grace, or
    /// the away grace for a member that was away (a page in the background).
    func grace(for member: Member) -> ServerInterval {
        member.suspensions.contains(.away) && awayGrace > resumeGrace ? awayGrace : resumeGrace
    }
}
