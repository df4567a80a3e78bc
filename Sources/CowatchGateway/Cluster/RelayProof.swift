import CowatchCore
import CowatchTime

/// What a node's shared relay link (`/relay/ROOM`) shows to be one of the
/// cluster's nodes: an HMAC-SHA256, keyed with the cluster's shared secret
/// (`cluster-secret-file`, the same on every node), over the room, the node's
/// name, the time and a nonce, sent as the upgrade's `X-Cowatch-Relay-Proof`
/// header:
///
///     v1 NODE MILLISECONDS NONCE HMAC
///
/// The owner recomputes it and takes the link only when it matches, is within
/// `window` of its own clock and its nonce was not seen in that window, so a
/// proof read off the wire opens nothing later, for another room, or twice.
/// Members' addresses come up such a link on its word: without the secret,
/// nobody's word is taken, wherever they connect from. Pure: the gateway passes
/// the clock and keeps the nonces seen in a `RelayProof.Seen`.
public enum RelayProof {
    public static let header = "X-Cowatch-Relay-Proof"

    /// How far a proof's time may be from the owner's clock: the nodes' clocks
    /// (NTP) and a link's handshake fit well within it.
    public static let window = ServerInterval(milliseconds: 60_000)

    /// The header's value a node sends to open `room`'s link.
    public static func make(secret: String, room: RoomName, node: String, at now: ServerInstant, nonce: String) -> String {
        let time = String(now.milliseconds)
        return "v1 \(node) \(time) \(nonce) " + code(secret: secret, room: room, node: node, time: time, nonce: nonce)
    }

    public enum Refusal: Error, Equatable, Sendable {
        case missing
        case malformed
        case stale
        case wrong
        case replayed

        /// For the log and the refused upgrade's body.
        public var words: String {
            switch self {
            case .missing: "no proof of the cluster's secret (X-Cowatch-Relay-Proof)"
            case .malformed: "a proof of the cluster's secret that cannot be read"
            case .stale: "a proof of the cluster's secret too far from this node's clock"
            case .wrong: "a proof that does not match this cluster's secret"
            case .replayed: "a proof of the cluster's secret already used"
            }
        }
    }

    /// The node a proof names, or why the link is refused. `seen` remembers the
    /// nonces of the proofs taken within the window.
    public static func check(_ value: String?, secret: String, room: RoomName, now: ServerInstant,
                             seen: inout Seen) -> Result<String, Refusal> {
        guard let value, !value.isEmpty else { return .failure(.missing) }
        let parts = value.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, parts[0] == "v1", !parts[1].isEmpty, parts[1].count <= 128,
              let milliseconds = Int64(parts[2]), (8...64).contains(parts[3].count), parts[4].count == 64 else {
            return .failure(.malformed)
        }
        let (node, time, nonce, given) = (parts[1], parts[2], parts[3], parts[4])
        let distance = abs(now.milliseconds - milliseconds)
        guard distance <= window.milliseconds else { return .failure(.stale) }
        guard SecretDigest.equal(code(secret: secret, room: room, node: node, time: time, nonce: nonce), given) else {
            return .failure(.wrong)
        }
        guard seen.insert(nonce, at: now) else { return .failure(.replayed) }
        return .success(node)
    }

    /// The HMAC over every part that says what the proof is for, each on its own
    /// line so that no two different proofs run together into the same text.
    static func code(secret: String, room: RoomName, node: String, time: String, nonce: String) -> String {
        SecretDigest.keyed("cowatch.relay.v1\n\(room.rawValue)\n\(node)\n\(time)\n\(nonce)", secret: secret)
    }

    /// The nonces of proofs taken within the window, forgotten after it; at most
    /// `capacity` (a proof's nonce only counts once it matched the secret, so
    /// only the cluster's nodes can fill it).
    public struct Seen: Sendable {
        public let capacity: Int
        private var nonces: [String: ServerInstant] = [:]

        public init(capacity: Int = 100_000) {
            self.capacity = capacity
        }

        public var count: Int { nonces.count }

        /// False when `nonce` was already taken within the window.
        mutating func insert(_ nonce: String, at now: ServerInstant) -> Bool {
            if nonces.count >= capacity {
                // Forget what the window no longer covers; if still full, the oldest.
                nonces = nonces.filter { now.milliseconds - $0.value.milliseconds <= RelayProof.window.milliseconds * 2 }
                if nonces.count >= capacity, let oldest = nonces.min(by: { $0.value.milliseconds < $1.value.milliseconds }) {
                    nonces[oldest.key] = nil
                }
            }
            guard nonces[nonce] == nil else { return false }
            nonces[nonce] = now
            return true
        }
    }
}
