import SlashCommands

/// What keeps a room in the hands of its own people: its owner, the members it
/// keeps out, and how often members may chat. Saved with the room's snapshot, so
/// it outlives a restart and the moments the room is empty (docs/security.md).
public struct RoomProtection: Hashable, Sendable, Codable {
    /// SHA-256 (hex) of the owner key shown once to the room's creator; nil for a
    /// room whose creator has not come yet (or made before rooms had owners).
    public var ownerKeyDigest: String?
    /// Bans and kick cooldowns, oldest first; expired ones are dropped as they are met.
    public var bans: [Ban] = []
    /// The shortest time between two chat lines of a member without host rights; nil: off.
    public var slowMode: ServerInterval?
    public var nextBanNumber: Int64 = 1
    /// When the last member was forgotten; nil while anyone is in the room. The
    /// room expires a configured time after it.
    public var emptySince: ServerInstant?

    public init() {}
}

/// A member kept out of a room: by `/ban` (until a time or until `/unban`) or by
/// `/kick` (for the kick cooldown).
public struct Ban: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable {
        case ban, kick
    }

    /// Numbers `/unban` and `/bans` use.
    public var number: Int64
    public var kind: Kind
    /// The name the member had; the same name, ignoring case, is kept out too.
    public var name: DisplayName
    /// SHA-256 (hex) of the member's resume token and of its device identity.
    public var identities: [String]
    /// The address it connected from; nil when address bans are off.
    public var address: String?
    /// Nil: until `/unban`.
    public var until: ServerInstant?
    public var reason: String?
    /// Who banned or kicked.
    public var by: DisplayName
    public var at: ServerInstant

    /// Whether this ban keeps out a connection with these credentials at `now`.
    func keepsOut(name: DisplayName?, identities presented: [String], address: String?, now: ServerInstant) -> Bool {
        if let until, now >= until { return false }
        if let name, name.text.lowercased() == self.name.text.lowercased() { return true }
        if presented.contains(where: { identity in identities.contains { SHA256.equal($0, identity) } }) { return true }
        if let address, let banned = self.address, address == banned { return true }
        return false
    }
}
