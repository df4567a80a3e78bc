import CowatchTime
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
    /// The room password's salted hash (`PasswordDigest.swift`); nil: no password.
    public var password: PasswordDigest?
    /// Invite links in force, oldest first.
    public var invites: [Invite] = []
    public var nextInviteNumber: Int64 = 1
    /// Bots' tokens, oldest first.
    public var tokens: [BotToken] = []
    public var nextTokenNumber: Int64 = 1
    /// Who may take a seat in the room's voice; nil: everyone but bots (`on`).
    public var voiceMode: VoiceMode?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case ownerKeyDigest, bans, slowMode, nextBanNumber, emptySince, password, invites, nextInviteNumber
        case tokens, nextTokenNumber, voiceMode
    }

    /// Protections saved before passwords and invites existed read as none.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        ownerKeyDigest = try values.decodeIfPresent(String.self, forKey: .ownerKeyDigest)
        bans = try values.decodeIfPresent([Ban].self, forKey: .bans) ?? []
        slowMode = try values.decodeIfPresent(ServerInterval.self, forKey: .slowMode)
        nextBanNumber = try values.decodeIfPresent(Int64.self, forKey: .nextBanNumber) ?? 1
        emptySince = try values.decodeIfPresent(ServerInstant.self, forKey: .emptySince)
        password = try values.decodeIfPresent(PasswordDigest.self, forKey: .password)
        invites = try values.decodeIfPresent([Invite].self, forKey: .invites) ?? []
        nextInviteNumber = try values.decodeIfPresent(Int64.self, forKey: .nextInviteNumber) ?? 1
        tokens = try values.decodeIfPresent([BotToken].self, forKey: .tokens) ?? []
        nextTokenNumber = try values.decodeIfPresent(Int64.self, forKey: .nextTokenNumber) ?? 1
        voiceMode = try values.decodeIfPresent(VoiceMode.self, forKey: .voiceMode)
    }
}

/// An invite link: its token's digest, how many more times it admits, until when.
public struct Invite: Hashable, Sendable, Codable {
    public var number: Int64
    public var tokenDigest: String
    public var usesLeft: Int
    public var expires: ServerInstant
    public var by: DisplayName
    public var at: ServerInstant
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
        if presented.contains(where: { identity in identities.contains { SecretDigest.equal($0, identity) } }) { return true }
        if let address, let banned = self.address, address == banned { return true }
        return false
    }
}

/// A bot's token: the name its connections take and what they may do. The room
/// keeps its digest; the token itself was shown once, to the host who made it.
public struct BotToken: Hashable, Sendable, Codable {
    public var number: Int64
    public var name: DisplayName
    public var scope: TokenScope
    public var digest: String
    public var by: DisplayName
    public var at: ServerInstant
}
