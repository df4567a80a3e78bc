import Foundation

/// The operator's decisions that belong to a whole cluster (docs/cluster.md,
/// "The operator's controls in a cluster"): address bans and room-creation
/// tokens. They live in PostgreSQL one row each, so that each change is one
/// statement that touches only its own row: a node never writes the whole set
/// back over another node's change. A version number, raised by every change,
/// lets each node's heartbeat see in one small read whether there is news.
/// (A node's drain is its own, kept under its own name: `PostgresStore.nodeOperatorName`.)
public struct SharedOperatorState: Sendable, Hashable {
    public var version: Int64
    /// Banned addresses, and until when in epoch milliseconds (nil: until lifted).
    public var bans: [String: Int64?]
    /// Digests of creation tokens, with uses left.
    public var creationTokens: [String: Int]

    public init(version: Int64 = 0, bans: [String: Int64?] = [:], creationTokens: [String: Int] = [:]) {
        self.version = version
        self.bans = bans
        self.creationTokens = creationTokens
    }
}

/// One change to the cluster's operator state.
public enum SharedOperatorChange: Sendable, Hashable {
    case ban(address: String, untilMilliseconds: Int64?)
    case lift(address: String)
    case creationToken(digest: String, uses: Int)
    /// A room was created with the token: one use fewer, the row gone at none.
    case creationTokenUsed(digest: String)
}

extension PostgresStore {
    static let operatorVersionKey = "cluster.operator.version"

    /// The name a node's own operator state (its drain) is kept under in `meta`
    /// (as `server.<name>`).
    public static func nodeOperatorName(_ node: String) -> String { "operator.node." + node }

    static func readOperatorVersion(using connection: PostgresConnection) throws -> Int64 {
        Int64(try connection.queryPrepared("SELECT value FROM meta WHERE key = $1", [operatorVersionKey]).first?.first??
            .description ?? "0") ?? 0
    }

    static func readSharedOperatorState(using connection: PostgresConnection) throws -> SharedOperatorState {
        try connection.transaction {
            var state = SharedOperatorState(version: try readOperatorVersion(using: connection))
            for row in try connection.query("SELECT address, until_ms FROM operator_bans") {
                guard let address = row[0] else { continue }
                state.bans.updateValue(row[1].flatMap { Int64($0) }, forKey: address)
            }
            for row in try connection.query("SELECT digest, uses FROM operator_creation_tokens WHERE uses > 0") {
                guard let digest = row[0], let uses = row[1].flatMap({ Int($0) }) else { continue }
                state.creationTokens[digest] = uses
            }
            return state
        }
    }

    static func apply(_ change: SharedOperatorChange, using connection: PostgresConnection) throws {
        try connection.transaction {
            switch change {
            case .ban(let address, let until):
                try connection.query("""
                    INSERT INTO operator_bans (address, until_ms) VALUES ($1, $2)
                    ON CONFLICT (address) DO UPDATE SET until_ms = EXCLUDED.until_ms
                    """, [address, until.map { String($0) }])
            case .lift(let address):
                try connection.query("DELETE FROM operator_bans WHERE address = $1", [address])
            case .creationToken(let digest, let uses):
                try connection.query("""
                    INSERT INTO operator_creation_tokens (digest, uses) VALUES ($1, $2)
                    ON CONFLICT (digest) DO UPDATE SET uses = EXCLUDED.uses
                    """, [digest, String(uses)])
            case .creationTokenUsed(let digest):
                try connection.query("UPDATE operator_creation_tokens SET uses = uses - 1 WHERE digest = $1", [digest])
                try connection.query("DELETE FROM operator_creation_tokens WHERE digest = $1 AND uses <= 0", [digest])
            }
            try connection.query("""
                INSERT INTO meta (key, value) VALUES ($1, '1')
                ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text
                """, [operatorVersionKey])
        }
    }
}
