import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime
import Foundation
import Logging
import SlashCommands

/// The one place where what is decided is carried out (`GatewayEffect`): the
/// gateway's own decisions (`GatewayAction`, from `GatewayState`), a room's
/// (`RoomAction`, from the core's `Room`), a connection's (`ConnectionAction`,
/// from its `ConnectionState`; for a member another node relays here, on its
/// link), in a cluster the room ownership's (`RoomOwnership.Action`) and the
/// shared relay links' (`RelayLinks.Action`), and every change to the gateway's
/// tables: its rooms, its connections, who sits where and where a connection's
/// lines go. Each machine decides without touching anything; `run` carries out
/// what they decide, and nothing else in the gateway writes those tables.
extension Gateway {
    func run(_ effects: [GatewayEffect]) {
        for effect in effects { run(effect) }
    }

    func run(_ effect: GatewayEffect) {
        switch effect {
        case .gateway(let action):
            carryOut(action)
        case .room(let actions, let entry):
            carryOut(actions, in: entry)
        case .connection(let actions, let connection):
            carryOut(actions, on: connection)
        case .ownership(let actions):
            carryOut(actions)
        case .relaying(let actions):
            carryOut(relaying: actions)
        case .send(let event, let connection):
            countError(event)
            let now = eventTime.monotonic
            for frame in frames(for: event, encoding: connection.encoding, room: connection.room, now: now) {
                enqueue(frame, on: connection, now: now)
            }
        case .close(let connection, let code, let reason):
            carryOut([.close(ConnectionState.CloseFrame(code: code, reason: reason))], on: connection)
        case .connectionOpened(let connection):
            connections[connection.id] = connection
            if !connectionSlices.isEmpty { connectionSlices[slice(of: connection.id)][connection.id] = connection }
            metrics.connectionsOpened += 1
        case .connectionGone(let connection):
            if !connectionSlices.isEmpty { connectionSlices[slice(of: connection.id)][connection.id] = nil }
            connections[connection.id] = nil
            connection.isGone = true
        case .roomKept(let entry):
            rooms[entry.room.name] = entry
        case .roomDropped(let name):
            rooms[name] = nil
            state.roomForgotten(name)
        case .seated(let connection, let member, let entry):
            connection.room = entry.room.name
            connection.member = member
            entry.bind(connection, as: member)
        case .unseated(let connection, let member, let entry):
            if entry.connections[member] === connection { entry.unbind(member) }
            connection.member = nil
        case .routed(let connection, let route):
            connection.route = route
        case .leaving(let connection, let leaving):
            connection.leaving = leaving
        case .carried(let member, let link, let number):
            member.carrier = .link(link, number)
            link.carried[number] = member
            if member.encoding == .json { link.carriedJSON += 1 } else { link.carriedText += 1 }
            carried[member.id] = member
        case .uncarried(let member):
            guard case .link(let link, let number) = member.carrier, link.carried[number] === member else { return }
            link.carried[number] = nil
            if member.encoding == .json { link.carriedJSON -= 1 } else { link.carriedText -= 1 }
            carried[member.id] = nil
            member.isGone = true
        case .linkAttached(let link, let entry):
            link.room = entry.room.name
            entry.links[link.id] = link
        case .linkDetached(let link):
            if let name = link.room { rooms[name]?.links[link.id] = nil }
        }
    }

    // The event handlers' shorthands: each hands one machine's decisions to `run`.

    func run(gateway actions: [GatewayAction]) {
        for action in actions { run(.gateway(action)) }
    }

    func run(_ actions: [RoomAction], in entry: RoomEntry) {
        run(.room(actions, in: entry))
    }

    func run(_ actions: [ConnectionAction], on connection: Connection) {
        if !actions.isEmpty { run(.connection(actions, on: connection)) }
    }

    func run(ownership actions: [RoomOwnership.Action]) {
        run(.ownership(actions))
    }

    func run(relaying actions: [RelayLinks.Action]) {
        if !actions.isEmpty { run(.relaying(actions)) }
    }

