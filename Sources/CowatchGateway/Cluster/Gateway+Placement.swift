import CowatchClient
import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime
import Foundation
import SlashCommands

/// In a cluster, a connection to a room this node does not serve: placed once
/// the database says which node owns the room, then joined here or relayed
/// there (`Route.placing`, `Route.relayed`). The cluster's events and the
/// ownership's decisions are `Gateway+Cluster.swift`.
extension Gateway {
    // MARK: - Placing a connection

    /// A connection to a room this node does not serve: held (with its lines) until
    /// the database says who owns the room.
    func place(_ connection: Connection, _ request: UpgradeRequest, in room: RoomName) {
        tables.routed(connection, .placing(Route.Placement(request: request, since: eventTime.monotonic)))
        wait(connection, for: room, retryAfter: .zero)
    }

    func wait(_ connection: Connection, for room: RoomName, retryAfter delay: MonotonicDuration) {
        guard let cluster else { return }
        ask(cluster.placements.wait(connection.id, for: room, after: delay, now: eventTime.monotonic))
    }

    private func ask(_ rooms: [RoomName]) {
        guard let cluster else { return }
        let mayTakeLapsed = cluster.mayTakeLapsed(now: eventTime.monotonic)
        for room in rooms { emit(.acquireLease(room, mayTakeLapsed: mayTakeLapsed)) }
    }

    /// Every housekeeping pass: leases that lapsed, rooms to ask about again,
    /// members who waited too long.
    func clusterHousekeeping() {
        guard let cluster else { return }
        // A renewal already answered may wait in the inbox behind a busy turn of
        // the loop (a room of thousands filling): it is read before the leases'
        // trust is judged, so that a node steps down for a late database, not
        // for its own late reading.
        serviceWoken()
        run(ownership: cluster.ownership.handle(.tick(now: eventTime.monotonic)))
        let now = eventTime.monotonic
        run(relaying: cluster.relayLinks.tick(at: now))
        ask(cluster.placements.due(at: now))
        for connection in connections.values {
            if case .placing(let placing) = connection.route,
               Placements.outwaited(since: placing.since, now: now, patience: placementPatience) {
                tables.routed(connection, .local)
                close(connection, code: 4011, reason: "the room has no node to serve it right now; try again shortly")
            }
        }
    }

    func placed(_ room: RoomName, _ placement: PostgresLeases.Placement) {
        guard let cluster else { return }
        let waiting = cluster.placements.answered(room).compactMap { connections[$0] }
            .filter { connection in
                if case .placing = connection.route { connection.state.isOpen } else { false }
            }
        switch placement {
        case .owned(let epoch, let floor, let ceiling, let stored, let requestedAt):
            if !state.isServing {
                emit(.releaseLease(room, epoch: epoch))
                for connection in waiting { close(connection, code: 4010, reason: "this node is leaving; reconnect now") }
                return
            }
            if rooms[room] == nil { takeOver(room, stored: stored, floor: floor) }
            emit(.own(room, epoch: epoch))
            run(ownership: cluster.ownership.handle(.acquired(room, epoch: epoch, ceiling: ceiling, requestedAt: requestedAt)))
            cluster.roomsTaken += 1
            logger.info("room taken", metadata: ["room": "\(room)", "epoch": "\(epoch)", "seq": "\(floor)"])
            for connection in waiting {
                guard case .placing(let placing) = connection.route else { continue }
                tables.routed(connection, .local)
                join(connection, placing.request, room: room)
                releaseHeld(connection)
            }
        case .elsewhere(let node, let url):
            guard !url.isEmpty, node != cluster.settings.node else {
                for connection in waiting { wait(connection, for: room, retryAfter: .milliseconds(150)) }
                return
            }
            for connection in waiting { relay(connection, to: url) }
        case .unavailable(let why):
            logger.warning("room placement failed", metadata: ["room": "\(room)", "error": "\(why)"])
            for connection in waiting { wait(connection, for: room, retryAfter: .milliseconds(500)) }
        }
    }

    /// The room as the database keeps it, now this node's: playing rooms go on
    /// from their anchor, members wait for their resume tokens, and states are
    /// numbered after every `seq` the previous owner could have sent.
    private func takeOver(_ room: RoomName, stored: StoredRooms.Room?, floor: Int64) {
        let now = eventTime.server
        var entry: RoomEntry
        var actions: [RoomAction] = []
        if let stored {
            let (restored, restoring) = Room.restore(
                stored.snapshot, members: stored.members, chat: stored.chat, configuration: configuration.room,
                downSince: stored.snapshot.savedAt,
                maximumDowntime: ServerInterval(seconds: configuration.maximumDowntime.asSeconds), now: now)
            entry = RoomEntry(room: restored)
            actions = restoring
        } else {
            entry = RoomEntry(room: Room(name: room, configuration: configuration.room, now: now))
        }
        entry.room.continueNumbering(after: floor)
        tables.kept(entry)
        run(actions, in: entry)
    }
}
