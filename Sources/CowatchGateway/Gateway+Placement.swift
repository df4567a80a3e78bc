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
        connection.route = .placing(Route.Placement(request: request, since: time.monotonic()))
        wait(connection, for: room, retryAfter: .zero)
    }

    func wait(_ connection: Connection, for room: RoomName, retryAfter delay: MonotonicDuration) {
        guard let cluster else { return }
        ask(cluster.placements.wait(connection.id, for: room, after: delay, now: time.monotonic()))
    }

    private func ask(_ rooms: [RoomName]) {
        guard let cluster else { return }
        for room in rooms {
            cluster.link.leases.acquire(room) { [weak self] placement in self?.post(.placement(room, placement)) }
        }
    }

    /// Every housekeeping pass: leases that lapsed, rooms to ask about again,
    /// members who waited too long.
    func clusterHousekeeping() {
        guard let cluster else { return }
        ownershipActions(cluster.ownership.handle(.tick(now: time.monotonic())))
        let now = time.monotonic()
        ask(cluster.placements.due(at: now))
        for connection in connections.values {
            if case .placing(let placing) = connection.route,
               Placements.outwaited(since: placing.since, now: now, patience: placementPatience) {
                connection.route = .local
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
                cluster.link.leases.release(room, epoch: epoch)
                for connection in waiting { close(connection, code: 4010, reason: "this node is leaving; reconnect now") }
                return
            }
            if rooms[room] == nil { takeOver(room, stored: stored, floor: floor) }
            cluster.link.store.own(room, epoch: epoch)
            ownershipActions(cluster.ownership.handle(.acquired(room, epoch: epoch, ceiling: ceiling, requestedAt: requestedAt)))
            cluster.roomsTaken += 1
            logger.info("room taken", metadata: ["room": "\(room)", "epoch": "\(epoch)", "seq": "\(floor)"])
            for connection in waiting {
                guard case .placing(let placing) = connection.route else { continue }
                connection.route = .local
                join(connection, placing.request, room: room)
                releaseHeld(connection)
            }
        case .elsewhere(let node, let url):
            guard !url.isEmpty, node != cluster.link.leases.settings.node else {
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
        let now = time.now()
        var entry: RoomEntry
        var actions: [RoomAction] = []
        if let stored {
            let (restored, restoring) = Room.restore(
                stored.snapshot, members: stored.members, chat: stored.chat, configuration: configuration.room,
                downSince: stored.snapshot.savedAt,
                maximumDowntime: ServerInterval(seconds: configuration.maximumDowntimeSeconds), now: now)
            entry = RoomEntry(room: restored)
            actions = restoring
        } else {
            entry = RoomEntry(room: Room(name: room, configuration: configuration.room, now: now))
        }
        entry.room.continueNumbering(after: floor)
        rooms[room] = entry
        run(actions, in: entry)
    }

    // MARK: - Relaying a member to the room's owner

    private func relay(_ connection: Connection, to base: String) {
        guard let cluster, case .placing(let placing) = connection.route, let room = placing.request.room,
              var address = WebSocketAddress(base.hasSuffix("/") ? String(base.dropLast()) + "/rooms/\(room)" : base + "/rooms/\(room)")
        else {
            close(connection, code: 1011, reason: "the room's node cannot be reached")
            return
        }
        for (key, value) in Self.query(of: placing.request) { address = address.adding(key, value) }
        let id = connection.id
        let encoding: ClientEncoding = connection.encoding == .text ? .text : .json
        let upstream = cluster.relays.connect(address, encoding: encoding, handlers: ClientHandlers(
            opened: { [weak self] in self?.post(.relayOpened(id)) },
            received: { [weak self] text in self?.post(.relayReceived(id, text)) },
            closed: { [weak self] info in self?.post(.relayClosed(id, info)) }),
            headers: [("X-Forwarded-For", connection.address)])
        // The member stays being placed until the owner answers: a refusal of the
        // link before it opens sends it back to waiting (see `.relayClosed`);
        // its lines stay held until then.
        connection.route = .relayed(RelayLink(upstream: upstream), placing: placing)
    }

    /// The query an upgrade carried, for the same upgrade on the owner's node.
    static func query(of request: UpgradeRequest) -> [(String, String)] {
        var query: [(String, String)] = []
        if let name = request.name { query.append(("name", name)) }
        if let resume = request.resume { query.append(("resume", resume)) }
        if request.player { query.append(("player", "1")) }
        if !request.join { query.append(("join", "0")) }
        if let owner = request.owner { query.append(("owner", owner)) }
        if let device = request.device { query.append(("device", device)) }
        if let invite = request.invite { query.append(("invite", invite)) }
        if let password = request.password { query.append(("password", password)) }
        if let token = request.token { query.append(("token", token)) }
        if let create = request.create { query.append(("create", create)) }
        return query
    }

    // MARK: - The relay's events

    func relayOpened(_ id: UInt64) {
        guard let connection = connections[id], case .relayed(let link, _) = connection.route else { return }
        connection.route = .relayed(link, placing: nil)
        // What the member sent meanwhile goes on to the owner, in order.
        releaseHeld(connection)
    }

    func relayReceived(_ id: UInt64, _ text: String) {
        guard let connection = connections[id], connection.route.isRelayed, connection.state.isOpen else { return }
        enqueue(OutboundFrame(Array(text.utf8), kind: .text, createdAt: time.monotonic()), on: connection)
    }

    func relayClosed(_ id: UInt64, _ info: CloseInfo) {
        guard let connection = connections[id], case .relayed(_, let placing) = connection.route else { return }
        connection.route = .local
        if let placing, let room = placing.request.room, state.isServing {
            // The owner did not answer (it may have just died): ask again shortly,
            // while the member waits, its lines still held.
            connection.route = .placing(placing)
            wait(connection, for: room, retryAfter: .milliseconds(150))
            return
        }
        guard connection.state.isOpen else { return }
        if let code = info.code, !Self.relayCloseMeansMoved(code) {
            close(connection, code: code, reason: info.reason)
        } else {
            close(connection, code: 4010, reason: "the room moved to another node; reconnect now")
        }
    }
}
