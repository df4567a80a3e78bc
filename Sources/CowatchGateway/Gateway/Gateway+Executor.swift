import CowatchClient
import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime

/// The one place where the world is touched: the effects an event decided
/// (`GatewayEffect`) are carried out here, in order, at the event's edge. The
/// libwebsockets layer ends each of its callbacks and timers with `eventEnds`;
/// so do the service thread's own events (a message from another thread, the
/// start, the end). Carrying out a frame or a close asks a connection's machine,
/// and what it decides in turn (a write, a full outbox, a member leaving its
/// room) is decided here and carried out after, in the same pass.
extension Gateway {
    /// Decided by the event being handled: carried out at its edge.
    func emit(_ effect: GatewayEffect) {
        pendingEffects.append(effect)
    }

    /// Carries out what the event decided, and what that decides in turn,
    /// until nothing is left. Returns what was carried out when
    /// `recordsEffects` is set (tests), else nothing.
    @discardableResult
    func eventEnds() -> [GatewayEffect] {
        guard !executingEffects, !pendingEffects.isEmpty else { return [] }
        executingEffects = true
        defer { executingEffects = false }
        var carriedOut: [GatewayEffect] = []
        var index = 0
        while index < pendingEffects.count {
            let effect = pendingEffects[index]
            index += 1
            execute(effect)
            if recordsEffects { carriedOut.append(effect) }
        }
        pendingEffects.removeAll(keepingCapacity: true)
        return carriedOut
    }

    private func execute(_ effect: GatewayEffect) {
        let now = eventTime.monotonic
        switch effect {
        case .send(let frames, let connection):
            for frame in frames { queue(frame, on: connection, now: now) }
        case .broadcast(let json, let text, let recipients):
            for connection in recipients {
                switch connection.encoding {
                case .json: if let json { queue(json, on: connection, now: now) }
                case .text: for frame in text { queue(frame, on: connection, now: now) }
                case .echo, .relay: break
                }
            }
        case .deliver(let frame, let recipients):
            for connection in recipients { queue(frame, on: connection, now: now) }
        case .close(let connection, let code, let reason):
            closing(connection, ConnectionState.CloseFrame(code: code, reason: reason))
        case .requestWrite(let connection):
            server?.requestWrite(connection)
        case .setReading(let connection, let paused):
            server?.setReading(connection, paused: paused)
        case .drop(let connection):
            server?.drop(connection)
        case .answer(let id, let response):
            server?.answerDeferred(id, with: response)
        case .armRoomTimers(let nextDue):
            server?.armTimers(nextDue: nextDue)
        case .armHousekeeping(let delay):
            server?.armHousekeeping(afterMicroseconds: delay.microseconds)
        case .wakeLoop:
            server?.wake()
        case .store(let changes):
            store?.write(changes)
        case .flushStore:
            store?.flush()
        // What reaches the database, other nodes and the web.
        case .own(let room, let epoch):
            clusterLink?.store.own(room, epoch: epoch)
        case .disown(let room):
            clusterLink?.store.disown(room)
        case .acquireLease(let room, let mayTakeLapsed):
            clusterLink?.leases.acquire(room, mayTakeLapsed: mayTakeLapsed) { [weak self] placement in
                self?.post(.placement(room, placement))
            }
        case .releaseLease(let room, let epoch):
            clusterLink?.leases.release(room, epoch: epoch)
        case .extendCeiling(let room, let epoch, let ceiling):
            clusterLink?.leases.extendCeiling(room, epoch: epoch, to: ceiling) { [weak self] granted in
                self?.post(.ceilingExtended(room, epoch: epoch, ceiling: ceiling, granted: granted))
            }
        case .renewLeases(let rooms):
            clusterLink?.leases.renew(rooms)
        case .shareOperatorChange(let change):
            clusterLink?.leases.shareOperatorChange(change)
        case .listClusterRooms(let id):
            clusterLink?.leases.clusterRooms { [weak self] found in self?.post(.clusterRoomsListed(id, found)) }
        case .stopLeases:
            clusterLink?.leases.drain()
            clusterLink?.leases.stop()
        case .openRelay(let id, let address, let proof):
            guard let relays = cluster?.relays else { return }
            tables.upstreamOpened(id, relays.connect(address, encoding: .json, handlers: ClientHandlers(
                opened: { [weak self] in self?.post(.relayOpened(id)) },
                received: { [weak self] text in self?.post(.relayReceived(id, text)) },
                closed: { [weak self] info in self?.post(.relayClosed(id, info)) }),
                headers: [(RelayProof.header, proof)], subprotocol: relaySubprotocol))
        case .relaySend(let id, let up):
            tables.upstreams[id]?.send(bytes: RelayWire.encode(up), binary: false)
        case .closeRelay(let id, let code):
            tables.upstreamTaken(id)?.close(code: code)
        case .openVoiceLink:
            openVoiceLink()
        case .closeVoiceLink:
            voiceLink?.close(code: 1000)
        case .voiceSend(let text):
            voiceLink?.send(text)
        case .checkMedia(let link, let id, let address):
            let started = eventTime.monotonic
            MediaProbe.check(link, settings: configuration.mediaCheck, time: time) { [weak self] verdict in
                self?.mediaCheckFinished(id, verdict: verdict, started: started, address: address)
            }
        case .fetchSubtitles(let link, let id, let address):
            SubtitleFetch.fetch(link, settings: configuration.mediaCheck, time: time) { [weak self] outcome in
                self?.post(.subtitles(id, outcome, address: address))
            }
        }
    }

    /// Queues a frame for one connection (for a member on another node, down its link).
    private func queue(_ frame: OutboundFrame, on connection: Connection, now: MonotonicInstant) {
        if case .link(let link, let number) = connection.carrier {
            guard connection.state.isOpen, !connection.isGone else { return }
            queue(Self.linkFrame(.member(number), frame), on: link, now: now)
            return
        }
        let actions = connection.state.enqueue(frame, now: now)
        if !actions.isEmpty { run(actions, on: connection) }
    }
}
