import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime
import Foundation
import Logging
import SlashCommands

/// Where each machine's decisions become the gateway's: the gateway's own
/// (`GatewayAction`, from `GatewayState`), a room's (`RoomAction`, from the
/// core's `Room`), a connection's (`ConnectionAction`, from its
/// `ConnectionState`; for a member another node relays here, on its link), in a
/// cluster the room ownership's (`RoomOwnership.Action`) and the shared relay
/// links' (`RelayLinks.Action`). Each machine decides without touching
/// anything; what they decide changes the tables (`GatewayTables`) and becomes
/// effects (`GatewayEffect`), carried out at the event's edge
/// (`Gateway+Executor.swift`).
extension Gateway {
    /// An event for one connection alone.
    func send(_ event: RoomEvent, to connection: Connection) {
        countError(event)
        emit(.send(frames(for: event, encoding: connection.encoding, room: connection.room, now: eventTime.monotonic), to: connection))
    }

    /// The server closes a connection: what is queued goes first, then the close
    /// frame with this code and reason.
    func close(_ connection: Connection, code: UInt16, reason: String) {
        emit(.close(connection, code: code, reason: reason))
    }

    /// A room is no longer served here (its timers go with it).
    func dropRoom(_ name: RoomName) {
        tables.dropped(name)
        state.roomForgotten(name)
        forgetVoice(of: name)
    }
}

// MARK: - Each machine's decisions

