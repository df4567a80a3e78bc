import CowatchCore
import CowatchTime
import Foundation
import Logging

/// Room ownership across a cluster, as lease rows in PostgreSQL (docs/cluster.md):
/// one row per room names the node that owns it, an `epoch` that grows with each
/// new owner (the fencing token every write of the owner is checked against, see
/// `PostgresStore`), when the lease ends in the database's own clock, and the
/// highest `seq` the owner may send. A node renews all its leases in one statement
/// per heartbeat; a lease not renewed in time ends, and any node may take the room.
///
/// Blocking calls on two connections, each on a serial queue of its own, so that a
/// slow takeover (loading a room) never delays a heartbeat. Results come back
/// through callbacks, on those queues.
public final class PostgresLeases: @unchecked Sendable {
    public struct Settings: Sendable, Hashable {
        public var node: String
        /// Where other nodes reach this one: ws://host:port.
        public var advertiseURL: String
        /// How long a lease lasts in the database unless renewed.
        public var lease: MonotonicDuration
        /// The time between heartbeats.
        public var renew: MonotonicDuration
        /// How long an owner holds its rooms, unchanged, while its leases cannot
        /// be renewed, before it gives them up (docs/cluster.md, "Riding out the
        /// database's absence"); zero gives them up as soon as their trust lapses.
        public var hold: MonotonicDuration
        /// How many `seq` values a lease reserves at a time.
        public var seqBlock: Int64

        public init(node: String, advertiseURL: String, lease: MonotonicDuration = .seconds(1.5),
                    renew: MonotonicDuration = .seconds(0.4), hold: MonotonicDuration = .seconds(90), seqBlock: Int64 = 10_000) {
            self.node = node
            self.advertiseURL = advertiseURL
            self.lease = lease
            self.renew = renew
            self.hold = hold
            self.seqBlock = seqBlock
        }
    }

    public enum Placement: Sendable {
        /// This node owns the room now, under `epoch`; it numbers states after
        /// `seqFloor` and up to `ceiling`. `room` is what the database keeps of it.
        case owned(epoch: Int64, seqFloor: Int64, ceiling: Int64, room: StoredRooms.Room?, requestedAt: MonotonicInstant)
        /// Another node owns it; its members are relayed there.
        case elsewhere(node: String, url: String)
        /// The database could not answer.
        case unavailable(String)
    }

    /// One heartbeat: when it was sent, the leases the database says this node
    /// still holds (room → epoch; nil when it failed), the rooms it asked to
    /// renew even if lapsed, and how long it took.
    public struct Renewal: Sendable {
        public var sentAt: MonotonicInstant
        public var held: [RoomName: Int64]?
        public var asked: Set<RoomName>
        public var took: MonotonicDuration
        /// The cluster's operator state, when it changed since the last heartbeat
        /// that read it.
        public var operatorState: SharedOperatorState?
    }

    public let settings: Settings
    private let url: String
    private let store: PostgresStore
    private let logger: Logger
    /// The clock a renewal's sending is read on and the heartbeats are timed
    /// by: the gateway's, whose ownership compares it with its own `now`.
    private let time: any TimeSource
    private let heartbeatQueue = DispatchQueue(label: "cowatch-leases-heartbeat")
    private let workQueue = DispatchQueue(label: "cowatch-leases")
    private var heartbeatConnection: PostgresConnection?
    private var workConnection: PostgresConnection?
    private let lock = NSLock()
    private var stopped = false
    private var conflictCount = 0
    private var renewable: Set<RoomName> = []
    /// The operator state's version this node last saw (heartbeat queue only).
    private var operatorVersion: Int64?
    /// Operator changes not yet written (work queue only): kept, in order, and
    /// tried again after each heartbeat until the database takes them.
    private var pendingOperatorChanges: [SharedOperatorChange] = []
    public var onRenewal: (@Sendable (Renewal) -> Void)?
    /// The database took one of this node's operator changes.
    public var onOperatorChangeWritten: (@Sendable (SharedOperatorChange) -> Void)?

    public init(url: String, settings: Settings, store: PostgresStore, logger: Logger = Logger(label: "cowatch.cluster"),
                time: any TimeSource = SystemTime()) {
        self.url = url
        self.time = time
        self.settings = settings
        self.store = store
        self.logger = logger
    }

    private var leaseInterval: String { "\(Int(settings.lease.seconds * 1000)) milliseconds" }

    /// Starts the heartbeats, after ending the leases a previous life of this node
    /// left behind (it holds none of those rooms now; another node may take them
    /// at once). Node names must therefore be unique in a cluster.
    public func start() {
        heartbeatQueue.async { [self] in
            do {
                let connection = try connected(&heartbeatConnection)
                try retryingConflicts {
                    try connection.query("""
                        WITH mine AS (SELECT room FROM room_leases WHERE node = $1 AND expires_at > '-infinity'
                                      ORDER BY room FOR UPDATE)
                        UPDATE room_leases l SET expires_at = '-infinity' FROM mine WHERE l.room = mine.room
                        """, [settings.node])
                }
            } catch {
                logger.warning("could not end this node's earlier leases; they end by themselves", metadata: ["error": "\(error)"])
            }
            heartbeat()
        }
    }

