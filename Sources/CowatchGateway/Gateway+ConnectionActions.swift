import CowatchConnection
import CowatchCore
import CowatchTime
import SlashCommands

/// The one place that carries out what a connection's state decides, and the one
/// place a frame is queued (`enqueue`).
extension Gateway {
    var connectionLimits: ConnectionLimits { configuration.connectionLimits }

    func perform(_ actions: [ConnectionAction], on connection: Connection) {
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
                let rate = NumberText.decimal(configuration.commandsPerSecond, places: 1)
                send(.error(CommandError(.rateLimited, command: nil,
                                         message: "slow down: at most \(rate) commands per second; lines are being dropped")),
                     to: connection)
            case .close(let frame):
                let now = time.monotonic()
                let followUp = connection.state.close(frame, now: now)
                guard !followUp.isEmpty else { continue }
                metrics.closes[GatewayMetrics.CloseKey(code: "\(frame.code)", initiator: "server"), default: 0] += 1
                // A closing connection takes no more part in its room.
                leaveRoom(connection)
                perform(followUp, on: connection)
            case .resynchronize(let dropped):
                let now = time.monotonic()
                metrics.outboxDrops += dropped.count
                metrics.outboxResyncs += 1
                for frame in dropped { settle(frame, now: now) }
                if connection.route.isRelayed {
                    // The owner keeps the room's state: a relayed member that fell
                    // behind comes back for it.
                    close(connection, code: 4010, reason: "too far behind; reconnect now")
                    continue
                }
                guard let name = connection.room, let entry = rooms[name] else { continue }
                let frames = frames(for: .state(entry.room.state), encoding: connection.encoding, room: name, now: now)
                perform(connection.state.enqueueResynchronization(frames), on: connection)
            case .reportRoundTrip(let roundTrip):
                metrics.roundTrip.observe(seconds: roundTrip.seconds)
                guard let name = connection.room, let member = connection.member, let entry = rooms[name] else { continue }
                let measured = ServerInterval(milliseconds: roundTrip.roundedUpMilliseconds)
                run(entry.room.roundTripMeasured(measured, for: member, now: time.now()), in: entry)
            case .drop(let cause):
                metrics.dropped[cause.rawValue, default: 0] += 1
                server?.drop(connection)
            case .hangUp:
                metrics.closeRepliesMissing += 1
                server?.drop(connection)
            }
        }
    }

    /// Queues a frame for one connection.
    func enqueue(_ frame: OutboundFrame, on connection: Connection, now: MonotonicInstant? = nil) {
        let actions = connection.state.enqueue(frame, now: now ?? time.monotonic())
        if !actions.isEmpty { perform(actions, on: connection) }
    }

    /// Frames went to the socket in one write.
    func wrote(_ frames: [OutboundFrame], on connection: Connection, stillBuffered: Bool) {
        let now = time.monotonic()
        for frame in frames {
            settle(frame, now: now)
            if frame.kind != .ping { metrics.deliveries += 1 }
        }
        metrics.writes += 1
        perform(connection.state.wrote(stillBuffered: stillBuffered, now: now), on: connection)
    }

    /// A frame left an outbox (written or dropped); the last one times the fan-out.
    func settle(_ frame: OutboundFrame, now: MonotonicInstant) {
        frame.pendingRecipients -= 1
        if frame.pendingRecipients == 0 && frame.kind == .text {
            metrics.fanOut.observe(seconds: (now - frame.createdAt).seconds)
        }
    }
}
