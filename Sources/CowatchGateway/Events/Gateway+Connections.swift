import CowatchConnection
import CowatchCore
import CowatchTime
import SlashCommands

/// Connections arriving, speaking and leaving: the libwebsockets layer turns its
/// callbacks into these calls, which feed each connection's `ConnectionState`
/// and carry out what it decides (`Gateway+Interpreter.swift`).
extension Gateway {
    /// A socket from `address` is about to be accepted (`SocketLimits`):
    /// `.acceptSocket`, or `.refuseSocket` with what the peer reads first.
    func socketOffered(from address: String) -> GatewayAction {
        let decision = state.socketOffered(from: address, trusted: configuration.trustedProxies.contains(address)
                                               || configuration.frontSecret != nil && Self.isLoopback(address))
        run(gateway: [decision])
        return decision
    }

    func socketOpened(from address: String) {
        state.socketOpened(from: address)
    }

    func socketClosed(from address: String) {
        state.socketClosed(from: address)
    }

    /// Listening, with room for `sockets` sockets under the descriptor limit.
    func listening(sockets: Int) {
        state.listening(sockets: sockets)
    }

    /// A plain HTTP request refused (by `HTTPRequestRules`, or one the library could not parse).
    func httpRefused(status: UInt32) {
        metrics.httpRefusals[status, default: 0] += 1
    }

    /// Decides whether an upgrade may go ahead; nil lets it, otherwise the HTTP
    /// status and words to refuse it with.
    func admit(_ request: UpgradeRequest) -> UpgradeRefusal? {
        let decision = state.upgradeOffered(request, roomExists: request.room.map { rooms[$0] != nil } ?? false, at: eventTime)
        run(gateway: [decision])
        guard case .refuseUpgrade(let refusal) = decision else { return nil }
        if refusal.logged {
            logger.info("upgrade refused", metadata: ["room": "\(request.room.map { "\($0)" } ?? "-")",
                                                      "address": "\(request.address)", "status": "\(refusal.status)"])
        }
        return refusal
    }

    /// An admitted upgrade's connection number, its request kept for `established`.
    func upgradeAccepted(_ request: UpgradeRequest) -> UInt64 {
        state.upgradeAdmitted(request)
    }

    /// The conformance suite sends messages of up to 16 MiB to the echo endpoint.
    static let echoMessageLimit = 32 << 20

    /// A WebSocket connection is open: bind it to its room as a member.
    func established(id: UInt64, encoding: Connection.Encoding) {
        let request = state.connectionOpened(id)
            ?? UpgradeRequest(room: nil, echo: false, name: nil, resume: nil, player: false, join: true, owner: nil,
                              device: nil, invite: nil, password: nil, token: nil, create: nil, origin: nil, hostHeader: nil,
                              address: "unknown")
        let rules = request.echo
            ? ConnectionState.MessageRules(maximumBytes: Self.echoMessageLimit, acceptsBinary: true)
            : ConnectionState.MessageRules(maximumBytes: configuration.maximumMessageBytes
                                               + (request.relay ? Self.relayMessageAllowance : 0), acceptsBinary: false)
        let connection = Connection(
            id: id, address: request.address, encoding: request.echo ? .echo : encoding,
            state: ConnectionState(limits: request.relay ? relayLinkLimits : connectionLimits, rules: rules, now: eventTime.monotonic,
                                   firstPingAfter: Self.firstPing(id: id, interval: configuration.pingInterval.asSeconds)),
            maximumHeldLines: configuration.maximumHeldLines)
        connection.fromFront = request.fromFront
        tables.opened(connection)
        metrics.connectionsOpened += 1
        guard !request.echo, let name = request.room else { return }
        // A link's upgrade and its subprotocol go together, or it is nothing this server serves.
        if request.relay != (encoding == .relay) {
            close(connection, code: 1002, reason: "relay links are /relay/ROOM with subprotocol \(relaySubprotocol), and only they")
            return
        }
        if request.relay {
            relayLinkOpened(connection, room: name)
            return
        }
        if cluster != nil && rooms[name] == nil {
            place(connection, request, in: name)
            return
        }
        join(connection, request, room: name)
    }

