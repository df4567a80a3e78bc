import CowatchCore
import CowatchTime
import Foundation
import Logging

/// A batch applied room by room: each room's changes in one statement
/// (`roomStatement`, with the parts the changes need, each such statement
/// prepared once per connection and run by name), its lease
/// check inside it, and the node's own state in one more. A command costs the
/// database one parse-free statement and its commit, where it cost a transaction
/// of BEGIN, a lock, a statement per change and COMMIT.
///
/// Each room's statement locks that room's lease row alone (`FOR UPDATE`, by its
/// key) and waits for nothing else while it holds it, so it cannot be part of a
/// circle of waits with the lease heartbeat, which locks a node's rows in the
/// order of room names (`PostgresLeases.renewStatement`). A deadlock or a
/// serialization failure that happens all the same (40P01, 40001) is the
/// database answering, not the database away: that room's statement is tried
/// again as it was.
extension PostgresStore {
    enum Outcome {
        case written(fenced: Set<RoomName>)
        case refused
        /// The database did not answer; `remaining` are the changes not yet
        /// written (the rooms already written are not written twice).
        case databaseAway(String, remaining: [StoreChange])
        /// A room's statement kept losing races with other transactions: the
        /// changes not yet written go back in front of the queue, and the
        /// database is not counted away.
        case retryLater(remaining: [StoreChange])
    }

    /// How many times a statement that lost a race (a deadlock, a serialization
    /// failure) is tried again before its batch waits in the queue for the next round.
    static let conflictRetries = 5

    func apply(_ batch: [StoreChange], owned: [RoomName: Int64]) -> Outcome {
        let plan = Self.plan(batch)
        var done = 0
        var fenced: Set<RoomName> = []
        var attempt = 0
        while done < plan.count {
            do {
                if connection?.isOpen != true {
                    connection?.close()
                    connection = try PostgresConnection(url: url)
                }
                guard let connection else { return .databaseAway("not connected", remaining: Self.changes(plan[done...])) }
                connection.afterStatement = afterStatement
                switch plan[done] {
                case .room(let room, let changes):
                    if try !write(room, changes, epoch: owned[room], connection) { fenced.insert(room) }
                case .node(let changes):
                    try writeNode(changes, connection)
                }
                done += 1
                attempt = 0
            } catch let failure as PostgresConnection.Failure where failure.connectionLost {
                connection?.close()
                connection = nil
                return .databaseAway(failure.description, remaining: Self.changes(plan[done...]))
            } catch let failure as PostgresConnection.Failure where failure.isConflict {
                attempt += 1
                conflictsSeen += 1
                guard attempt <= Self.conflictRetries else {
                    logger.warning("store write lost to other transactions repeatedly; it waits for the next round",
                                   metadata: ["changes": "\(batch.count)", "error": "\(failure)"])
                    return .retryLater(remaining: Self.changes(plan[done...]))
                }
                // A moment apart, longer each time, so that the other transaction ends first.
                SystemClock.sleep(for: .milliseconds(5 * Int64(attempt)))
            } catch {
                logger.error("store write failed", metadata: ["changes": "\(batch.count)", "error": "\(error)"])
                return .refused
            }
        }
        return .written(fenced: fenced)
    }

    /// One step of a batch: a room's changes, in the order they came, or the
    /// node's own (alive, server state).
    enum Step {
        case room(RoomName, [StoreChange])
        case node([StoreChange])
    }

    /// The batch's steps: each room's changes together, rooms in the order they
    /// first appear, the node's own state last.
    static func plan(_ batch: [StoreChange]) -> [Step] {
        var order: [RoomName] = []
        var byRoom: [RoomName: [StoreChange]] = [:]
        var node: [StoreChange] = []
        for change in batch {
            let room: RoomName
            switch change {
            case .room(let snapshot): room = snapshot.room
            case .member(let changed, _), .forgetMember(let changed, _), .chat(let changed, _), .forgetRoom(let changed): room = changed
            case .alive, .serverState:
                node.append(change)
                continue
            }
            if byRoom[room] == nil { order.append(room) }
            byRoom[room, default: []].append(change)
        }
        return order.map { .room($0, byRoom[$0] ?? []) } + (node.isEmpty ? [] : [.node(node)])
    }

