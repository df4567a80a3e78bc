import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime
import Logging
import SlashCommands

/// The one place that carries out what rooms decide.
extension Gateway {
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
                timers.schedule(timer, in: entry.room.name, at: instant)
                server?.armTimers(nextDue: timers.nextDue())
            case .cancel(let timer):
                timers.cancel(timer, in: entry.room.name)
            case .closeConnection(let member, let reason):
                logger.info("member removed", metadata: ["room": "\(name)", "member": "\(member)", "reason": "\(reason)"])
                guard let connection = entry.connections[member] else { continue }
                entry.unbind(member)
                connection.member = nil
                close(connection, code: 4001, reason: reason)
            case .persist(let snapshot): changes.append(.room(snapshot))
            case .persistMember(let record): changes.append(.member(name, record))
            case .forgetMember(let id): changes.append(.forgetMember(name, id))
            case .persistChat(let line): changes.append(.chat(name, line))
            case .forgetRoom:
                // An empty room reached its expiry: it and all it kept go.
                rooms[name] = nil
                timers.cancelAll(in: name)
                changes.append(.forgetRoom(name))
                metrics.roomsExpired += 1
            }
        }
        if let store, !changes.isEmpty { store.write(changes) }
        if cluster != nil, rooms[name] === entry { numbered(entry) }
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
        let now = time.monotonic()
        let json = entry.jsonConnections > 0 ? OutboundFrame(JSONEventEncoding.encode(event), createdAt: now) : nil
        let text = entry.textConnections > 0
            ? TextEventEncoding.lines(event, now: time.now(), awaited: entry.room.playersAwaited)
                .map { OutboundFrame(Array($0.utf8), createdAt: now) } : []
        for (member, connection) in entry.connections where member != except {
            switch connection.encoding {
            case .json: if let json { enqueue(json, on: connection, now: now) }
            case .text: for frame in text { enqueue(frame, on: connection, now: now) }
            case .echo: break
            }
        }
    }

    func send(_ event: RoomEvent, to connection: Connection) {
        countError(event)
        for frame in frames(for: event, encoding: connection.encoding, room: connection.room, now: time.monotonic()) {
            enqueue(frame, on: connection)
        }
    }

    /// `room`: whose waiting a text line counts the players of (`Room.playersAwaited`).
    func frames(for event: RoomEvent, encoding: Connection.Encoding, room: RoomName?, now: MonotonicInstant) -> [OutboundFrame] {
        switch encoding {
        case .json: return [OutboundFrame(JSONEventEncoding.encode(event), createdAt: now)]
        case .text:
            let awaited = room.flatMap { rooms[$0]?.room.playersAwaited }
            return TextEventEncoding.lines(event, now: time.now(), awaited: awaited).map { OutboundFrame(Array($0.utf8), createdAt: now) }
        case .echo: return []
        }
    }

    private func countError(_ event: RoomEvent) {
        if case .error(let error) = event { metrics.errors[error.code.rawValue, default: 0] += 1 }
    }

    /// The service loop's timers came due.
    func fireTimers() {
        let now = time.now()
        for key in timers.popDue(now: now) {
            guard let entry = rooms[key.room] else { continue }
            run(entry.room.timerFired(key.timer, now: now), in: entry)
        }
        server?.armTimers(nextDue: timers.nextDue())
    }
}
