import CowatchTime
import SlashCommands

public enum Role: String, Hashable, Sendable, Codable {
    case host, member
}

/// Everything the room knows about one member. Kept across a disconnect for the
/// resume grace period, so a reconnect restores identity, role and suspensions.
public struct Member: Hashable, Sendable {
    public let id: MemberID
    public internal(set) var name: DisplayName
    public internal(set) var role: Role
    /// In the group session: follows and affects playback.
    public internal(set) var joined: Bool
    /// Joins new sessions by itself (false when the URL said `join=0`).
    public internal(set) var joinsNewSessions: Bool
    public internal(set) var player: Bool
    public internal(set) var autoplay: Bool
    /// Holds the room's owner key: a host no other host can deop, kick, ban or mute.
    public internal(set) var owner: Bool = false
    /// Muted by a host: its chat and commands are refused, its player reports still count.
    public internal(set) var muted: Bool = false
    /// SHA-256 (hex) of the device identity the client presented (`device=`), for bans.
    var deviceDigest: String?
    /// The program it watches with (`software=`), shown to others; not kept across restarts.
    var software: String?
    /// When its last chat line was accepted, for slow mode.
    var lastChat: ServerInstant?
    /// The address of its latest connection (not kept across restarts), for bans.
    var address: String?
    /// A bot that came in with a token: what it may do, and the token's number.
    public internal(set) var scope: TokenScope?
    var tokenNumber: Int64?
    /// Active suspension reasons, oldest first; suspended while any remain.
    public internal(set) var suspensions: [SuspensionReason]
    /// Whether this player has a copy of the current own-copy item (`/have`); nil
    /// until it says, and for every other kind of item. Not kept across a restart:
    /// a player says again when it loads the item.
    public internal(set) var copy: Bool?
    /// The highest state seq this player reported ready for, or -1.
    public internal(set) var readySeq: Int64
    public internal(set) var connected: Bool
    /// Its seat in the room's voice, while it has one.
    public internal(set) var voice: VoiceSeat?
    /// The parts of a voice offer longer than a line, so far (`/voice offer part`).
    var voiceOfferParts = ""
    /// Order of arrival in the room: the lowest is the longest present.
    public let arrival: Int64
    let resumeToken: String
    /// The room's seq when this member last joined the session: a player that
    /// joined after the current anchor and has not been ready since is still
    /// catching up, and its stalls never make the group wait (docs/concepts.md, rule 7).
    var joinedSeq: Int64
    /// Latest measured round trip, used to choose the lead of a coordinated start.
    public internal(set) var roundTrip: ServerInterval
    /// The lead its last `/ready` asked for (`lead <ms>`): the time it needs
    /// between hearing of a start and the start, besides the round trip.
    public internal(set) var askedLead: ServerInterval = .zero
    /// Bumped on every disconnect and catch-up, so a timer armed for an earlier
    /// one is recognised as stale when it fires.
    var disconnectSerial: Int64
    var catchupSerial: Int64

    public var isSuspended: Bool { !suspensions.isEmpty }

    /// What of this member outlives a restart.
    public var record: MemberRecord {
        MemberRecord(id: id, name: name, role: role, joined: joined, joinsNewSessions: joinsNewSessions,
                     player: player, autoplay: autoplay, suspensions: suspensions, arrival: arrival,
                     resumeToken: resumeToken, owner: owner, muted: muted, deviceDigest: deviceDigest,
                     scope: scope, tokenNumber: tokenNumber)
    }
}

/// A member as shown to others, in `participant` events, `welcome` and `/who`.
public struct Participant: Hashable, Sendable {
    public var id: MemberID
    public var name: DisplayName
    public var role: Role
    public var joined: Bool
    public var player: Bool
    /// Ready for the current readiness anchor (the last state that moved the held position).
    public var ready: Bool
    public var suspensions: [SuspensionReason]
    public var autoplay: Bool
    public var connected: Bool
    /// Holds the owner key (a host above the other hosts).
    public var owner: Bool
    public var muted: Bool
    /// Has a copy of the current own-copy item: nil until it says, and for other items.
    public var copy: Bool?
    /// A bot that came in with a token, and what it may do; nil for a person.
    public var scope: TokenScope?
    /// *Extension*: the program the member watches with, as its client named it
    /// (`software=`, e.g. "Syncplay 1.6.9"); nil when it said nothing.
    public var software: String? = nil

    /// A program's name as shown to others: 1 to 40 characters of letters,
    /// digits, spaces and `. _ - + ( ) /`, single spaces; nil otherwise.
    public static func softwareName(_ text: String?) -> String? {
        guard let text else { return nil }
        let words = text.split(separator: " ").joined(separator: " ")
        guard (1...40).contains(words.count),
              words.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || " ._-+()/".contains($0)) }) else { return nil }
        return words
    }
}

/// What changed about a participant, so the text encoding can say it in words.
public enum ParticipantChange: Hashable, Sendable {
    case arrived
    case reconnected
    case disconnected
    case renamed(from: DisplayName)
    case role
    case joinedSession
    case leftSession
    case player
    case autoplay
    case ready
    case suspended(SuspensionReason)
    case resumed(SuspensionReason?)
    case stalled
    case muted
    case unmuted
    /// Said whether it has a copy of the own-copy item (`/have`), or the item changed.
    case copy
}