    static func changes(_ steps: ArraySlice<Step>) -> [StoreChange] {
        steps.flatMap { step -> [StoreChange] in
            switch step {
            case .room(_, let changes), .node(let changes): changes
            }
        }
    }

    /// The parts a room's statement may have, each present only when the batch
    /// has such a change for the room: an empty part still costs the database
    /// its table's opening and its indexes, most of a small statement's cost.
    struct Parts: OptionSet, Hashable {
        let rawValue: Int
        static let snapshot = Parts(rawValue: 1)
        static let gone = Parts(rawValue: 2)
        static let kept = Parts(rawValue: 4)
        static let chat = Parts(rawValue: 8)
    }

    /// A room's changes in one statement, with the parts `parts` names.
    /// $1: the room; $2: the node; $3: the epoch this node holds its lease under;
    /// $4: whether it is fenced; $5: its snapshot; $6: ids of members gone; $7:
    /// id to record of members kept; $8: chat lines in order; $9 and $10: the
    /// lines and bytes of chat already kept that may stay beside the new ones.
    /// Returns 1 when the lease check let the changes through, else 0.
    ///
    /// The check locks the room's lease row, so a takeover's update of it waits
    /// until this commits, or, done first, makes the check fail on the row's new
    /// version (read committed checks a locked row again): a write lands before
    /// a takeover, whose node then loads it, or not at all.
    static func roomStatement(_ parts: Parts) -> String {
        var sql = """
            WITH fence AS (
              SELECT room FROM room_leases WHERE $4::boolean AND room = $1 AND node = $2 AND epoch = $3::bigint FOR UPDATE),
            allowed AS (SELECT 1 AS ok WHERE NOT $4::boolean OR EXISTS (SELECT 1 FROM fence))
            """
        if parts.contains(.snapshot) {
            sql += """
                ,
                snapshot AS (
                  INSERT INTO rooms (name, snapshot) SELECT $1, $5::text FROM allowed
                  ON CONFLICT (name) DO UPDATE SET snapshot = EXCLUDED.snapshot
                  RETURNING 1)
                """
        }
        if parts.contains(.gone) {
            sql += """
                ,
                gone AS (
                  DELETE FROM members WHERE room = $1 AND id IN (SELECT jsonb_array_elements_text($6::jsonb))
                    AND EXISTS (SELECT 1 FROM allowed)
                  RETURNING 1)
                """
        }
        if parts.contains(.kept) {
            sql += """
                ,
                kept AS (
                  INSERT INTO members (room, id, record) SELECT $1, k.key, k.value FROM jsonb_each_text($7::jsonb) AS k, allowed
                  ON CONFLICT (room, id) DO UPDATE SET record = EXCLUDED.record
                  RETURNING 1)
                """
        }
        if parts.contains(.chat) {
            sql += """
                ,
                said AS (
                  INSERT INTO chat (room, line)
                  SELECT $1, c.value FROM jsonb_array_elements_text($8::jsonb) WITH ORDINALITY AS c, allowed ORDER BY c.ordinality
                  RETURNING 1),
                trimmed AS (
                  DELETE FROM chat WHERE room = $1 AND EXISTS (SELECT 1 FROM allowed) AND number IN (
                    SELECT number FROM (
                      SELECT number, row_number() OVER newest AS rank, SUM(octet_length(line)) OVER newest AS total
                      FROM chat WHERE room = $1 WINDOW newest AS (ORDER BY number DESC)) AS kept_lines
                    WHERE rank > $9::bigint OR total > $10::bigint)
                  RETURNING 1)
                """
        }
        // A part left out leaves its parameters unused: the statement is prepared
        // with every parameter declared as text (`PostgresConnection.queryPrepared`).
        return sql + "\nSELECT count(*) FROM allowed"
    }

    /// The node's own state (alive, server state) in one statement; $1: key to value.
    static let nodeStatement = """
        INSERT INTO meta (key, value) SELECT key, value FROM jsonb_each_text($1::jsonb)
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
        """

