import CowatchClient
import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime
import Foundation
import SlashCommands

/// A cluster's PostgreSQL pieces, given to the gateway by `cowatch serve --store
/// postgres` (docs/cluster.md).
public struct ClusterLink: Sendable {
    public let store: PostgresStore
    public let leases: PostgresLeases

    public init(store: PostgresStore, leases: PostgresLeases) {
        self.store = store
        self.leases = leases
    }
}

/// The gateway's cluster state, on the service thread: its machines and
/// counters. What it asks of the database and of other nodes are effects
/// (`GatewayEffect`), carried out on the `ClusterLink`.
final class ClusterState {
    /// This node's lease settings (its name, address, lease and hold).
    let settings: PostgresLeases.Settings
    var ownership: RoomOwnership
    /// Connections waiting to learn which node serves their room.
    var placements = Placements()
    /// The client side of the shared links to rooms other nodes own (made at start).
    var relays: WebSocketClients?
    /// Who is relayed on which of them (`RelayLinks`); each link's client
    /// connection is in `GatewayTables.upstreams`.
    var relayLinks: RelayLinks
    var renewals = 0
    var renewalFailures = 0
    var roomsTaken = 0
    var roomsLost = 0
    var roomsHeld = 0
    var linesRefusedWhileHeld = 0
    /// Since when the heartbeats succeed again after failing; nil before any
    /// failed. Until a while after it this node takes no lapsed lease of
    /// another node (`mayTakeLapsed`).
    var databaseBackSince: MonotonicInstant?
    /// The `RoomOwnership.roomsChanged` the lease keeper last heard of.
    private var renewableShared = -1
    var databaseSeconds = GatewayMetrics.Histogram(bounds: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1])
    var databaseUp = true
    var storeWriteSeconds = GatewayMetrics.Histogram(bounds: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5])

    init(settings: PostgresLeases.Settings, relayTimeout: MonotonicDuration) {
        self.settings = settings
        relayLinks = RelayLinks(timeout: relayTimeout)
        ownership = RoomOwnership(lease: settings.lease, hold: settings.hold, seqBlock: settings.seqBlock)
    }

    /// The rooms the lease keeper is to renew, when they changed since it was last told.
    func renewableChanged() -> Set<RoomName>? {
        guard ownership.roomsChanged != renewableShared else { return nil }
        renewableShared = ownership.roomsChanged
        return ownership.renewable
    }

    /// How long after finding the database again a node leaves other nodes'
    /// lapsed leases alone: an owner that held its rooms through the outage
    /// retries its heartbeat every 0.25 s and renews them well within it.
    var takeoverPause: MonotonicDuration { .seconds(max(1, settings.lease.seconds * 2)) }

    func mayTakeLapsed(now: MonotonicInstant) -> Bool {
        guard let since = databaseBackSince else { return databaseUp }
        return now - since >= takeoverPause
    }
}

extension Gateway {
    /// How long a member may wait for its room to find an owner (a dead owner's
    /// lease must end first) before it is asked to come back later.
    var placementPatience: MonotonicDuration {
        .seconds((cluster?.settings.lease.seconds ?? 1) * 2 + 2)
    }

    /// The leases' heartbeat: which rooms the database still says are ours.
    func renewed(_ renewal: PostgresLeases.Renewal) {
        guard let cluster else { return }
        cluster.databaseSeconds.observe(seconds: renewal.took.seconds)
        if let shared = renewal.operatorState {
            for address in state.operatorStateShared(shared, at: eventTime.server) {
                closeOperatorBanned(address)
            }
        }
        if let held = renewal.held {
            cluster.renewals += 1
            if !cluster.databaseUp {
                cluster.databaseBackSince = eventTime.monotonic
                logger.info("database reached again", metadata: ["held": "\(cluster.ownership.heldCount)"])
            }
            cluster.databaseUp = true
            run(ownership: cluster.ownership.handle(.renewed(sentAt: renewal.sentAt, held: held, asked: renewal.asked,
                                                                       receivedAt: eventTime.monotonic)))
        } else {
            cluster.renewalFailures += 1
            cluster.databaseUp = false
            run(ownership: cluster.ownership.handle(.renewalFailed))
        }
    }

