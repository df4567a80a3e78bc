import CowatchConnection
import CowatchCore
import CowatchTime
import SlashCommands

/// Connections arriving, speaking and leaving: the libwebsockets layer turns its
/// callbacks into these calls, which feed each connection's `ConnectionState`
/// and carry out what it decides (`Gateway+ConnectionActions.swift`).
extension Gateway {
    /// Decides whether an upgrade may go ahead; nil lets it, otherwise the HTTP
    /// status and body to refuse it with.
    /// An admitted upgrade's connection number, its request kept for `established`.
    func upgradeAccepted(_ request: UpgradeRequest) -> UInt64 {
        let id = nextConnectionID
        nextConnectionID += 1
        upgrades[id] = request
        return id
    }

    /// A plain HTTP request refused (by `HTTPRequestRules`, or one the library could not parse).
    func httpRefused(status: UInt32) {
        metrics.httpRefusals[status, default: 0] += 1
    }

    /// A socket refused before any HTTP (`SocketLimits`), by reason.
    func socketRefused(_ reason: String) {
        metrics.refusedConnections[reason, default: 0] += 1
    }

    func admit(_ request: UpgradeRequest) -> (status: UInt32, body: String)? {
        if stopping { return (503, "the server is shutting down\n") }
        if request.room == nil && !request.echo {
            return (400, "a room name is 1 to 64 characters of A-Z a-z 0-9 . _ -\n")
        }
        if let host = request.hostHeader, !hostAllowlist.allows(host) {
            metrics.refusedConnections["host", default: 0] += 1
            return (421, "this server does not answer for \(host.prefix(100)); its operator lists the names it serves in allowed-hosts\n")
        }
        if let origin = request.origin, !Self.originAllowed(origin, host: request.hostHeader, allowed: configuration.allowedOrigins) {
            metrics.refusedConnections["origin", default: 0] += 1
            return (403, "pages on \(origin.prefix(100)) may not open connections to this server\n")
        }
        if let refusal = operatorRefusal(request) {
            logger.info("upgrade refused", metadata: ["room": "\(request.room.map { "\($0)" } ?? "-")",
                                                      "address": "\(request.address)", "status": "\(refusal.status)"])
            return refusal
        }
        // A node of a cluster does not know whether a room exists on another node:
        // the owner that creates it asks (`join`).
        if cluster == nil, let room = request.room, rooms[room] == nil, let refusal = creationRefusal(request) {
            return (429, refusal.message + "\n")
        }
        let open = connectionsPerAddress[request.address, default: 0]
        if open >= configuration.maximumConnectionsPerAddress {
            metrics.refusedConnections["per-address", default: 0] += 1
            return (429, "too many connections from your address (at most \(configuration.maximumConnectionsPerAddress))\n")
        }
        return nil
    }

    /// The conformance suite sends messages of up to 16 MiB to the echo endpoint.
    static let echoMessageLimit = 32 << 20

    /// A WebSocket connection is open: bind it to its room as a member.
    func established(id: UInt64, encoding: Connection.Encoding) {
        let request = upgrades.removeValue(forKey: id)
            ?? UpgradeRequest(room: nil, echo: false, name: nil, resume: nil, player: false, join: true, owner: nil,
                              device: nil, invite: nil, password: nil, token: nil, create: nil, origin: nil, hostHeader: nil,
                              address: "unknown")
        let rules = request.echo
            ? ConnectionState.MessageRules(maximumBytes: Self.echoMessageLimit, acceptsBinary: true)
            : ConnectionState.MessageRules(maximumBytes: configuration.maximumMessageBytes, acceptsBinary: false)
        let connection = Connection(
            id: id, address: request.address, encoding: request.echo ? .echo : encoding,
            state: ConnectionState(limits: connectionLimits, rules: rules, now: time.monotonic(),
                                   firstPingAfter: Self.firstPing(id: id, interval: configuration.pingIntervalSeconds)),
            maximumHeldLines: configuration.maximumHeldLines)
        connections[id] = connection
        connectionsPerAddress[request.address, default: 0] += 1
        metrics.connectionsOpened += 1
        guard !request.echo, let name = request.room else { return }
        if cluster != nil && rooms[name] == nil {
            place(connection, request, in: name)
            return
        }
        join(connection, request, room: name)
    }

