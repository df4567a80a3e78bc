import Crypto
import CryptoExtras

/// The cost of hashing a room password with scrypt (RFC 7914): `cost` (N, a power
/// of two) blocks of 128 × `blockSize` (r) bytes, `parallelism` (p) times. Every
/// check costs about 128 × N × r bytes of memory and the time to fill and read
/// them once, on the server's service thread (docs/security.md has the figure).
public struct PasswordHashing: Hashable, Sendable {
    public var cost: Int
    public var blockSize: Int
    public var parallelism: Int

    /// The widest parameters a server takes, from its settings or from a stored
    /// digest: 2^17 × 128 × 16 bytes is 256 MiB for one check, and BoringSSL's
    /// scrypt, as swift-crypto calls it, needs `blockSize` at most 16.
    public static let costs = 2...(1 << 17)
    public static let blockSizes = 1...16
    public static let parallelisms = 1...16

    public init(cost: Int = 1 << 10, blockSize: Int = 8, parallelism: Int = 1) {
        self.cost = cost
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// Why these parameters cannot be used, if they cannot; nil when they can.
    public var problem: String? {
        if !Self.costs.contains(cost) || cost & (cost - 1) != 0 {
            return "the scrypt cost must be a power of two from \(Self.costs.lowerBound) to \(Self.costs.upperBound)"
        }
        if !Self.blockSizes.contains(blockSize) {
            return "the scrypt block size must be from \(Self.blockSizes.lowerBound) to \(Self.blockSizes.upperBound)"
        }
        if !Self.parallelisms.contains(parallelism) {
            return "the scrypt parallelism must be from \(Self.parallelisms.lowerBound) to \(Self.parallelisms.upperBound)"
        }
        return nil
    }
}

/// A room password as the room keeps it: the algorithm, its parameters, the salt
/// and the hash, so that nothing reads the password back and the parameters can
/// change later (a digest made with others is re-made on the next right
/// password).
///
/// New digests are scrypt: at the few milliseconds a check may take on the
/// service thread, PBKDF2 would get about ten thousand rounds of HMAC-SHA256,
/// which a GPU runs by the billion; scrypt's memory (1 MiB a guess by default)
/// is what such hardware lacks. Rooms saved before hold `sha256-iterated`
/// digests (SHA-256 iterated `rounds` times over the salt and the password),
/// still accepted and upgraded.
public struct PasswordDigest: Hashable, Sendable, Codable {
    public enum Algorithm: Hashable, Sendable {
        case scrypt(PasswordHashing)
        /// The digest of rooms saved before scrypt: SHA-256 over the salt, `:` and the
        /// password, then `rounds` - 1 times over the last digest and the salt.
        case iteratedSHA256(rounds: Int)
        /// A name this server does not know (a store written by a later version):
        /// no password matches it, and a host can set the password again.
        case unknown(String)
    }

    public var algorithm: Algorithm
    public var salt: String
    /// Hex digits.
    public var digest: String

    /// Bytes of an scrypt hash.
    static let hashBytes = 32

    public init(algorithm: Algorithm, salt: String, digest: String) {
        self.algorithm = algorithm
        self.salt = salt
        self.digest = digest
    }

    /// The digest of `password` with scrypt, or nil when the parameters are
    /// outside `PasswordHashing`'s bounds or the password is empty (the command
    /// table lets neither through).
    public static func make(_ password: String, salt: String, hashing: PasswordHashing) -> PasswordDigest? {
        guard let hash = scrypt(password, salt: salt, hashing: hashing) else { return nil }
        return PasswordDigest(algorithm: .scrypt(hashing), salt: salt, digest: hash)
    }

    /// Whether `password` is the one this digest was made from.
    public func matches(_ password: String) -> Bool {
        let computed: String? = switch algorithm {
        case .scrypt(let hashing): Self.scrypt(password, salt: salt, hashing: hashing)
        case .iteratedSHA256(let rounds): Self.iteratedSHA256(password, salt: salt, rounds: rounds)
        case .unknown: nil
        }
        guard let computed else { return false }
        return SecretDigest.equal(computed, digest)
    }

    /// Whether a right password should re-make this digest: it was not made by
    /// scrypt with these parameters.
    public func isOutdated(for hashing: PasswordHashing) -> Bool {
        algorithm != .scrypt(hashing)
    }

    static func scrypt(_ password: String, salt: String, hashing: PasswordHashing) -> String? {
        let passwordBytes = Array(password.utf8), saltBytes = Array(salt.utf8)
        // BoringSSL is handed the buffers' addresses, which empty arrays lack.
        guard hashing.problem == nil, !passwordBytes.isEmpty, !saltBytes.isEmpty,
              let key = try? KDF.Scrypt.deriveKey(from: passwordBytes, salt: saltBytes, outputByteCount: hashBytes,
                                                  rounds: hashing.cost, blockSize: hashing.blockSize,
                                                  parallelism: hashing.parallelism)
        else { return nil }
        return key.withUnsafeBytes { SecretDigest.hexText($0) }
    }

    /// Rounds of an old digest a check spends at most: a stored digest asking for
    /// more is refused rather than let hold the service thread.
    static let iteratedRounds = 1...100_000

    static func iteratedSHA256(_ password: String, salt: String, rounds: Int) -> String? {
        guard iteratedRounds.contains(rounds) else { return nil }
        let saltBytes = Array(salt.utf8)
        var value = Array(SHA256.hash(data: saltBytes + Array(":\(password)".utf8)))
        for _ in 1..<rounds { value = Array(SHA256.hash(data: value + saltBytes)) }
        return SecretDigest.hexText(value)
    }

    enum CodingKeys: String, CodingKey {
        case algorithm, salt, digest, rounds, cost, blockSize, parallelism
    }

    /// Digests saved before the algorithm was named are SHA-256 iterated `rounds` times.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        salt = try values.decode(String.self, forKey: .salt)
        digest = try values.decode(String.self, forKey: .digest)
        switch try values.decodeIfPresent(String.self, forKey: .algorithm) ?? Self.iteratedName {
        case Self.scryptName:
            algorithm = .scrypt(PasswordHashing(cost: try values.decode(Int.self, forKey: .cost),
                                                blockSize: try values.decode(Int.self, forKey: .blockSize),
                                                parallelism: try values.decode(Int.self, forKey: .parallelism)))
        case Self.iteratedName:
            algorithm = .iteratedSHA256(rounds: try values.decode(Int.self, forKey: .rounds))
        case let name:
            algorithm = .unknown(name)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(salt, forKey: .salt)
        try values.encode(digest, forKey: .digest)
        switch algorithm {
        case .scrypt(let hashing):
            try values.encode(Self.scryptName, forKey: .algorithm)
            try values.encode(hashing.cost, forKey: .cost)
            try values.encode(hashing.blockSize, forKey: .blockSize)
            try values.encode(hashing.parallelism, forKey: .parallelism)
        case .iteratedSHA256(let rounds):
            try values.encode(Self.iteratedName, forKey: .algorithm)
            try values.encode(rounds, forKey: .rounds)
        case .unknown(let name):
            try values.encode(name, forKey: .algorithm)
        }
    }

    static let scryptName = "scrypt"
    static let iteratedName = "sha256-iterated"
}