    /// The lease check of a room being forgotten, which runs before the
    /// forgetting in its transaction: its row locked when it is this node's.
    static let fenceStatement = """
        SELECT room FROM room_leases WHERE room = $1 AND node = $2 AND epoch = $3::bigint FOR UPDATE
        """

    /// What a room's changes leave in the database: the last word on each row
    /// wins, and forgetting the room starts over from what follows it.
    struct Net {
        var forgotten = false
        var snapshot: String?
        var members: [String: String?] = [:]
        var chat: [String] = []
    }

    func net(_ changes: [StoreChange]) throws -> Net {
        var net = Net()
        for change in changes {
            switch change {
            case .room(let snapshot): net.snapshot = try json(snapshot)
            case .member(_, let record): net.members[record.id.rawValue] = .some(try json(record))
            case .forgetMember(_, let id): net.members[id.rawValue] = .some(nil)
            case .chat(_, let line): net.chat.append(try json(line))
            case .forgetRoom:
                net = Net()
                net.forgotten = true
            case .alive, .serverState: break
            }
        }
        return net
    }

    /// Writes one room's changes; false when its lease check refused them.
    private func write(_ room: RoomName, _ changes: [StoreChange], epoch: Int64?,
                       _ connection: PostgresConnection) throws -> Bool {
        // A room this node does not own is never written.
        if fencing && epoch == nil { return false }
        let net = try net(changes)
        let parameters = try roomParameters(room, net, epoch: epoch)
        var parts: Parts = []
        if net.snapshot != nil { parts.insert(.snapshot) }
        if net.members.values.contains(where: { $0 == nil }) { parts.insert(.gone) }
        if net.members.values.contains(where: { $0 != nil }) { parts.insert(.kept) }
        if !net.chat.isEmpty { parts.insert(.chat) }
        let statement = Self.roomStatement(parts)
        guard net.forgotten else {
            return try connection.queryPrepared(statement, parameters).first?.first == "1"
        }
        return try connection.transaction {
            if fencing, try connection.query(Self.fenceStatement, [room.rawValue, node, String(epoch ?? 0)]).isEmpty {
                return false
            }
            try connection.query("DELETE FROM rooms WHERE name = $1", [room.rawValue])
            try connection.query("DELETE FROM members WHERE room = $1", [room.rawValue])
            try connection.query("DELETE FROM chat WHERE room = $1", [room.rawValue])
            if fencing { try connection.query("DELETE FROM room_leases WHERE room = $1 AND node = $2", [room.rawValue, node]) }
            return try connection.queryPrepared(statement, parameters).first?.first == "1"
        }
    }

    private func writeNode(_ changes: [StoreChange], _ connection: PostgresConnection) throws {
        var values: [String: String] = [:]
        for change in changes {
            switch change {
            case .alive(let instant): values["alive." + node] = String(instant.milliseconds)
            case .serverState(let name, let value): values["server." + name] = value
            default: break
            }
        }
        try connection.queryPrepared(Self.nodeStatement, [try json(values)])
    }

    /// The room statement's parameters. New chat lines beyond the room's bounds
    /// are left out here (the newest kept), and the lines already kept are
    /// trimmed to what the bounds leave beside the new ones, so that the
    /// statement, whose parts all see the rows as they were before it, leaves the
    /// room's newest `chatLimit` lines within `chatBytes`.
    private func roomParameters(_ room: RoomName, _ net: Net, epoch: Int64?) throws -> [String?] {
        var gone: [String] = []
        var kept: [String: String] = [:]
        for (id, record) in net.members {
            if let record { kept[id] = record } else { gone.append(id) }
        }
        var lines: [String] = []
        var bytes = 0
        for line in net.chat.reversed() {
            let size = line.utf8.count
            guard lines.count < chatLimit, bytes + size <= chatBytes else { break }
            lines.append(line)
            bytes += size
        }
        lines.reverse()
        return [room.rawValue, node, String(epoch ?? 0), fencing ? "true" : "false", net.snapshot,
                try json(gone.sorted()), try json(kept), try json(lines),
                String(chatLimit - lines.count), String(chatBytes - bytes)]
    }

    func json<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