    /// An event for one connection alone.
    func send(_ event: RoomEvent, to connection: Connection) {
        run(.send(event, to: connection))
    }

    /// The server closes a connection: what is queued goes first, then the close
    /// frame with this code and reason.
    func close(_ connection: Connection, code: UInt16, reason: String) {
        run(.close(connection, code: code, reason: reason))
    }

    private func slice(of id: UInt64) -> Int {
        Int(id % UInt64(connectionSlices.count))
    }
}

// MARK: - Carrying out each machine's decisions (only `run` calls these)

extension Gateway {
    private func carryOut(_ action: GatewayAction) {
        switch action {
        case .acceptSocket, .admitUpgrade:
            // Answered by the caller, which returns the answer to the library.
            break
        case .refuseSocket(let refusal):
            if let refusal { metrics.refusedConnections[refusal.rawValue, default: 0] += 1 }
        case .refuseUpgrade(let refusal):
            if let counted = refusal.counted { metrics.refusedConnections[counted, default: 0] += 1 }
        case .saveOperatorState:
            // Kept after each change, so that bans, drain and creation tokens outlive a
            // restart. A cluster node keeps only its own (its drain) under its own
            // name: the cluster's part is shared change by change (below).
            if let cluster {
                var own = OperatorState()
                own.draining = state.operatorState.draining
                guard let data = try? JSONEncoder().encode(own) else { break }
                cluster.link.store.write([.serverState(name: PostgresStore.nodeOperatorName(cluster.link.leases.settings.node),
                                                       json: String(decoding: data, as: UTF8.self))])
                break
            }
            guard let store, let data = try? JSONEncoder().encode(state.operatorState) else { break }
            store.write([.serverState(name: OperatorState.storeName, json: String(decoding: data, as: UTF8.self))])
        case .shareOperatorChange(let change):
            cluster?.link.leases.shareOperatorChange(change)
        case .giveUpUnusedRoom(let name):
            run(.roomDropped(name))
            store?.write([.forgetRoom(name)])
            metrics.unusedRoomsGivenUp += 1
            logger.info("unused room given up for a new one", metadata: ["room": "\(name)"])
        case .fireRoomTimer(let room, let timer, let now):
            guard let entry = rooms[room] else { break }
            if isHeld(room) {
                // A held room may not change: its timer waits for the room to go on.
                cluster?.heldTimers[room, default: []].append(timer)
                break
            }
            run(entry.room.timerFired(timer, now: now), in: entry)
        case .armRoomTimers:
            server?.armTimers(nextDue: state.nextTimerDue())
        case .armHousekeeping(let delay):
            server?.armHousekeeping(afterMicroseconds: delay.microseconds)
        case .writeAliveMark(let instant):
            store?.write([.alive(instant)])
        case .keepChatWithinBudget:
            keepChatWithinBudget()
        case .tickConnections(let now, let slice, let slices):
            if slices == connectionSlices.count, connectionSlices.indices.contains(slice) {
                for connection in connectionSlices[slice].values {
                    run(connection.state.tick(now: now, ping: pingFrame), on: connection)
                }
            } else {
                for connection in connections.values {
                    run(connection.state.tick(now: now, ping: pingFrame), on: connection)
                }
            }
            metrics.connectionPass.observe(seconds: (time.monotonic() - now).seconds)
        case .clusterHousekeeping:
            clusterHousekeeping()
        case .handOverRooms:
            handOver()
        case .closeEveryConnection(let code, let reason):
            for connection in connections.values { close(connection, code: code, reason: reason) }
        case .finish:
            server?.wake()
        }
    }

