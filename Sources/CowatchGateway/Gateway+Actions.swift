import CowatchCore
import CowatchStore
import SlashCommands

/// The one place that carries out what rooms decide.
extension Gateway {
    func run(_ actions: [RoomAction], in entry: RoomEntry) {
        var changes: [StoreChange] = []
        let name = entry.room.name
        for action in actions {
            switch action {
            case .broadcast(let event, let except):
                broadcast(event, in: entry, except: except)
            case .send(let event, let member):
                guard let connection = entry.connections[member] else { continue }
                send(event, to: connection)
            case .schedule(let timer, let instant):
                timers.schedule(timer, in: entry.room.name, at: instant)
                server?.armTimers(nextDue: timers.nextDue())
            case .cancel(let timer):
                timers.cancel(timer, in: entry.room.name)
            case .disconnect(let member, let reason):
                guard let connection = entry.connections[member] else { continue }
                entry.unbind(member)
                connection.member = nil
                close(connection, code: 4001, reason: reason)
            case .persist(let snapshot): changes.append(.room(snapshot))
            case .persistMember(let record): changes.append(.member(name, record))
            case .forgetMember(let id): changes.append(.forgetMember(name, id))
            case .persistChat(let line): changes.append(.chat(name, line))
            }
        }
        if entry.room.isEmpty {
            rooms[name] = nil
            timers.cancelAll(in: name)
            changes.append(.forgetRoom(name))
        }
        if let store, !changes.isEmpty { store.write(changes) }
    }

    /// Encodes the event once per encoding in use and queues the same frames on
    /// every recipient.
    func broadcast(_ event: RoomEvent, in entry: RoomEntry, except: MemberID?) {
        metrics.broadcasts += 1
        countError(event)
        let now = ServerClock.monotonicMicroseconds()
        let isState = if case .state = event { true } else { false }
        let json = entry.jsonConnections > 0
            ? OutboundFrame(JSONEventEncoding.encode(event), isState: isState, createdAt: now) : nil
        let text = entry.textConnections > 0
            ? TextEventEncoding.lines(event).map { OutboundFrame(Array($0.utf8), isState: isState, createdAt: now) } : []
        for (member, connection) in entry.connections where member != except {
            switch connection.encoding {
            case .json: if let json { enqueue(json, on: connection) }
            case .text: for frame in text { enqueue(frame, on: connection) }
            case .echo: break
            }
        }
    }

    func send(_ event: RoomEvent, to connection: Connection) {
        countError(event)
        let now = ServerClock.monotonicMicroseconds()
        for frame in frames(for: event, encoding: connection.encoding, now: now) {
            enqueue(frame, on: connection)
        }
    }

    func frames(for event: RoomEvent, encoding: Connection.Encoding, now: Int64) -> [OutboundFrame] {
        let isState = if case .state = event { true } else { false }
        switch encoding {
        case .json: return [OutboundFrame(JSONEventEncoding.encode(event), isState: isState, createdAt: now)]
        case .text: return TextEventEncoding.lines(event).map { OutboundFrame(Array($0.utf8), isState: isState, createdAt: now) }
        case .echo: return []
        }
    }

    private func countError(_ event: RoomEvent) {
        if case .error(let error) = event { metrics.errors[error.code.rawValue, default: 0] += 1 }
    }

    /// Queues a frame. A connection whose outbox is full is not given a backlog:
    /// its queue is dropped and replaced by the room's latest state.
    func enqueue(_ frame: OutboundFrame, on connection: Connection) {
        guard connection.pendingClose == nil else { return }
        if connection.outbox.count >= configuration.outboxLimit {
            resynchronize(connection)
            return
        }
        frame.pendingRecipients += 1
        connection.outbox.append(frame)
        if connection.outbox.count == 1 { server?.requestWrite(connection) }
    }

    private func resynchronize(_ connection: Connection) {
        let now = ServerClock.monotonicMicroseconds()
        metrics.outboxDrops += connection.outbox.count
        metrics.outboxResyncs += 1
        while let dropped = connection.outbox.popFirst() { settle(dropped, now: now) }
        if connection.overflowingSince == nil { connection.overflowingSince = now }
        guard let name = connection.room, let entry = rooms[name] else { return }
        for frame in frames(for: .state(entry.room.state), encoding: connection.encoding, now: now) {
            frame.pendingRecipients += 1
            connection.outbox.append(frame)
        }
        server?.requestWrite(connection)
    }

    /// A frame left an outbox (written or dropped); the last one times the fan-out.
    func settle(_ frame: OutboundFrame, now: Int64) {
        frame.pendingRecipients -= 1
        if frame.pendingRecipients == 0 && frame.kind == .text {
            metrics.fanOut.observe(seconds: Double(now - frame.createdAt) / 1_000_000)
        }
    }

    /// The service loop's timers came due.
    func fireTimers() {
        let now = ServerClock.now()
        for key in timers.popDue(now: now) {
            guard let entry = rooms[key.room] else { continue }
            run(entry.room.timerFired(key.timer, now: now), in: entry)
        }
        server?.armTimers(nextDue: timers.nextDue())
    }
}
