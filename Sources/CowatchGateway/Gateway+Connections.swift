import CowatchCore
import SlashCommands

extension Gateway {
    /// Decides whether an upgrade may go ahead; nil lets it, otherwise the HTTP
    /// status and body to refuse it with.
    func admit(_ request: UpgradeRequest) -> (status: UInt32, body: String)? {
        if stopping { return (503, "the server is shutting down\n") }
        if request.room == nil && !request.echo {
            return (400, "a room name is 1 to 64 characters of A-Z a-z 0-9 . _ -\n")
        }
        let open = connectionsPerAddress[request.address, default: 0]
        if open >= configuration.maximumConnectionsPerAddress {
            metrics.refusedConnections["per-address", default: 0] += 1
            return (429, "too many connections from your address (at most \(configuration.maximumConnectionsPerAddress))\n")
        }
        return nil
    }

    /// A WebSocket connection is open: bind it to its room as a member.
    func established(_ wsi: OpaquePointer, id: UInt64, encoding: Connection.Encoding) {
        let request = upgrades.removeValue(forKey: id)
            ?? UpgradeRequest(room: nil, echo: false, name: nil, resume: nil, player: false, join: true, address: "unknown")
        let monotonic = ServerClock.monotonicMicroseconds()
        let connection = Connection(
            id: id, wsi: wsi, address: request.address, encoding: request.echo ? .echo : encoding,
            limiter: RateLimiter(rate: configuration.commandsPerSecond, burst: configuration.commandBurst, now: monotonic),
            now: monotonic)
        connections[id] = connection
        connectionsPerAddress[request.address, default: 0] += 1
        metrics.connectionsOpened += 1
        guard !request.echo, let name = request.room else { return }

        let now = ServerClock.now()
        let entry: RoomEntry
        if let existing = rooms[name] {
            entry = existing
        } else {
            guard rooms.count < configuration.maximumRooms else {
                metrics.refusedConnections["rooms", default: 0] += 1
                refuse(connection, CommandError(.roomFull, command: nil,
                                                message: "this server has reached its limit of \(configuration.maximumRooms) rooms"))
                return
            }
            entry = RoomEntry(room: Room(name: name, configuration: configuration.room, now: now))
            rooms[name] = entry
            store?.write([.room(entry.room.snapshot(at: now))])
        }
        let connect = ConnectRequest(name: request.name, player: request.player, join: request.join,
                                     resume: request.resume, newToken: Self.newToken())
        switch entry.room.connect(connect, now: now) {
        case .accepted(let member, let actions):
            if let previous = entry.connections[member], previous !== connection {
                // The same member reconnected before its old connection was noticed gone.
                previous.member = nil
                close(previous, code: 4002, reason: "replaced by a newer connection")
            }
            connection.room = name
            connection.member = member
            entry.bind(connection, as: member)
            run(actions, in: entry)
            server?.requestWrite(connection)
        case .refused(let error):
            metrics.refusedConnections[error.code.rawValue, default: 0] += 1
            refuse(connection, error)
            if entry.room.isEmpty { rooms[name] = nil }
        }
    }

    private func refuse(_ connection: Connection, _ error: CommandError) {
        send(.error(error), to: connection)
        close(connection, code: 1008, reason: error.message)
    }

    /// The connection is gone (closed by either side, or dropped).
    func closed(id: UInt64) {
        upgrades[id] = nil
        guard let connection = connections.removeValue(forKey: id) else { return }
        let open = connectionsPerAddress[connection.address, default: 1] - 1
        connectionsPerAddress[connection.address] = open > 0 ? open : nil
        let now = ServerClock.monotonicMicroseconds()
        while let frame = connection.outbox.popFirst() { settle(frame, now: now) }
        if let name = connection.room, let member = connection.member, let entry = rooms[name],
           entry.connections[member] === connection {
            entry.unbind(member)
            run(entry.room.disconnect(member, now: ServerClock.now()), in: entry)
        }
        finishShutdownIfDone()
    }