    private func carryOut(_ actions: [RoomAction], in entry: RoomEntry) {
        var changes: [StoreChange] = []
        let name = entry.room.name
        for action in actions {
            switch action {
            case .broadcast(let event, let except):
                logMembership(event, in: name)
                broadcast(event, in: entry, except: except)
            case .send(let event, let member):
                guard let connection = entry.connections[member] else { continue }
                send(event, to: connection)
            case .schedule(let timer, let instant):
                run(.gateway(state.schedule(timer, in: name, at: instant)))
            case .cancel(let timer):
                state.cancel(timer, in: name)
            case .closeConnection(let member, let reason):
                logger.info("member removed", metadata: ["room": "\(name)", "member": "\(member)", "reason": "\(reason)"])
                guard let connection = entry.connections[member] else { continue }
                run(.unseated(connection, member, in: entry))
                run(.close(connection, code: 4001, reason: reason))
            case .persist(let snapshot): changes.append(.room(snapshot))
            case .persistMember(let record): changes.append(.member(name, record))
            case .forgetMember(let id): changes.append(.forgetMember(name, id))
            case .persistChat(let line): changes.append(.chat(name, line))
            case .forgetRoom:
                // An empty room reached its expiry: it and all it kept go.
                run(.roomDropped(name))
                changes.append(.forgetRoom(name))
                metrics.roomsExpired += 1
            }
        }
        if let store, !changes.isEmpty { store.write(changes) }
        if cluster != nil, rooms[name] === entry { numbered(entry) }
    }

    /// In a cluster, what the room ownership decides (`RoomOwnership`).
    private func carryOut(_ actions: [RoomOwnership.Action]) {
        guard let cluster else { return }
        for action in actions {
            switch action {
            case .stepDown(let room, let why):
                stepDown(room, why: why)
            case .hold(let room):
                roomHeld(room)
            case .resume(let room):
                roomResumed(room)
            case .extendCeiling(let room, let epoch, let ceiling):
                cluster.link.leases.extendCeiling(room, epoch: epoch, to: ceiling) { [weak self] granted in
                    self?.post(.ceilingExtended(room, epoch: epoch, ceiling: ceiling, granted: granted))
                }
            }
        }
        cluster.shareRenewable()
    }

    /// On a node that relays members: what its shared links decide
    /// (`RelayLinks`, events from `Gateway+Relaying.swift`).
    private func carryOut(relaying actions: [RelayLinks.Action]) {
        guard let cluster else { return }
        for action in actions {
            switch action {
            case .open(let id, let room, let url):
                openLink(id, room: room, url: url)
            case .send(let id, let up):
                cluster.upstreams[id]?.send(bytes: RelayWire.encode(up), binary: false)
            case .close(let id):
                cluster.upstreams.removeValue(forKey: id)?.close(code: 1000)
            case .deliver(let payload, let recipients):
                // Framed once for all of them, as on the owner.
                let now = eventTime.monotonic
                let frame = OutboundFrame(payload, kind: .text, createdAt: now)
                for id in recipients {
                    guard let connection = connections[id], connection.state.isOpen else { continue }
                    enqueue(frame, on: connection, now: now)
                }
            case .relaying(let id, let link, let number):
                guard let connection = connections[id] else { continue }
                connection.route = .relayed(RelayLink(link: link, number: number), placing: nil)
                // What the member sent meanwhile goes on to the owner, in order, after its join.
                releaseHeld(connection)
            case .placeAgain(let id):
                guard let connection = connections[id], case .relayed(_, let placing?) = connection.route,
                      let room = placing.request.room else { continue }
                connection.route = .placing(placing)
                if state.isServing {
                    // The owner did not answer (it may have just died): ask again
                    // shortly, while the member waits, its lines still held.
                    wait(connection, for: room, retryAfter: .milliseconds(150))
                } else {
                    connection.route = .local
                    close(connection, code: 4010, reason: "this node is leaving; reconnect now")
                }
            case .closeMember(let id, let code, let reason):
                guard let connection = connections[id] else { continue }
                connection.route = .local
                if connection.state.isOpen { close(connection, code: code, reason: reason) }
            }
        }
    }