    /// A write refused under `epoch`: only the ownership that wrote steps down
    /// (the room may have been taken again since).
    func fenced(_ room: RoomName, epoch: Int64) {
        guard cluster?.ownership.epoch(of: room) == epoch else { return }
        stepDown(room, why: "a write was refused: another node holds its lease")
    }

    func ceilingExtended(_ room: RoomName, epoch: Int64, ceiling: Int64, granted: Bool?) {
        guard let cluster else { return }
        run(ownership: cluster.ownership.handle(.ceilingExtended(room, epoch: epoch, ceiling: ceiling, granted: granted)))
    }

    /// Closes from the owner that mean "this room is elsewhere now": the member is
    /// told to reconnect at once (4010) rather than given up.
    static func relayCloseMeansMoved(_ code: UInt16) -> Bool {
        // 1012 and 1013 are the registered codes for such closes; libwebsockets
        // 4.1 takes them for protocol errors, hence 4010 and 4011 of our own.
        [1001, 1006, 1011, 1012, 1013, 4010, 4011].contains(code)
    }

    /// This node no longer owns `room`: it writes nothing more of it, and its
    /// members are told to reconnect, to whichever node now has it.
    func stepDown(_ room: RoomName, why: String) {
        guard let cluster else { return }
        emit(.disown(room))
        run(ownership: cluster.ownership.handle(.released(room)))
        tables.forgetHeldTimers(of: room)
        guard let entry = rooms[room] else { return }
        dropRoom(room)
        cluster.roomsLost += 1
        logger.warning("room given up", metadata: ["room": "\(room)", "why": "\(why)"])
        for (member, connection) in entry.connections {
            tables.unseated(connection, member, in: entry)
            close(connection, code: 4010, reason: "the room moved to another node; reconnect now")
        }
        // Each node's link goes after the closes it carries down for its members.
        for link in entry.links.values { close(link, code: 4010, reason: "the room moved to another node; reconnect now") }
    }

    /// The room's lease lapsed while the database could not be reached: it stays,
    /// playing as it was, but nothing may change it (another node might be
    /// taking it) until a renewal says it is still this node's.
    func roomHeld(_ room: RoomName) {
        guard let cluster, let entry = rooms[room] else { return }
        cluster.roomsHeld += 1
        logger.warning("room held: its lease could not be renewed", metadata: ["room": "\(room)"])
        tell(entry, Self.heldNotice)
    }

    /// Renewed under its epoch after a hold: nobody took it; it may change again,
    /// and what it showed meanwhile is written from the queue.
    func roomResumed(_ room: RoomName) {
        guard let entry = rooms[room] else { return }
        logger.info("room resumed: its lease was renewed", metadata: ["room": "\(room)"])
        tell(entry, Self.resumedNotice)
        releaseHeldTimers(room)
    }

    private func releaseHeldTimers(_ room: RoomName) {
        for timer in tables.takeHeldTimers(of: room) {
            guard let entry = rooms[room], !isHeld(room) else { return }
            run(entry.room.timerFired(timer, now: eventTime.server), in: entry)
        }
    }

    static let heldNotice = "The database is out of reach: the room plays on as it is, but nothing can change until it is back."
    static let resumedNotice = "The database is back: the room can change again."

    /// Whether `room` is held, waiting for its lease (`RoomOwnership`).
    func isHeld(_ room: RoomName) -> Bool {
        cluster?.ownership.isHeld(room) ?? false
    }

    private func tell(_ entry: RoomEntry, _ text: String) {
        for connection in entry.connections.values {
            send(.notice(Notice(text: text, cause: nil, by: nil)), to: connection)
        }
    }

    /// After each room's actions: the numbers its states used.
    func numbered(_ entry: RoomEntry) {
        guard let cluster else { return }
        run(ownership: cluster.ownership.handle(.numbered(entry.room.name, seq: entry.room.state.seq)))
    }