extension Gateway {
    func run(gateway actions: [GatewayAction]) {
        for action in actions { carryOut(action) }
    }

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
                emit(.store([.serverState(name: PostgresStore.nodeOperatorName(cluster.settings.node),
                                          json: String(decoding: data, as: UTF8.self))]))
                break
            }
            guard store != nil, let data = try? JSONEncoder().encode(state.operatorState) else { break }
            emit(.store([.serverState(name: OperatorState.storeName, json: String(decoding: data, as: UTF8.self))]))
        case .shareOperatorChange(let change):
            emit(.shareOperatorChange(change))
        case .giveUpUnusedRoom(let name):
            dropRoom(name)
            if store != nil { emit(.store([.forgetRoom(name)])) }
            metrics.unusedRoomsGivenUp += 1
            logger.info("unused room given up for a new one", metadata: ["room": "\(name)"])
        case .fireRoomTimer(let room, let timer, let now):
            guard let entry = rooms[room] else { break }
            if isHeld(room) {
                // A held room may not change: its timer waits for the room to go on.
                tables.heldTimer(timer, of: room)
                break
            }
            run(entry.room.timerFired(timer, now: now), in: entry)
        case .armRoomTimers:
            emit(.armRoomTimers(nextDue: state.nextTimerDue()))
        case .armHousekeeping(let delay):
            emit(.armHousekeeping(after: delay))
        case .writeAliveMark(let instant):
            if store != nil { emit(.store([.alive(instant)])) }
        case .keepChatWithinBudget:
            keepChatWithinBudget()
        case .tickConnections(let now, let slice, let slices):
            if slices == tables.connectionSlices.count, tables.connectionSlices.indices.contains(slice) {
                for connection in tables.connectionSlices[slice].values {
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
            for connection in connections.values {
                // Shutting down (not a node handing its rooms over, 4010): a front's
                // member leaves, as its client comes back as someone new.
                if code == 1001, connection.fromFront { tables.leaving(connection, true) }
                close(connection, code: code, reason: reason)
            }
        case .finish:
            emit(.wakeLoop)
        }
    }

    func run(_ actions: [RoomAction], in entry: RoomEntry) {
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
                run(gateway: [state.schedule(timer, in: name, at: instant)])
            case .cancel(let timer):
                state.cancel(timer, in: name)
            case .closeConnection(let member, let reason):
                logger.info("member removed", metadata: ["room": "\(name)", "member": "\(member)", "reason": "\(reason)"])
                guard let connection = entry.connections[member] else { continue }
                tables.unseated(connection, member, in: entry)
                close(connection, code: 4001, reason: reason)
            case .persist(let snapshot): changes.append(.room(snapshot))
            case .persistMember(let record): changes.append(.member(name, record))
            case .forgetMember(let id): changes.append(.forgetMember(name, id))
            case .persistChat(let line): changes.append(.chat(name, line))
            case .voice(let order):
                voiceOrder(order, in: entry)
            case .forgetRoom:
                // An empty room reached its expiry: it and all it kept go.
                dropRoom(name)
                changes.append(.forgetRoom(name))
                metrics.roomsExpired += 1
            }
        }
        if store != nil, !changes.isEmpty { emit(.store(changes)) }
        if cluster != nil, rooms[name] === entry { numbered(entry) }
    }

    /// In a cluster, what the room ownership decides (`RoomOwnership`).
    func run(ownership actions: [RoomOwnership.Action]) {
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
                emit(.extendCeiling(room, epoch: epoch, to: ceiling))
            }
        }
        if let renewable = cluster.renewableChanged() { emit(.renewLeases(renewable)) }
    }

    /// On a node that relays members: what its shared links decide
    /// (`RelayLinks`, events from `Gateway+Relaying.swift`).
    func run(relaying actions: [RelayLinks.Action]) {
        guard cluster != nil else { return }
        for action in actions {
            switch action {
            case .open(let id, let room, let url):
                openLink(id, room: room, url: url)
            case .send(let id, let up):
                emit(.relaySend(id, up))
            case .close(let id):
                emit(.closeRelay(id, code: 1000))
            case .deliver(let payload, let recipients):
                // Framed once for all of them, as on the owner.
                let frame = OutboundFrame(payload, kind: .text, createdAt: eventTime.monotonic)
                let open = recipients.compactMap { id in connections[id].flatMap { $0.state.isOpen ? $0 : nil } }
                emit(.deliver(frame, to: open))
            case .relaying(let id, let link, let number):
                guard let connection = connections[id] else { continue }
                tables.routed(connection, .relayed(RelayLink(link: link, number: number), placing: nil))
                // What the member sent meanwhile goes on to the owner, in order, after its join.
                releaseHeld(connection)
            case .placeAgain(let id):
                guard let connection = connections[id], case .relayed(_, let placing?) = connection.route,
                      let room = placing.request.room else { continue }
                tables.routed(connection, .placing(placing))
                if state.isServing {
                    // The owner did not answer (it may have just died): ask again
                    // shortly, while the member waits, its lines still held.
                    wait(connection, for: room, retryAfter: .milliseconds(150))
                } else {
                    tables.routed(connection, .local)
                    close(connection, code: 4010, reason: "this node is leaving; reconnect now")
                }
            case .closeMember(let id, let code, let reason):
                guard let connection = connections[id] else { continue }
                tables.routed(connection, .local)
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

    /// Encodes the event once per encoding in use, for the same frames to be
    /// queued on every recipient.
    func broadcast(_ event: RoomEvent, in entry: RoomEntry, except: MemberID?) {
        metrics.broadcasts += 1
        countError(event)
        let now = eventTime.monotonic
        let json = entry.jsonConnections > 0 ? OutboundFrame(JSONEventEncoding.encode(event), createdAt: now) : nil
        let text = entry.textConnections > 0
            ? TextEventEncoding.lines(event, now: eventTime.server, awaited: entry.room.playersAwaited)
                .map { OutboundFrame(Array($0.utf8), createdAt: now) } : []
        var recipients: [Connection] = []
        recipients.reserveCapacity(entry.connections.count)
        for (member, connection) in entry.connections where member != except && !connection.isCarried {
            recipients.append(connection)
        }
        if !recipients.isEmpty { emit(.broadcast(json: json, text: text, to: recipients)) }
        // Members on other nodes: once down each node's link per encoding, for
        // that node to fan out (`Gateway+RelayedMembers.swift`).
        guard !entry.links.isEmpty else { return }
        let excepted = except.flatMap { entry.connections[$0] }
        let isState = if case .state = event { true } else { false }
        for link in entry.links.values where link.state.isOpen {
            var number: RelayNumber?
            if let excepted, case .link(let carrier, let carriedNumber) = excepted.carrier, carrier === link { number = carriedNumber }
            if let json, link.carriedJSON > 0 {
                sendDown(isState ? .everyoneState(.json, except: number) : .everyone(.json, except: number), json, on: link)
            }
            if link.carriedText > 0 {
                for frame in text {
                    sendDown(isState ? .everyoneState(.text, except: number) : .everyone(.text, except: number), frame, on: link)
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

    func run(_ actions: [ConnectionAction], on connection: Connection) {
        if connection.isCarried {
            runCarried(actions, on: connection)
            return
        }
        for action in actions {
            switch action {
            case .requestWrite:
                emit(.requestWrite(connection))
            case .pauseReading:
                metrics.readingPauses += 1
                emit(.setReading(connection, paused: true))
            case .resumeReading:
                emit(.setReading(connection, paused: false))
            case .warnRateLimited:
                warnRateLimited(connection)
            case .close(let frame):
                close(connection, code: frame.code, reason: frame.reason)
            case .resynchronize(let dropped):
                let now = eventTime.monotonic
                metrics.outboxDrops += dropped.count
                metrics.outboxResyncs += 1
                for frame in dropped { settle(frame, now: now) }
                switch Resynchronization.choose(relayedMember: connection.route.isRelayed && cluster != nil,
                                                isRelayLink: connection.encoding == .relay) {
                case .latestFromLink:
                    guard let cluster else { continue }
                    guard let latest = cluster.relayLinks.latestState(for: connection.id) else {
                        run(relaying: cluster.relayLinks.askForState(connection.id))
                        continue
                    }
                    run(connection.state.enqueueResynchronization([OutboundFrame(latest, createdAt: now)]), on: connection)
                case .closeLink(let code, let reason):
                    close(connection, code: code, reason: reason)
                case .roomState:
                    guard let name = connection.room, let entry = rooms[name] else { continue }
                    let frames = frames(for: .state(entry.room.state), encoding: connection.encoding, room: name, now: now)
                    run(connection.state.enqueueResynchronization(frames), on: connection)
                }
            case .reportRoundTrip(let roundTrip):
                metrics.roundTrip.observe(seconds: roundTrip.seconds)
                if connection.encoding == .relay {
                    tables.measured(connection, roundTrip: roundTrip.roundedUpMilliseconds)
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
                emit(.drop(connection))
            case .hangUp:
                metrics.closeRepliesMissing += 1
                emit(.drop(connection))
            }
        }
    }

    /// What a carried member's connection decides, carried out on its link.
    private func runCarried(_ actions: [ConnectionAction], on member: Connection) {
        for action in actions {
            switch action {
            case .close(let frame):
                close(member, code: frame.code, reason: frame.reason)
            case .warnRateLimited:
                warnRateLimited(member)
            case .requestWrite, .pauseReading, .resumeReading, .resynchronize, .reportRoundTrip, .drop, .hangUp:
                // Its node writes, reads, pings and times out the member's socket.
                continue
            }
        }
    }

    /// The close of a connection, as the executor carries it out after what was
    /// queued before it: the close frame is queued, and a closing connection
    /// takes no more part in its room (a closing link's members are gone from
    /// here); a carried member's close goes down its link.
    func closing(_ connection: Connection, _ frame: ConnectionState.CloseFrame) {
        let followUp = connection.state.close(frame, now: eventTime.monotonic)
        guard !followUp.isEmpty else { return }
        metrics.closes[GatewayMetrics.CloseKey(code: "\(frame.code)", initiator: "server"), default: 0] += 1
        leaveRoom(connection)
        if case .link(let link, let number) = connection.carrier {
            detachCarried(connection)
            sendDown(.close(number, code: frame.code, reason: frame.reason), on: link)
            return
        }
        if connection.encoding == .relay { relayLinkGone(connection) }
        run(followUp, on: connection)
    }

    func warnRateLimited(_ connection: Connection) {
        send(.error(RateLimitWarning.error(commandsPerSecond: configuration.commandsPerSecond)), to: connection)
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

/// All rooms' chat kept for newcomers, held under one total (`chat-total-bytes`,
/// `ChatBudget` decides which rooms lose it).
extension Gateway {
    /// How often the total is added up: often enough that it is never far over,
    /// rarely enough that adding up every room's figure costs nothing.
    static let chatBudgetInterval = MonotonicDuration.seconds(5)

    fileprivate func keepChatWithinBudget() {
        let figures = rooms.map { name, entry in
            ChatBudget.RoomChat(room: name, bytes: entry.room.recentChatBytes,
                                emptySince: entry.room.isEmpty ? entry.room.emptySince ?? ServerInstant(milliseconds: 0) : nil)
        }
        let kept = ChatBudget.keep(figures, within: configuration.chatTotalBytes) { cut in
            switch cut {
            case .forget(let name): rooms[name]?.room.forgetChat(keepingBytes: 0) ?? 0
            case .halve(let name, let bytes): rooms[name]?.room.forgetChat(keepingBytes: bytes) ?? 0
            }
        }
        guard let (before, after) = kept else { return }
        metrics.chatBytesDropped += before - after
        logger.notice("chat kept for newcomers over its total; oldest lines dropped",
                      metadata: ["total_bytes": "\(before)", "now_bytes": "\(after)", "limit": "\(configuration.chatTotalBytes)"])
    }
}