    /// Who came, went and changed role, for an operator asking "who did what in
    /// room X" (structured, at info).
    private func logMembership(_ event: RoomEvent, in room: RoomName) {
        switch event {
        case .participant(let member, let change):
            let what: String
            switch change {
            case .arrived: what = "member arrived"
            case .reconnected: what = "member reconnected"
            case .disconnected: what = "member disconnected"
            case .role: what = member.role == .host ? "member made host" : "member no longer host"
            case .muted: what = "member muted"
            case .unmuted: what = "member unmuted"
            case .renamed(let old):
                logger.info("member renamed", metadata: ["room": "\(room)", "member": "\(member.id)", "from": "\(old)", "name": "\(member.name)"])
                return
            default: return
            }
            var metadata: Logger.Metadata = ["room": "\(room)", "member": "\(member.id)", "name": "\(member.name)"]
            if let scope = member.scope { metadata["bot"] = "\(scope.rawValue)" }
            // The address an operator bans (`cowatch admin ban`), as the server
            // sees it: the client's own behind a trusted proxy.
            switch change {
            case .arrived, .reconnected:
                if let address = rooms[room]?.connections[member.id]?.address { metadata["address"] = "\(address)" }
            default:
                break
            }
            logger.info("\(what)", metadata: metadata)
        case .participantLeft(let id, let name, let reason):
            logger.info("member left", metadata: ["room": "\(room)", "member": "\(id)", "name": "\(name)", "reason": "\(reason.rawValue)"])
        default:
            return
        }
    }

    /// Encodes the event once per encoding in use and queues the same frames on
    /// every recipient.
    func broadcast(_ event: RoomEvent, in entry: RoomEntry, except: MemberID?) {
        metrics.broadcasts += 1
        countError(event)
        let now = eventTime.monotonic
        let json = entry.jsonConnections > 0 ? OutboundFrame(JSONEventEncoding.encode(event), createdAt: now) : nil
        let text = entry.textConnections > 0
            ? TextEventEncoding.lines(event, now: eventTime.server, awaited: entry.room.playersAwaited)
                .map { OutboundFrame(Array($0.utf8), createdAt: now) } : []
        for (member, connection) in entry.connections where member != except && !connection.isCarried {
            switch connection.encoding {
            case .json: if let json { enqueue(json, on: connection, now: now) }
            case .text: for frame in text { enqueue(frame, on: connection, now: now) }
            case .echo, .relay: break
            }
        }
        // Members on other nodes: once down each node's link per encoding, for
        // that node to fan out (`Gateway+RelayedMembers.swift`).
        guard !entry.links.isEmpty else { return }
        let excepted = except.flatMap { entry.connections[$0] }
        let isState = if case .state = event { true } else { false }
        for link in entry.links.values where link.state.isOpen {
            var number: RelayNumber?
            if let excepted, case .link(let carrier, let carriedNumber) = excepted.carrier, carrier === link { number = carriedNumber }
            if let json, link.carriedJSON > 0 {
                sendDown(isState ? .everyoneState(.json, except: number) : .everyone(.json, except: number), json, on: link, now: now)
            }
            if link.carriedText > 0 {
                for frame in text {
                    sendDown(isState ? .everyoneState(.text, except: number) : .everyone(.text, except: number), frame, on: link, now: now)
                }
            }
        }
    }

    /// An event for one connection alone. `room`: whose waiting a text line counts
    /// the players of (`Room.playersAwaited`).
    func frames(for event: RoomEvent, encoding: Connection.Encoding, room: RoomName?, now: MonotonicInstant) -> [OutboundFrame] {
        switch encoding {
        case .json: return [OutboundFrame(JSONEventEncoding.encode(event), createdAt: now)]
        case .text:
            let awaited = room.flatMap { rooms[$0]?.room.playersAwaited }
            return TextEventEncoding.lines(event, now: eventTime.server, awaited: awaited, addressed: true)
                .map { OutboundFrame(Array($0.utf8), createdAt: now) }
        case .echo, .relay: return []
        }
    }