    public func stop() {
        lock.withLock { stopped = true }
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Lease statements that lost a race (a deadlock, a serialization failure) and
    /// were tried again, for /metrics.
    public var conflicts: Int { lock.withLock { conflictCount } }

    /// The heartbeat's renewal: the node's leases that are current, or lapsed but
    /// asked for, locked in the order of room names (the order the store's writes
    /// lock them in: `PostgresStore.fenceStatement`) and then extended.
    static let renewStatement = """
        WITH mine AS (
          SELECT room FROM room_leases
          WHERE node = $1 AND (expires_at > now()
              OR (expires_at > '-infinity' AND room IN (SELECT jsonb_array_elements_text($3::jsonb))))
          ORDER BY room FOR UPDATE)
        UPDATE room_leases l SET expires_at = now() + $2::interval FROM mine
        WHERE l.room = mine.room
        RETURNING l.room, l.epoch
        """

    /// Runs `statement` again when it lost a race with another transaction, a
    /// few times, a moment apart: the database answered, so a conflict is never
    /// taken for its absence.
    @discardableResult
    private func retryingConflicts<T>(_ statement: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try statement()
            } catch let failure as PostgresConnection.Failure where failure.isConflict && attempt < 5 {
                attempt += 1
                lock.withLock { conflictCount += 1 }
                SystemClock.sleep(for: .milliseconds(5 * Int64(attempt)))
            }
        }
    }

    /// The rooms the gateway acts for or holds: each heartbeat renews their
    /// leases even when they lapsed (a database outage), as long as they are
    /// still this node's under the same epoch.
    public func renew(_ rooms: Set<RoomName>) {
        lock.withLock { renewable = rooms }
    }

    private func heartbeat() {
        guard !isStopped else { return }
        let sentAt = time.monotonic()
        // Read after `sentAt`: a room added later is not counted as asked for.
        let asked = lock.withLock { renewable }
        var held: [RoomName: Int64]?
        var operatorState: SharedOperatorState?
        do {
            let connection = try connected(&heartbeatConnection)
            try connection.queryPrepared("""
                INSERT INTO cluster_nodes (node, url, seen_at) VALUES ($1, $2, now())
                ON CONFLICT (node) DO UPDATE SET url = EXCLUDED.url, seen_at = now()
                """, [settings.node, settings.advertiseURL])
            let names = String(decoding: (try? JSONEncoder().encode(asked.map(\.rawValue).sorted())) ?? Data("[]".utf8),
                               as: UTF8.self)
            let rows = try retryingConflicts {
                try connection.queryPrepared(Self.renewStatement, [settings.node, leaseInterval, names])
            }
            var leases: [RoomName: Int64] = [:]
            for row in rows {
                if let name = row[0].flatMap({ RoomName($0) }), let epoch = row[1].flatMap({ Int64($0) }) { leases[name] = epoch }
            }
            held = leases
            if try PostgresStore.readOperatorVersion(using: connection) != operatorVersion {
                let read = try PostgresStore.readSharedOperatorState(using: connection)
                operatorVersion = read.version
                operatorState = read
            }
        } catch {
            heartbeatConnection?.close()
            heartbeatConnection = nil
            logger.warning("lease renewal failed", metadata: ["error": "\(error)"])
        }
        onRenewal?(Renewal(sentAt: sentAt, held: held, asked: asked, took: time.monotonic() - sentAt,
                           operatorState: operatorState))
        if held != nil { workQueue.async { [self] in writeOperatorChanges() } }
        // A failed heartbeat is tried again soon rather than a whole interval later:
        // once a database comes back (a restart, a standby promoted) the leases are
        // renewed within a moment, before the trust they still have runs out.
        let next = held == nil ? min(settings.renew, Self.retryAfterFailure) : settings.renew
        time.schedule(after: next, on: heartbeatQueue) { [self] in heartbeat() }
    }

    /// The time between heartbeats while they fail.
    static let retryAfterFailure = MonotonicDuration.milliseconds(250)

    /// Takes `room` when its lease is free, released or already this node's, or
    /// lapsed if `mayTakeLapsed`; else says who owns it. A node that has just
    /// found the database again passes false for a while: an owner that held its
    /// rooms through the outage renews them first (docs/cluster.md, "Riding out
    /// the database's absence").
    public func acquire(_ room: RoomName, mayTakeLapsed: Bool = true, completion: @escaping @Sendable (Placement) -> Void) {
        workQueue.async { [self] in
            let requestedAt = time.monotonic()
            do {
                let connection = try connected(&workConnection)
                let placement = try retryingConflicts { try connection.transaction { () -> Placement in
                    let taken = try connection.query("""
                        INSERT INTO room_leases AS l (room, node, epoch, expires_at, seq_ceiling)
                        VALUES ($1, $2, 1, now() + $3::interval, 0)
                        ON CONFLICT (room) DO UPDATE SET node = $2, epoch = l.epoch + 1, expires_at = now() + $3::interval
                        WHERE l.node = $2 OR l.expires_at = '-infinity' OR (l.expires_at < now() AND $4::boolean)
                        RETURNING epoch, seq_ceiling
                        """, [room.rawValue, settings.node, leaseInterval, mayTakeLapsed ? "true" : "false"])
                    guard let row = taken.first, let epoch = row[0].flatMap({ Int64($0) }),
                          let previousCeiling = row[1].flatMap({ Int64($0) }) else {
                        let owner = try connection.query("""
                            SELECT l.node, n.url, l.expires_at < now() FROM room_leases l
                            LEFT JOIN cluster_nodes n ON n.node = l.node WHERE l.room = $1
                            """, [room.rawValue]).first
                        if (owner?[2] ?? nil) == "t" {
                            return .unavailable("its lease lapsed while the database was away; its owner may renew it first")
                        }
                        return .elsewhere(node: (owner?[0] ?? nil) ?? "?", url: (owner?[1] ?? nil) ?? "")
                    }
                    let stored = try store.loadRoom(room, using: connection)
                    let floor = max(previousCeiling, stored?.snapshot.state.seq ?? 0)
                    let ceiling = floor + settings.seqBlock
                    try connection.query("UPDATE room_leases SET seq_ceiling = $2 WHERE room = $1",
                                         [room.rawValue, String(ceiling)])
                    return .owned(epoch: epoch, seqFloor: floor, ceiling: ceiling, room: stored, requestedAt: requestedAt)
                } }
                completion(placement)
            } catch {
                workConnection?.close()
                workConnection = nil
                completion(.unavailable("\(error)"))
            }
        }
    }

    /// Reserves more `seq` values for an owned room; false when the lease moved
    /// on, nil when the database did not answer.
    public func extendCeiling(_ room: RoomName, epoch: Int64, to ceiling: Int64,
                              completion: @escaping @Sendable (Bool?) -> Void) {
        workQueue.async { [self] in
            do {
                let connection = try connected(&workConnection)
                let rows = try connection.query("""
                    UPDATE room_leases SET seq_ceiling = $4 WHERE room = $1 AND node = $2 AND epoch = $3 RETURNING room
                    """, [room.rawValue, settings.node, String(epoch), String(ceiling)])
                completion(!rows.isEmpty)
            } catch {
                workConnection?.close()
                workConnection = nil
                completion(nil)
            }
        }
    }

    /// Ends this node's lease on `room` now (after its writes are flushed), so
    /// another node may take it at once; the reserved numbers stay with the row.
    public func release(_ room: RoomName, epoch: Int64) {
        workQueue.async { [self] in
            do {
                let connection = try connected(&workConnection)
                try connection.query("""
                    UPDATE room_leases SET expires_at = '-infinity'
                    WHERE room = $1 AND node = $2 AND epoch = $3
                    """, [room.rawValue, settings.node, String(epoch)])
            } catch {
                workConnection?.close()
                workConnection = nil
                logger.warning("lease release failed; it ends by itself", metadata: ["room": "\(room)", "error": "\(error)"])
            }
        }
    }

    /// Keeps one change to the cluster's operator state; the other nodes read it
    /// within a heartbeat. A change the database cannot take now waits, in order,
    /// and is tried again after each heartbeat: it is never dropped.
    public func shareOperatorChange(_ change: SharedOperatorChange) {
        workQueue.async { [self] in
            pendingOperatorChanges.append(change)
            writeOperatorChanges()
        }
    }

    private func writeOperatorChanges() {
        while let change = pendingOperatorChanges.first {
            do {
                try PostgresStore.apply(change, using: try connected(&workConnection))
                pendingOperatorChanges.removeFirst()
                onOperatorChangeWritten?(change)
                // The next heartbeat reads the state again, this change in it,
                // even if nothing else changed since (its version was seen).
                heartbeatQueue.async { [self] in operatorVersion = nil }
            } catch {
                workConnection?.close()
                workConnection = nil
                logger.warning("an operator change waits for the database", metadata: [
                    "change": "\(change)", "waiting": "\(pendingOperatorChanges.count)", "error": "\(error)"])
                return
            }
        }
    }

    /// Every room some node holds now, and which node (nil: the database did not answer).
    public func clusterRooms(completion: @escaping @Sendable ([(room: String, node: String)]?) -> Void) {
        workQueue.async { [self] in
            do {
                let rows = try connected(&workConnection).query(
                    "SELECT room, node FROM room_leases WHERE expires_at > now() ORDER BY room LIMIT 100000")
                completion(rows.compactMap { row in row[0].flatMap { room in row[1].map { (room: room, node: $0) } } })
            } catch {
                workConnection?.close()
                workConnection = nil
                completion(nil)
            }
        }
    }

    /// Waits until the releases and extensions asked for so far are done.
    public func drain() {
        workQueue.sync {}
    }

    private func connected(_ slot: inout PostgresConnection?) throws -> PostgresConnection {
        if let connection = slot, connection.isOpen { return connection }
        slot?.close()
        let connection = try PostgresConnection(url: url, timeout: 2, statementTimeout: 5)
        slot = connection
        return connection
    }
}
