import CowatchCore
import CowatchStore
import CowatchTime

/// What the operator decided, kept in the store (`serverState` "operator") so
/// that it outlives restarts; creation tokens as digests.
struct OperatorState: Codable {
    /// Addresses shut out of the whole server, and until when (nil: until lifted).
    var bannedAddresses: [String: ServerInstant?] = [:]
    /// No new rooms: the server is being emptied before a restart or a move.
    var draining = false
    /// Digests of room-creation tokens (`room-creation token`), with uses left.
    var creationTokens: [String: Int] = [:]

    enum CodingKeys: String, CodingKey {
        case bannedAddresses, draining, creationTokens
    }

    init() {}

    init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        bannedAddresses = try values.decodeIfPresent([String: ServerInstant?].self, forKey: .bannedAddresses) ?? [:]
        draining = try values.decodeIfPresent(Bool.self, forKey: .draining) ?? false
        creationTokens = try values.decodeIfPresent([String: Int].self, forKey: .creationTokens) ?? [:]
    }

    func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(bannedAddresses, forKey: .bannedAddresses)
        try values.encode(draining, forKey: .draining)
        try values.encode(creationTokens, forKey: .creationTokens)
    }

    func creationTokenValid(_ token: String?) -> Bool {
        guard let token else { return false }
        let digest = SecretDigest.hex(token)
        return creationTokens.contains { SecretDigest.equal($0.key, digest) && $0.value > 0 }
    }

    /// One change, as the cluster's database makes it (SharedOperatorState.swift).
    mutating func apply(_ change: SharedOperatorChange) {
        switch change {
        case .ban(let address, let until):
            // updateValue: a subscript assignment of nil (no end) would remove the key.
            bannedAddresses.updateValue(until.map(ServerInstant.init(milliseconds:)), forKey: address)
        case .lift(let address):
            bannedAddresses[address] = nil
        case .creationToken(let digest, let uses):
            creationTokens[digest] = uses
        case .creationTokenUsed(let digest):
            guard let uses = creationTokens[digest] else { return }
            creationTokens[digest] = uses > 1 ? uses - 1 : nil
        }
    }

    static let storeName = "operator"
}