    /// Binds a connection to its room here as a member (or refuses it).
    func join(_ connection: Connection, _ request: UpgradeRequest, room name: RoomName) {
        let now = eventTime.server
        let entry: RoomEntry
        var created = false
        if isHeld(name) {
            // Seating a member changes the room, and a held room may not change.
            refuse(connection, CommandError(.unavailable, command: nil, message:
                "the room's database is out of reach and nobody can join until it is back; try again shortly"))
            return
        }
        if let existing = rooms[name] {
            entry = existing
        } else {
            created = true
            if let refusal = creationRefusal(request) {
                refuse(connection, refusal)
                return
            }
            let unused = rooms.values.filter { $0.connections.isEmpty && $0.room.isEmpty && !$0.room.hasBeenUsed }
                .map { (name: $0.room.name, emptySince: $0.room.emptySince) }
            switch state.roomWanted(held: rooms.count, unused: unused) {
            case .free:
                break
            case .inPlaceOf(let unusedRoom):
                run(gateway: [.giveUpUnusedRoom(unusedRoom)])
            case .full(let error):
                metrics.refusedConnections["rooms", default: 0] += 1
                refuse(connection, error)
                return
            }
            run(gateway: state.roomCreated(by: request.address, token: request.create, at: eventTime.monotonic))
            entry = RoomEntry(room: Room(name: name, configuration: configuration.room, now: now))
            tables.kept(entry)
            run([.persist(entry.room.snapshot(at: now))], in: entry)
        }
        // Only the first member of a room without an owner needs a fresh owner key.
        let founding = entry.room.isEmpty && entry.room.protection.ownerKeyDigest == nil
        let connect = ConnectRequest(name: request.name, player: request.player, join: request.join,
                                     resume: request.resume, newToken: Self.newToken(), ownerKey: request.owner,
                                     newOwnerKey: founding ? Self.newToken() + Self.newToken() : nil, device: request.device,
                                     address: request.address, invite: request.invite, password: request.password,
                                     token: request.token, software: request.software)
        switch entry.room.connectionOpened(connect, now: now) {
        case .accepted(let member, let actions):
            if let previous = entry.connections[member], previous !== connection {
                // The same member reconnected before its old connection was noticed gone.
                tables.unseated(previous, member, in: entry)
                close(previous, code: 4002, reason: "replaced by a newer connection")
            }
            tables.seated(connection, as: member, in: entry)
            run(actions, in: entry)
        case .refused(let error):
            metrics.refusedConnections[error.code.rawValue, default: 0] += 1
            logger.info("connection refused", metadata: ["room": "\(name)", "address": "\(request.address)",
                                                         "code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            refuse(connection, error)
            if created && entry.room.isEmpty { dropRoom(name) }
        }
    }

    /// Why `request` may not create a room now (`GatewayState.roomCreationRefusal`).
    func creationRefusal(_ request: UpgradeRequest) -> CommandError? {
        guard let refusal = state.roomCreationRefusal(address: request.address, token: request.create, now: eventTime.monotonic)
        else { return nil }
        metrics.refusedConnections["room-creation-rate", default: 0] += 1
        return refusal
    }

    /// An `error` that says why, then the close (`GatewayState.closeCode`).
    private func refuse(_ connection: Connection, _ error: CommandError) {
        send(.error(error), to: connection)
        // The connection cuts the reason to a close frame's 123 bytes
        // (WebSocketFraming.closeReason).
        close(connection, code: GatewayState.closeCode(refusing: error.code), reason: error.message)
    }

    /// The connection is gone (closed by either side, or dropped).
    func closed(id: UInt64) {
        guard let connection = connections[id] else {
            run(gateway: state.connectionClosed(id, address: nil, at: eventTime.monotonic))
            return
        }
        if connection.state.phase == .open {
            // Gone without a close frame either way (a reset, a dropped network).
            metrics.closes[GatewayMetrics.CloseKey(code: "unattributed", initiator: "unknown"), default: 0] += 1
        }
        tables.gone(connection)
        // The owner treats the member as this node saw it go: leaving, or dropped.
        relayedMemberGone(connection)
        if connection.encoding == .relay { relayLinkGone(connection) }
        tables.routed(connection, .local)
        let now = eventTime.monotonic
        for frame in connection.state.takeUnsent() { settle(frame, now: now) }
        leaveRoom(connection)
        run(gateway: state.connectionClosed(id, address: connection.address, at: now))
    }

    /// The member of a connection that is closing or gone leaves its room's view
    /// of who is connected (the room keeps it for its resume grace).
    func leaveRoom(_ connection: Connection) {
        guard let name = connection.room, let member = connection.member, let entry = rooms[name],
              entry.connections[member] === connection else { return }
        tables.unseated(connection, member, in: entry)
        run(entry.room.connectionClosed(member, leaving: connection.leaving, now: eventTime.server), in: entry)
    }

    /// A piece of a message arrived; a whole one is handled.
    func received(_ bytes: UnsafeRawBufferPointer, binary: Bool, final: Bool, midFrame: Bool, on connection: Connection) {
        switch connection.state.received(bytes, binary: binary, final: final, midFrame: midFrame, now: eventTime.monotonic) {
        case .partial, .discarded:
            return
        case .refused(let actions):
            run(actions, on: connection)
        case .message(let message, let binary):
            if connection.encoding == .echo {
                echo(message, binary: binary, on: connection)
            } else if connection.encoding == .relay {
                relayLinkReceived(message, on: connection)
            } else {
                handleMessage(message, on: connection)
            }
        }
    }

    /// A member's message: relayed to the room's owner, held while the room is
    /// being placed or its owner reached, or handled here.
    func handleMessage(_ message: [UInt8], on connection: Connection) {
        switch connection.route {
        case .relayed(let link?, placing: nil):
            emit(.relaySend(link.link, .message(link.number, message)))
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
        guard !tables.hold(line, on: connection) else { return }
        metrics.heldLinesRefused += 1
        let why = connection.route.holdsBecause ?? "the connection waits"
        send(.error(CommandError(.rateLimited, command: nil, message: "too many lines while \(why); this one was dropped")),
             to: connection)
    }

    /// The held lines, in order, once the route lets them go, until one of
    /// them makes it hold again (a line that starts a check).
    func releaseHeld(_ connection: Connection) {
        var pending = tables.takeHeld(from: connection)
        while !pending.isEmpty, connection.route.holdsBecause == nil, connection.state.isOpen {
            switch pending.removeFirst() {
            case .message(let message): handleMessage(message, on: connection)
            case .parsed(let parsed): deliver(parsed, on: connection)
            }
        }
        tables.restoreHeld(pending, on: connection)
    }

    /// A whole text message: one line or several, each admitted by the command
    /// rate and handled in order.
    private func handle(_ message: [UInt8], on connection: Connection) {
        guard let name = connection.room, let member = connection.member, let entry = rooms[name] else { return }
        for line in InboundMessage.lines(message) {
            guard entry.connections[member] === connection, connection.state.isOpen else { return }
            switch connection.state.admitLine(now: eventTime.monotonic) {
            case .refused(let actions):
                run(actions, on: connection)
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
        emit(.send([OutboundFrame(bytes, kind: binary ? .binary : .text, createdAt: eventTime.monotonic)], to: connection))
    }

    static func metricName(_ input: InputLine) -> String {
        switch input {
        case .command(let command): command.name.rawValue
        case .chat: "chat"
        case .empty: "empty"
        }
    }

    /// The peer's close frame arrived (`malformed`: a one-byte payload, or a
    /// reason that is not UTF-8); true when the connection is to be ended now,
    /// false when the library should answer the close.
    func peerClosed(_ connection: Connection, code: String, malformed: Bool) -> Bool {
        let answer = connection.state.peerClosed()
        if answer == .answer {
            metrics.closes[GatewayMetrics.CloseKey(code: malformed ? "malformed" : code, initiator: "client"), default: 0] += 1
            // A client that closes with 1000 is leaving (docs/protocol.md, "Close
            // codes"); any other close keeps its member for the resume grace.
            tables.leaving(connection, !malformed && code == "1000")
        }
        leaveRoom(connection)
        // A malformed close fails the connection rather than being echoed; a
        // close that answers ours finishes it without a second close frame.
        return answer == .finished || malformed
    }

    /// A pong came back.
    func ponged(_ connection: Connection) {
        run(connection.state.ponged(now: eventTime.monotonic), on: connection)
    }

    /// The service loop's housekeeping timer went off (`GatewayState.housekeeping`).
    func housekeeping() {
        run(gateway: state.housekeeping(at: eventTime))
        voiceTick()
    }

    /// Between half an interval and one and a half, spread by connection id, so
    /// that each housekeeping pass pings a slice of the connections, not all.
    static func firstPing(id: UInt64, interval: Double) -> MonotonicDuration {
        .seconds(interval * (0.5 + Double(id % 1024) / 1024))
    }

    /// The client's address (below), warning once per peer when a peer that is not
    /// a trusted proxy sends `X-Forwarded-For`: behind a proxy that is not in
    /// `trusted-proxies`, everyone has the proxy's address, so one address ban or
    /// limit would hit them all (deploy/README.md).
    func clientAddress(peer: String, forwardedFor: String?, front: String? = nil) -> String {
        if provesFront(peer: peer, front: front) {
            return Self.clientAddress(peer: peer, forwardedFor: forwardedFor, trusted: [peer])
        }
        if forwardedFor != nil, !configuration.trustedProxies.contains(peer),
           tables.forwarderWarned(peer, limit: Self.untrustedForwardersWarned) {
            metrics.untrustedForwarding += 1
            logger.warning("a peer that is not a trusted proxy sent X-Forwarded-For; its clients all count as its address. If it is your proxy, add it to trusted-proxies",
                           metadata: ["peer": "\(peer)", "trusted-proxies": "\(configuration.trustedProxies.joined(separator: ","))"])
        }
        return Self.clientAddress(peer: peer, forwardedFor: forwardedFor, trusted: configuration.trustedProxies)
    }

    /// Whether a connection from `peer` is one of this server's own fronts: from
    /// loopback, with the front's secret in its `X-Cowatch-Front` header.
    func provesFront(peer: String, front: String?) -> Bool {
        guard let secret = configuration.frontSecret, let front, Self.isLoopback(peer) else { return false }
        return SecretDigest.equal(front, secret)
    }

    static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.")
    }

    /// The header a front's member connections carry its secret in (`SyncplayFront.secretHeader`).
    static let frontHeader = "X-Cowatch-Front"

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

    /// An unguessable resume token: 128 random bits, hex.
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