    fileprivate func countError(_ event: RoomEvent) {
        if case .error(let error) = event { metrics.errors[error.code.rawValue, default: 0] += 1 }
    }

    /// The service loop's timer for the rooms went off.
    func fireTimers() {
        run(gateway: state.timersDue(at: eventTime.server))
    }
}

extension Gateway {
    var connectionLimits: ConnectionLimits { configuration.connectionLimits }

    private func carryOut(_ actions: [ConnectionAction], on connection: Connection) {
        if case .link(let link, let number) = connection.carrier {
            carryOutCarried(actions, on: connection, link: link, number: number)
            return
        }
        for action in actions {
            switch action {
            case .requestWrite:
                server?.requestWrite(connection)
            case .pauseReading:
                metrics.readingPauses += 1
                server?.setReading(connection, paused: true)
            case .resumeReading:
                server?.setReading(connection, paused: false)
            case .warnRateLimited:
                warnRateLimited(connection)
            case .close(let frame):
                let now = eventTime.monotonic
                let followUp = connection.state.close(frame, now: now)
                guard !followUp.isEmpty else { continue }
                metrics.closes[GatewayMetrics.CloseKey(code: "\(frame.code)", initiator: "server"), default: 0] += 1
                // A closing connection takes no more part in its room; a closing
                // link's members are gone from here.
                leaveRoom(connection)
                if connection.encoding == .relay { relayLinkGone(connection) }
                run(followUp, on: connection)
            case .resynchronize(let dropped):
                let now = eventTime.monotonic
                metrics.outboxDrops += dropped.count
                metrics.outboxResyncs += 1
                for frame in dropped { settle(frame, now: now) }
                if connection.route.isRelayed, let cluster {
                    // A relayed member that fell behind gets the room's latest
                    // state as its link brought it, as the owner's own members do.
                    guard let latest = cluster.relayLinks.latestState(for: connection.id) else {
                        run(relaying: cluster.relayLinks.askForState(connection.id))
                        continue
                    }
                    run(connection.state.enqueueResynchronization([OutboundFrame(latest, createdAt: now)]), on: connection)
                    continue
                }
                if connection.encoding == .relay {
                    // All the members of a link that fell behind come back for the room's state.
                    close(connection, code: 4010, reason: "too far behind; reconnect now")
                    continue
                }
                guard let name = connection.room, let entry = rooms[name] else { continue }
                let frames = frames(for: .state(entry.room.state), encoding: connection.encoding, room: name, now: now)
                run(connection.state.enqueueResynchronization(frames), on: connection)
            case .reportRoundTrip(let roundTrip):
                metrics.roundTrip.observe(seconds: roundTrip.seconds)
                if connection.encoding == .relay {
                    connection.linkRoundTrip = roundTrip.roundedUpMilliseconds
                    continue
                }
                if let cluster, connection.route.isRelayed {
                    run(relaying: cluster.relayLinks.roundTrip(connection.id, milliseconds: Int(roundTrip.roundedUpMilliseconds)))
                    continue
                }
                guard let name = connection.room, let member = connection.member, let entry = rooms[name] else { continue }
                let measured = ServerInterval(milliseconds: roundTrip.roundedUpMilliseconds)
                run(entry.room.roundTripMeasured(measured, for: member, now: eventTime.server), in: entry)
            case .drop(let cause):
                metrics.dropped[cause.rawValue, default: 0] += 1
                server?.drop(connection)
            case .hangUp:
                metrics.closeRepliesMissing += 1
                server?.drop(connection)
            }
        }
    }

    /// What a carried member's connection decides, carried out on its link.
    private func carryOutCarried(_ actions: [ConnectionAction], on member: Connection, link: Connection, number: RelayNumber) {
        for action in actions {
            switch action {
            case .close(let frame):
                guard !member.state.close(frame, now: eventTime.monotonic).isEmpty else { continue }
                metrics.closes[GatewayMetrics.CloseKey(code: "\(frame.code)", initiator: "server"), default: 0] += 1
                leaveRoom(member)
                detachCarried(member)
                sendDown(.close(number, code: frame.code, reason: frame.reason), on: link)
            case .warnRateLimited:
                warnRateLimited(member)
            case .requestWrite, .pauseReading, .resumeReading, .resynchronize, .reportRoundTrip, .drop, .hangUp:
                // Its node writes, reads, pings and times out the member's socket.
                continue
            }
        }
    }

