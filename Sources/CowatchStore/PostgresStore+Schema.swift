import Foundation
import Logging

/// The schema: its tables, and how a database is brought up to date.
extension PostgresStore {
    public static let schemaVersion = 3
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
        // The cluster's operator state, a row per ban and per creation token
        // (SharedOperatorState.swift), taken over from the one JSON value every
        // node used to write whole; its drain was that node's, and is dropped.
        """
        CREATE TABLE operator_bans (address text PRIMARY KEY, until_ms bigint);
        CREATE TABLE operator_creation_tokens (digest text PRIMARY KEY, uses integer NOT NULL);
        INSERT INTO operator_bans (address, until_ms)
            SELECT b.key, CASE WHEN jsonb_typeof(b.value) = 'number' THEN (b.value #>> '{}')::bigint END
            FROM meta m, jsonb_each(m.value::jsonb -> 'bannedAddresses') b
            WHERE m.key = 'server.operator' AND jsonb_typeof(m.value::jsonb -> 'bannedAddresses') = 'object';
        INSERT INTO operator_creation_tokens (digest, uses)
            SELECT t.key, (t.value #>> '{}')::integer
            FROM meta m, jsonb_each(m.value::jsonb -> 'creationTokens') t
            WHERE m.key = 'server.operator' AND jsonb_typeof(m.value::jsonb -> 'creationTokens') = 'object'
              AND jsonb_typeof(t.value) = 'number' AND (t.value #>> '{}')::integer > 0;
        DELETE FROM meta WHERE key = 'server.operator';
        INSERT INTO meta (key, value) VALUES ('cluster.operator.version', '1') ON CONFLICT (key) DO NOTHING;
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