    /// Binds a connection to its room here as a member (or refuses it).
    func join(_ connection: Connection, _ request: UpgradeRequest, room name: RoomName) {
        let now = time.now()
        let entry: RoomEntry
        var created = false
        if let existing = rooms[name] {
            entry = existing
        } else {
            created = true
            if let refusal = creationRefusal(request) {
                refuse(connection, refusal)
                return
            }
            guard rooms.count < configuration.maximumRooms || giveUpAnUnusedRoom() else {
                metrics.refusedConnections["rooms", default: 0] += 1
                refuse(connection, CommandError(.roomFull, command: nil,
                                                message: "this server has reached its limit of \(configuration.maximumRooms) rooms"))
                return
            }
            if operatorState.creationTokenValid(request.create) {
                operatorState.useCreationToken(request.create)
                saveOperatorState()
            } else {
                roomCreations.record(request.address, now: time.monotonic())
            }
            entry = RoomEntry(room: Room(name: name, configuration: configuration.room, now: now))
            rooms[name] = entry
            store?.write([.room(entry.room.snapshot(at: now))])
        }
        // Only the first member of a room without an owner needs a fresh owner key.
        let founding = entry.room.isEmpty && entry.room.protection.ownerKeyDigest == nil
        let connect = ConnectRequest(name: request.name, player: request.player, join: request.join,
                                     resume: request.resume, newToken: Self.newToken(), ownerKey: request.owner,
                                     newOwnerKey: founding ? Self.newToken() + Self.newToken() : nil, device: request.device,
                                     address: request.address, invite: request.invite, password: request.password,
                                     token: request.token)
        switch entry.room.connectionOpened(connect, now: now) {
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
        case .refused(let error):
            metrics.refusedConnections[error.code.rawValue, default: 0] += 1
            logger.info("connection refused", metadata: ["room": "\(name)", "address": "\(request.address)",
                                                         "code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            refuse(connection, error)
            if created && entry.room.isEmpty { rooms[name] = nil }
        }
    }

    /// Why `request` may not create a room now: its address created its share of
    /// rooms this minute (`room-creation-rate`). An operator's creation token
    /// passes.
    func creationRefusal(_ request: UpgradeRequest) -> CommandError? {
        guard !operatorState.creationTokenValid(request.create),
              let wait = roomCreations.wait(for: request.address, now: time.monotonic()) else { return nil }
        metrics.refusedConnections["room-creation-rate", default: 0] += 1
        let seconds = Int(wait.seconds.rounded(.up))
        return CommandError(.rateLimited, command: nil,
                            message: "your address created \(configuration.roomCreationRate) rooms in the last minute; "
                                + "create another in \(seconds) s, or join an existing room")
    }

    /// When the server holds `max-rooms`, an empty room nobody ever used (nothing
    /// shared, said or set in it) is given up for a new one, the longest empty
    /// first; rooms people used are kept to their expiry.
    func giveUpAnUnusedRoom() -> Bool {
        let unused = rooms.values.filter { $0.connections.isEmpty && $0.room.isEmpty && !$0.room.hasBeenUsed }
        func since(_ entry: RoomEntry) -> Int64 { entry.room.emptySince?.milliseconds ?? 0 }
        guard let oldest = unused.min(by: { since($0) < since($1) }) else {
            return false
        }
        let name = oldest.room.name
        rooms[name] = nil
        timers.cancelAll(in: name)
        store?.write([.forgetRoom(name)])
        metrics.unusedRoomsGivenUp += 1
        logger.info("unused room given up for a new one", metadata: ["room": "\(name)"])
        return true
    }

    /// An `error` that says why, then the close (docs/protocol.md, "Close
    /// codes"): 4003 for a ban or a kick's cooldown, 4004 for a locked room, 4005
    /// for a password asked, wrong, or tried too often, 4006 for a bot token that
    /// is not valid, 1008 for a full room or server.
    private func refuse(_ connection: Connection, _ error: CommandError) {
        send(.error(error), to: connection)
        let code: UInt16 = switch error.code {
        case .banned: 4003
        case .locked: 4004
        case .passwordRequired, .wrongPassword, .tooManyAttempts: 4005
        case .badToken: 4006
        default: 1008
        }
        // The connection cuts the reason to a close frame's 123 bytes
        // (WebSocketFraming.closeReason).
        close(connection, code: code, reason: error.message)
    }

    /// The connection is gone (closed by either side, or dropped).
    func closed(id: UInt64) {
        upgrades[id] = nil
        guard let connection = connections.removeValue(forKey: id) else { return }
        if connection.state.phase == .open {
            // Gone without a close frame either way (a reset, a dropped network).
            metrics.closes[GatewayMetrics.CloseKey(code: "unattributed", initiator: "unknown"), default: 0] += 1
        }
        connection.isGone = true
        // The owner treats the member as this node saw it go: leaving, or dropped.
        if case .relayed(let link, _) = connection.route { link.upstream.close(code: connection.leaving ? 1000 : 1001) }
        connection.route = .local
        let open = connectionsPerAddress[connection.address, default: 1] - 1
        connectionsPerAddress[connection.address] = open > 0 ? open : nil
        let now = time.monotonic()
        for frame in connection.state.takeUnsent() { settle(frame, now: now) }
        leaveRoom(connection)
        finishShutdownIfDone()
    }

    /// The member of a connection that is closing or gone leaves its room's view
    /// of who is connected (the room keeps it for its resume grace).
    func leaveRoom(_ connection: Connection) {
        guard let name = connection.room, let member = connection.member, let entry = rooms[name],
              entry.connections[member] === connection else { return }
        entry.unbind(member)
        connection.member = nil
        run(entry.room.connectionClosed(member, leaving: connection.leaving, now: time.now()), in: entry)
    }

    /// A piece of a message arrived; a whole one is handled.
    func received(_ bytes: UnsafeRawBufferPointer, binary: Bool, final: Bool, midFrame: Bool, on connection: Connection) {
        switch connection.state.received(bytes, binary: binary, final: final, midFrame: midFrame, now: time.monotonic()) {
        case .partial, .discarded:
            return
        case .refused(let actions):
            perform(actions, on: connection)
        case .message(let message, let binary):
            if connection.encoding == .echo {
                echo(message, binary: binary, on: connection)
            } else {
                handleMessage(message, on: connection)
            }
        }
    }

    /// A member's message: relayed to the room's owner, held while the room is
    /// being placed or its owner reached, or handled here.
    func handleMessage(_ message: [UInt8], on connection: Connection) {
        switch connection.route {
        case .relayed(let link, placing: nil):
            link.upstream.send(String(decoding: message, as: UTF8.self))
        case .relayed, .placing:
            hold(.message(message), on: connection)
        case .local, .checking:
            handle(message, on: connection)
        }
    }

    /// The one rule for a line that cannot go yet: held, or, past
    /// `max-held-lines`, refused in words (the connection and its earlier lines
    /// carry on).
    func hold(_ line: HeldLine, on connection: Connection) {
        guard !connection.held.hold(line) else { return }
        metrics.heldLinesRefused += 1
        let why = connection.route.holdsBecause ?? "the connection waits"
        send(.error(CommandError(.rateLimited, command: nil, message: "too many lines while \(why); this one was dropped")),
             to: connection)
    }

    /// The held lines, in order, once the route lets them go, until one of
    /// them makes it hold again (a line that starts a check).
    func releaseHeld(_ connection: Connection) {
        var pending = connection.held.takeAll()
        while !pending.isEmpty, connection.route.holdsBecause == nil, connection.state.isOpen {
            switch pending.removeFirst() {
            case .message(let message): handleMessage(message, on: connection)
            case .parsed(let parsed): deliver(parsed, on: connection)
            }
        }
        connection.held.restore(pending)
    }

    /// A whole text message: one line or several, each admitted by the command
    /// rate and handled in order.
    private func handle(_ message: [UInt8], on connection: Connection) {
        guard let name = connection.room, let member = connection.member, let entry = rooms[name] else { return }
        for line in InboundMessage.lines(message) {
            guard entry.connections[member] === connection, connection.state.isOpen else { return }
            switch connection.state.admitLine(now: time.monotonic()) {
            case .refused(let actions):
                perform(actions, on: connection)
                continue
            case .execute:
                break
            }
            let parsed = parser.parse(line)
            switch parsed {
            case .success(let input):
                if case .empty = input { continue }
                metrics.commands[Self.metricName(input), default: 0] += 1
            case .failure(let error):
                metrics.commands[error.command?.rawValue ?? "unknown", default: 0] += 1
            }
            deliver(parsed, on: connection)
        }
    }

    /// The conformance endpoint: every message comes back as it was sent.
    private func echo(_ bytes: [UInt8], binary: Bool, on connection: Connection) {
        enqueue(OutboundFrame(bytes, kind: binary ? .binary : .text, createdAt: time.monotonic()), on: connection)
    }

    static func metricName(_ input: InputLine) -> String {
        switch input {
        case .command(let command): command.name.rawValue
        case .chat: "chat"
        case .empty: "empty"
        }
    }

    /// The server closes a connection: what is queued goes first, then the close
    /// frame with this code and reason.
    func close(_ connection: Connection, code: UInt16, reason: String) {
        perform([.close(ConnectionState.CloseFrame(code: code, reason: reason))], on: connection)
    }

    /// The peer's close frame arrived; true when the connection is finished (it
    /// answered ours), false when the library should answer it.
    func peerClosed(_ connection: Connection, code: String) -> Bool {
        let answer = connection.state.peerClosed()
        if answer == .answer {
            metrics.closes[GatewayMetrics.CloseKey(code: code, initiator: "client"), default: 0] += 1
            // A client that closes with 1000 is leaving (docs/protocol.md, "Close
            // codes"); any other close keeps its member for the resume grace.
            connection.leaving = code == "1000"
        }
        leaveRoom(connection)
        return answer == .finished
    }

    /// A pong came back.
    func ponged(_ connection: Connection) {
        perform(connection.state.ponged(now: time.monotonic()), on: connection)
    }

    /// Every `housekeepingInterval`: each connection's deadlines and pings, the store's sign of
    /// life, shutdown progress.
    func housekeeping() {
        let now = time.monotonic()
        if let store, now - lastAliveWritten >= .seconds(5) {
            lastAliveWritten = now
            store.write([.alive(time.now())])
        }
        if now - lastChatBudgetCheck >= Self.chatBudgetInterval {
            lastChatBudgetCheck = now
            keepChatWithinBudget()
        }
        for connection in connections.values {
            perform(connection.state.tick(now: now, ping: pingFrame), on: connection)
        }
        clusterHousekeeping()
        finishShutdownIfDone()
    }

    /// Between half an interval and one and a half, spread by connection id, so
    /// that each housekeeping pass pings a slice of the connections, not all.
    static func firstPing(id: UInt64, interval: Double) -> MonotonicDuration {
        .seconds(interval * (0.5 + Double(id % 1024) / 1024))
    }

    /// An unguessable resume token: 128 random bits, hex.
    /// A browser's upgrade is let in from a page of the server itself (the
    /// origin's host and port are the `Host` the browser asked for) or of an
    /// allowed origin, so that another site cannot open connections in its
    /// visitors' names (docs/security.md).
    static func originAllowed(_ origin: String, host: String?, allowed: [String]) -> Bool {
        let lower = origin.lowercased()
        if allowed.contains(where: { $0.lowercased() == lower }) { return true }
        guard let host, let schemeEnd = lower.range(of: "://") else { return false }
        return lower[schemeEnd.upperBound...] == host.lowercased()
    }

    /// The client's address (below), warning once per peer when a peer that is not
    /// a trusted proxy sends `X-Forwarded-For`: behind a proxy that is not in
    /// `trusted-proxies`, everyone has the proxy's address, so one address ban or
    /// limit would hit them all (deploy/README.md).
    func clientAddress(peer: String, forwardedFor: String?) -> String {
        if forwardedFor != nil, !configuration.trustedProxies.contains(peer),
           untrustedForwarders.count < Self.untrustedForwardersWarned, untrustedForwarders.insert(peer).inserted {
            metrics.untrustedForwarding += 1
            logger.warning("a peer that is not a trusted proxy sent X-Forwarded-For; its clients all count as its address. If it is your proxy, add it to trusted-proxies",
                           metadata: ["peer": "\(peer)", "trusted-proxies": "\(configuration.trustedProxies.joined(separator: ","))"])
        }
        return Self.clientAddress(peer: peer, forwardedFor: forwardedFor, trusted: configuration.trustedProxies)
    }

    /// Peers warned about, at most: enough for any real setup, bounded for a stranger.
    static let untrustedForwardersWarned = 64

    /// The client's address: the peer's, or, when the peer is a trusted proxy, the
    /// last address its `X-Forwarded-For` adds (the one that proxy saw).
    static func clientAddress(peer: String, forwardedFor: String?, trusted: [String]) -> String {
        guard trusted.contains(peer), let forwardedFor,
              let last = forwardedFor.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
        else { return peer }
        return String(last.prefix(64))
    }

    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return newToken(using: &generator)
    }

    /// 128 random bits as 32 hex digits: each half padded to its 16 digits, so
    /// that no two draws write the same text (`1` then `23` is not `12` then `3`).
    static func newToken(using generator: inout some RandomNumberGenerator) -> String {
        func digits(_ value: UInt64) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return digits(generator.next()) + digits(generator.next())
    }
}