    /// The `rate-limited` error a connection gets once per episode of lines over its rate.
    func warnRateLimited(_ connection: Connection) {
        let rate = NumberText.decimal(configuration.commandsPerSecond, places: 1)
        send(.error(CommandError(.rateLimited, command: nil,
                                 message: "slow down: at most \(rate) commands per second; lines are being dropped")),
             to: connection)
    }

    /// Queues a frame for one connection (for a member on another node, on its link).
    func enqueue(_ frame: OutboundFrame, on connection: Connection, now: MonotonicInstant? = nil) {
        if case .link(let link, let number) = connection.carrier {
            guard connection.state.isOpen, !connection.isGone else { return }
            sendDown(.member(number), frame, on: link, now: now ?? eventTime.monotonic)
            return
        }
        let actions = connection.state.enqueue(frame, now: now ?? eventTime.monotonic)
        if !actions.isEmpty { run(actions, on: connection) }
    }

    /// Frames went to the socket in one write.
    func wrote(_ frames: [OutboundFrame], on connection: Connection, stillBuffered: Bool) {
        let now = time.monotonic()
        for frame in frames {
            settle(frame, now: now)
            if frame.kind != .ping { metrics.deliveries += 1 }
        }
        metrics.writes += 1
        run(connection.state.wrote(stillBuffered: stillBuffered, now: now), on: connection)
    }

    /// A frame left an outbox (written or dropped); the last one times the fan-out.
    func settle(_ frame: OutboundFrame, now: MonotonicInstant) {
        frame.pendingRecipients -= 1
        if frame.pendingRecipients == 0 && frame.kind == .text {
            metrics.fanOut.observe(seconds: (now - frame.createdAt).seconds)
        }
    }
}

/// All rooms' chat kept for newcomers, held under one total (`chat-total-bytes`):
/// each room keeps at most `chat-history-bytes`, but many rooms together could
/// still take the server's memory.
extension Gateway {
    /// How often the total is added up: often enough that it is never far over,
    /// rarely enough that adding up every room's figure costs nothing.
    static let chatBudgetInterval = MonotonicDuration.seconds(5)

    /// Drops the oldest chat of empty rooms first (the longest empty first), then
    /// halves the largest histories of occupied rooms, until all together are
    /// within the budget. Only what newcomers are shown is dropped: nobody's
    /// screen changes.
    fileprivate func keepChatWithinBudget() {
        var total = rooms.values.reduce(0) { $0 + $1.room.recentChatBytes }
        guard total > configuration.chatTotalBytes else { return }
        let before = total
        let empty = rooms.values.filter { $0.room.isEmpty && $0.room.recentChatBytes > 0 }
            .sorted { ($0.room.emptySince?.milliseconds ?? 0) < ($1.room.emptySince?.milliseconds ?? 0) }
        for entry in empty where total > configuration.chatTotalBytes {
            total -= entry.room.forgetChat(keepingBytes: 0)
        }
        while total > configuration.chatTotalBytes {
            guard let largest = rooms.values.max(by: { $0.room.recentChatBytes < $1.room.recentChatBytes }) else { break }
            let dropped = largest.room.forgetChat(keepingBytes: largest.room.recentChatBytes / 2)
            if dropped == 0 { break }
            total -= dropped
        }
        metrics.chatBytesDropped += before - total
        logger.notice("chat kept for newcomers over its total; oldest lines dropped",
                      metadata: ["total_bytes": "\(before)", "now_bytes": "\(total)", "limit": "\(configuration.chatTotalBytes)"])
    }
}