    /// SIGTERM in a cluster: every room's writes are flushed, its lease released,
    /// and its members (and the members relayed from here) told to reconnect at
    /// once: another node takes each room as they come back.
    func handOver() {
        guard let cluster else { return }
        emit(.flushStore)
        for (room, held) in cluster.ownership.rooms.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            emit(.disown(room))
            emit(.releaseLease(room, epoch: held.epoch))
            run(ownership: cluster.ownership.handle(.released(room)))
        }
        emit(.stopLeases)
        logger.info("rooms handed over", metadata: ["rooms": "\(rooms.count)"])
    }

    func clusterHealth() -> String {
        guard let cluster else { return "" }
        let relayed = cluster.relayLinks.relayedMembers
        return "\nnode: \(cluster.settings.node)\nrooms owned: \(cluster.ownership.rooms.count)"
            + "\nrelayed members: \(relayed)\ndatabase: \(cluster.databaseUp ? "up" : "unreachable")"
            + "\nrelaying: " + (configuration.clusterSecret == nil ? Self.cannotRelay : "ready")
    }

    /// Said at start and in /healthz by a cluster node that cannot relay.
    static let cannotRelay = "impossible: no cluster-secret-file, so members of rooms another node owns cannot be served "
        + "here, and other nodes cannot relay their members to this one (give every node the same secret file)"
}

extension Gateway {
    /// The cluster's view, for /metrics (docs/cluster.md, "Watching a cluster").
    func clusterMetrics() -> String {
        guard let cluster, let clusterLink else { return "" }
        let relayed = cluster.relayLinks.relayedMembers
        var out = ""
        func single(_ name: String, _ type: String, _ help: String, _ value: Int) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        single("cowatch_cluster_rooms_owned", "gauge", "Rooms whose lease this node holds.", cluster.ownership.rooms.count)
        single("cowatch_cluster_relayed_members", "gauge", "Members connected here whose room another node owns.", relayed)
        single("cowatch_cluster_relay_links_out", "gauge", "Shared links from this node to rooms other nodes own (one per room and owner).",
               cluster.relayLinks.links.count)
        single("cowatch_cluster_relay_links_in", "gauge", "Other nodes' shared links to rooms this node owns.",
               rooms.values.reduce(0) { $0 + $1.links.count })
        single("cowatch_cluster_carried_members", "gauge", "Members of rooms this node owns that other nodes relay here.", carried.count)
        single("cowatch_cluster_lease_renewals_total", "counter", "Heartbeats that renewed this node's leases.", cluster.renewals)
        single("cowatch_cluster_lease_renewal_failures_total", "counter", "Heartbeats the database did not answer.", cluster.renewalFailures)
        single("cowatch_cluster_rooms_taken_total", "counter", "Rooms whose lease this node took.", cluster.roomsTaken)
        single("cowatch_cluster_rooms_lost_total", "counter", "Rooms this node gave up (lease lapsed, taken or fenced).", cluster.roomsLost)
        single("cowatch_database_up", "gauge", "1 while the last heartbeat reached the database.", cluster.databaseUp ? 1 : 0)
        single("cowatch_cluster_rooms_held", "gauge", "Rooms whose lease lapsed while the database was away, held unchanged.",
               cluster.ownership.heldCount)
        single("cowatch_cluster_rooms_held_total", "counter", "Times a room was held because its lease could not be renewed.",
               cluster.roomsHeld)
        single("cowatch_cluster_lines_refused_held_total", "counter", "Lines refused because they would change a held room.",
               cluster.linesRefusedWhileHeld)
        let statistics = clusterLink.store.takeStatistics()
        for took in statistics.writeTimes { cluster.storeWriteSeconds.observe(seconds: took.seconds) }
        single("cowatch_store_dropped_changes_total", "counter",
               "Changes dropped because the database stayed away longer than the write queue holds.", statistics.dropped)
        single("cowatch_database_conflicts_total", "counter",
               "Transactions (store writes, lease renewals) that lost a race to another (deadlock, serialization failure) and were tried again.",
               statistics.conflicts + clusterLink.leases.conflicts)
        GatewayMetrics.histogram("cowatch_database_seconds", "Heartbeat round trips to the database.",
                                 cluster.databaseSeconds, into: &out)
        GatewayMetrics.histogram("cowatch_store_write_seconds", "Time to write one batch of changes to the database.",
                                 cluster.storeWriteSeconds, into: &out)
        return out
    }
}
