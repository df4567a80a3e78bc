/// The `code` of an `error` event: stable strings clients can switch on.
public enum ErrorCode: String, Hashable, Sendable, CaseIterable {
    case unknownCommand = "unknown-command"
    case badArguments = "bad-arguments"
    case forbidden
    case noSession = "no-session"
    case rateLimited = "rate-limited"
    /// The room cannot change now (in a cluster: its database is out of reach);
    /// the line was not applied. A connection refused so is closed with 4011.
    case unavailable
    case tooLong = "too-long"
    /// A transport command from a member whose player is separated from the group.
    case suspended
    case notSuspended = "not-suspended"
    case notAPlayer = "not-a-player"
    case queueEmpty = "queue-empty"
    case queueFull = "queue-full"
    case noSuchMember = "no-such-member"
    case lastHost = "last-host"
    case notPossible = "not-possible"
    case roomFull = "room-full"
    /// A connection refused because a ban or a kick's cooldown keeps it out.
    case banned
    /// A line from a member a host muted.
    case muted
    /// A chat line sooner than the room's slow mode allows.
    case slowMode = "slow-mode"
    /// A connection refused: the room is locked and it brought no invite.
    case locked
    /// A connection refused: the room has a password and none was given.
    case passwordRequired = "password-required"
    case wrongPassword = "wrong-password"
    /// A connection refused: too many wrong passwords from its address lately.
    case tooManyAttempts = "too-many-attempts"
    /// `/watch` or `/queue` of media from a host the server does not allow.
    case mediaHost = "media-host"
    /// A connection refused: its bot token is unknown or revoked.
    case badToken = "bad-token"
    /// A player report (`/ready`, `/ended`) for a state that is no longer the one
    /// to answer, or was never sent: it changed nothing.
    case staleReport = "stale-report"
    /// The `name=` a connection asked for is not a valid name; it came in under
    /// another (the message says why, and which).
    case badName = "bad-name"
    /// `/watch` or `/queue` of a link that certainly does not serve media (a web
    /// page, an image, a 404), as the server found when it looked.
    case notMedia = "not-media"
    /// `/voice join` or `/voice offer` while the room's voice cannot take the
    /// member: the server has no media server, it is out of reach, or the room
    /// or the server has no seat left (the message says which).
    case voiceUnavailable = "voice-unavailable"
}

/// A refusal: the line was not carried out, and the sender alone is told why.
public struct CommandError: Error, Hashable, Sendable {
    public var code: ErrorCode
    /// The command refused, when the line named a known one.
    public var command: CommandName?
    /// A sentence for people; includes the usage on `bad-arguments`.
    public var message: String

    public init(_ code: ErrorCode, command: CommandName?, message: String) {
        self.code = code
        self.command = command
        self.message = message
    }
}

/// The start of `text` to quote back in a refusal: at most `limit` Unicode
/// scalars. A count of characters would not bound it, since one character can
/// carry thousands of combining marks and the message would echo the whole line.
func excerpt(_ text: Substring, _ limit: Int = 40) -> Substring {
    Substring(text.unicodeScalars.prefix(limit))
}
