import Foundation
import Logging

/// The schema: its tables, and how a database is brought up to date.
extension PostgresStore {
    public static let schemaVersion = 2
    static let migrations: [String] = [
        """
        CREATE TABLE rooms (name text PRIMARY KEY, snapshot text NOT NULL);
        CREATE TABLE members (room text NOT NULL, id text NOT NULL, record text NOT NULL, PRIMARY KEY (room, id));
        CREATE TABLE chat (room text NOT NULL, number bigserial PRIMARY KEY, line text NOT NULL);
        CREATE INDEX chat_by_room ON chat (room, number);
        CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
        CREATE TABLE room_leases (room text PRIMARY KEY, node text NOT NULL, epoch bigint NOT NULL,
                                  expires_at timestamptz NOT NULL, seq_ceiling bigint NOT NULL DEFAULT 0);
        CREATE TABLE cluster_nodes (node text PRIMARY KEY, url text NOT NULL, seen_at timestamptz NOT NULL);
        """,
        // Each node's heartbeat renews its own leases, several times a second:
        // found by node, not by reading every room's lease.
        """
        CREATE INDEX room_leases_by_node ON room_leases (node, room);
        """,
    ]

    func migrate() throws {
        guard let connection else { return }
        do {
            try connection.execute("SELECT pg_advisory_lock(7480)")
            defer { try? connection.execute("SELECT pg_advisory_unlock(7480)") }
            try connection.execute("CREATE TABLE IF NOT EXISTS cowatch_schema (version integer NOT NULL)")
            let found = Int(try connection.query("SELECT max(version) FROM cowatch_schema").first?.first??.description ?? "0") ?? 0
            guard found <= Self.schemaVersion else {
                throw StoreError.newerSchema(path: Self.redacted(url), found: found, supported: Self.schemaVersion)
            }
            for version in found..<Self.schemaVersion {
                try connection.transaction {
                    try connection.execute(Self.migrations[version])
                    try connection.query("INSERT INTO cowatch_schema (version) VALUES ($1)", [String(version + 1)])
                }
                logger.info("store migrated", metadata: ["database": "\(Self.redacted(url))", "version": "\(version + 1)"])
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.unreadable(path: Self.redacted(url), reason: "\(error)")
        }
    }
}
