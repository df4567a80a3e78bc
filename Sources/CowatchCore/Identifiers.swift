/// A member's identity within a room: stable across reconnects with `resume`.
public struct MemberID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static func < (lhs: MemberID, rhs: MemberID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The number of an id the room gave (`m12` is 12); nil for any other form.
    public var memberNumber: Int64? {
        guard rawValue.hasPrefix("m") else { return nil }
        return Int64(rawValue.dropFirst())
    }
}

/// A room's name: 1 to 64 characters of `A-Z a-z 0-9 . _ -`.
public struct RoomName: Hashable, Sendable, CustomStringConvertible {
    public static let maximumLength = 64

    public let rawValue: String

    public init?(_ rawValue: String) {
        let bytes = rawValue.utf8
        guard !bytes.isEmpty, bytes.count <= Self.maximumLength else { return nil }
        let allowed = bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        guard allowed else { return nil }
        // Room names are case-insensitive: `Lobby` and `lobby` are one room, kept
        // (and shown) in lowercase, so that a link typed either way meets the same
        // people (docs/protocol.md, "Connecting").
        self.rawValue = rawValue.lowercased()
    }

    public var description: String { rawValue }
}

/// Why a state changed or a notice was sent: `play`, `seek`, `stall`, `kick`...
/// Open-ended on the wire, so clients must accept causes they do not know.
public struct Cause: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let create = Cause(rawValue: "create")
    public static let watch = Cause(rawValue: "watch")
    public static let play = Cause(rawValue: "play")
    public static let pause = Cause(rawValue: "pause")
    public static let seek = Cause(rawValue: "seek")
    public static let rate = Cause(rawValue: "rate")
    public static let stall = Cause(rawValue: "stall")
    public static let resume = Cause(rawValue: "resume")
    public static let next = Cause(rawValue: "next")
    public static let end = Cause(rawValue: "end")
    public static let join = Cause(rawValue: "join")
    public static let leave = Cause(rawValue: "leave")
    public static let ended = Cause(rawValue: "ended")
    public static let queue = Cause(rawValue: "queue")
    public static let policy = Cause(rawValue: "policy")
    public static let ready = Cause(rawValue: "ready")
    public static let timeout = Cause(rawValue: "timeout")
    public static let catchup = Cause(rawValue: "catchup")
    public static let nick = Cause(rawValue: "nick")
    public static let op = Cause(rawValue: "op")
    public static let deop = Cause(rawValue: "deop")
    public static let kick = Cause(rawValue: "kick")
    public static let ban = Cause(rawValue: "ban")
    public static let mute = Cause(rawValue: "mute")
    public static let slow = Cause(rawValue: "slow")
    public static let lock = Cause(rawValue: "lock")
    /// The notice, to its sharer alone, that a link was shared without a check.
    public static let unchecked = Cause(rawValue: "unchecked")
    public static let password = Cause(rawValue: "password")
    public static let host = Cause(rawValue: "host")
    public static let restore = Cause(rawValue: "restore")
    public static let subtitles = Cause(rawValue: "subtitles")
    /// A player told the room the item's length, or that it is a live stream (`/duration`).
    public static let media = Cause(rawValue: "media")
    /// A host set who may take a seat in the room's voice (`/voice on|off|hosts`).
    public static let voice = Cause(rawValue: "voice")
}