    /// A whole message arrived: one line or several, handled in order.
    func received(message bytes: [UInt8], on connection: Connection) {
        guard let name = connection.room, let member = connection.member, let entry = rooms[name] else { return }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard connection.pendingClose == nil, entry.connections[member] === connection else { return }
            guard admitLine(on: connection) else { continue }
            let now = ServerClock.now()
            switch parser.parse(line) {
            case .success(let input):
                if case .empty = input { continue }
                metrics.commands[Self.metricName(input), default: 0] += 1
                run(entry.room.receive(input, from: member, now: now), in: entry)
            case .failure(let error):
                metrics.commands[error.command?.rawValue ?? "unknown", default: 0] += 1
                send(.error(error), to: connection)
            }
        }
    }

    /// The conformance endpoint: every message comes back as it was sent.
    func echo(_ bytes: [UInt8], binary: Bool, on connection: Connection) {
        let frame = OutboundFrame(bytes, kind: binary ? .binary : .text, createdAt: ServerClock.monotonicMicroseconds())
        frame.pendingRecipients += 1
        connection.outbox.append(frame)
        server?.requestWrite(connection)
    }

    /// The per-connection rate limit: over it, the first line gets an error;
    /// a connection that keeps going is closed with 1008.
    private func admitLine(on connection: Connection) -> Bool {
        if connection.limiter.take(now: ServerClock.monotonicMicroseconds()) {
            connection.strikes = 0
            return true
        }
        connection.strikes += 1
        if connection.strikes == 1 {
            let rate = NumberText.decimal(configuration.commandsPerSecond, places: 1)
            send(.error(CommandError(.rateLimited, command: nil,
                                     message: "slow down: at most \(rate) commands per second; lines are being dropped")),
                 to: connection)
        } else if connection.strikes > configuration.rateLimitStrikes {
            close(connection, code: 1008, reason: "too many commands")
        }
        return false
    }

    static func metricName(_ input: InputLine) -> String {
        switch input {
        case .command(let command): command.name.rawValue
        case .chat: "chat"
        case .empty: "empty"
        }
    }

    /// Asks for a close with this code; the close frame goes out on the next write.
    func close(_ connection: Connection, code: UInt16, reason: String) {
        guard connection.pendingClose == nil else { return }
        connection.pendingClose = (code, Self.closeReason(reason))
        metrics.closes[GatewayMetrics.CloseKey(code: "\(code)", initiator: "server"), default: 0] += 1
        server?.requestWrite(connection)
        server?.dropUnlessClosed(connection, within: Int32(Swift.max(1, configuration.shutdownGraceSeconds.rounded(.up))))
    }

    /// A close reason fits in 123 bytes; cut at a character boundary.
    static func closeReason(_ reason: String) -> String {
        var text = ""
        for character in reason {
            guard text.utf8.count + character.utf8.count <= 120 else { break }
            text.append(character)
        }
        return text
    }

    /// A pong came back: it answers the one ping in flight, if any.
    func pong(on connection: Connection) {
        let now = ServerClock.monotonicMicroseconds()
        connection.lastHeard = now
        guard let sentAt = connection.pingSentAt else { return }
        connection.pingSentAt = nil
        let roundTrip = now - sentAt
        metrics.roundTrip.observe(seconds: Double(roundTrip) / 1_000_000)
        guard let name = connection.room, let member = connection.member, let entry = rooms[name] else { return }
        entry.room.measured(roundTrip: ServerInterval(milliseconds: (roundTrip + 999) / 1000), for: member)
    }

    /// Once a second: pings, idle and stuck connections, the store's sign of life,
    /// shutdown progress.
    func housekeeping() {
        let now = ServerClock.monotonicMicroseconds()
        if let store, now - lastAliveWritten >= 5_000_000 {
            lastAliveWritten = now
            store.write([.alive(ServerClock.now())])
        }
        let idle = Int64(configuration.idleTimeoutSeconds * 1_000_000)
        let stuck = Int64(configuration.stuckTimeoutSeconds * 1_000_000)
        for connection in connections.values where connection.pendingClose == nil {
            if now - connection.lastHeard > idle {
                close(connection, code: 1001, reason: "idle: no answer to pings")
            } else if let since = connection.overflowingSince, now - since > stuck {
                close(connection, code: 1008, reason: "too slow to keep up")
            } else if now >= connection.nextPingAt && connection.incoming.isEmpty {
                // Not while a message is half received: libwebsockets would check the
                // pong's payload as the continuation of that message's UTF-8.
                ping(connection, now: now)
            }
        }
        finishShutdownIfDone()
    }

    func ping(_ connection: Connection, now: Int64) {
        connection.nextPingAt = now + Int64(configuration.pingIntervalSeconds * 1_000_000)
        connection.pingSentAt = now
        // libwebsockets drops pongs without payload and checks a pong's payload as
        // UTF-8, so the payload is ASCII (and only one ping is in flight, so the
        // pong needs no stamp of its own).
        let bytes = Array("cowatch".utf8)
        // Pings jump the queue's overflow rule: they are tiny and measure liveness.
        let frame = OutboundFrame(bytes, kind: .ping, createdAt: now)
        frame.pendingRecipients += 1
        connection.outbox.append(frame)
        server?.requestWrite(connection)
    }

    /// An outbox that emptied means the connection kept up after all.
    func drained(_ connection: Connection) {
        connection.overflowingSince = nil
    }

    /// An unguessable resume token: 128 random bits, hex.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        let text = String(high, radix: 16) + String(low, radix: 16)
        return String(repeating: "0", count: Swift.max(0, 32 - text.count)) + text
    }
}
