import CowatchClient
import CowatchCore
import CowatchTime
import Foundation

/// Where the rooms' voice orders meet the media server's link (`VoiceBridge`):
/// the room decided, the bridge keeps Janus in step, and what Janus answers
/// goes back to the room, which tells its members.
extension Gateway {
    /// At the start of serving, on a server with a media server.
    func startVoice() {
        guard let url = configuration.voice.janusURL, let secret = configuration.voice.janusSecret else { return }
        guard WebSocketAddress(url) != nil else {
            logger.error("voice is off: voice-url is not a ws:// address", metadata: ["voice-url": "\(url)"])
            return
        }
        do {
            voiceClients = try WebSocketClients(connectTimeout: .seconds(5), trust: nil)
        } catch {
            logger.error("voice is off: no WebSocket client for the media server", metadata: ["error": "\(error)"])
            return
        }
        var settings = VoiceBridge.Settings(secret: secret, maximumRooms: configuration.voice.maximumRooms)
        settings.jitterPackets = configuration.voice.jitterPackets
        // Janus keeps rooms that a node which restarted made; a number from the
        // clock (in Janus's 53-bit range) keeps the new ones clear of them.
        settings.firstRoomNumber = (eventTime.server.milliseconds % (1 << 40)) << 10 + 1
        // This node's rooms, told apart from another node's on a shared Janus:
        // the cluster's node name, or this host and port for a lone server.
        settings.mark = "cowatch " + (cluster?.settings.node ?? "\(ProcessInfo.processInfo.hostName):\(configuration.port)")
        voice = VoiceBridge(settings: settings)
        run(voice: voice?.start() ?? [])
    }

    func voiceOrder(_ order: VoiceOrder, in entry: RoomEntry) {
        let room = entry.room.name
        switch order {
        case .ticket(let member):
            guard let connection = entry.connections[member] else { return }
            send(.voiceTicket(configuration.voice.ticket(for: member, of: room, now: eventTime.server)), to: connection)
        case .join(let member, let name, let offer, let muted):
            switch VoiceConfiguration.offer(fromBase64: offer) {
            case .failure(let problem):
                run(entry.room.voiceFailed(member, reason: problem.sentence, now: eventTime.server), in: entry)
            case .success(let sdp):
                guard var bridge = voice else {
                    run(entry.room.voiceFailed(member, reason: "this server has no media server", now: eventTime.server), in: entry)
                    return
                }
                let actions = bridge.join(room, member, name: name.text, offer: sdp, muted: muted, now: eventTime.monotonic)
                voice = bridge
                metrics.voiceJoins += 1
                run(voice: actions)
            }
        case .mute(let member, let on):
            guard var bridge = voice else { return }
            let actions = bridge.mute(room, member, on, now: eventTime.monotonic)
            voice = bridge
            run(voice: actions)
        case .leave(let member):
            guard var bridge = voice else { return }
            let actions = bridge.leave(room, member, now: eventTime.monotonic)
            voice = bridge
            run(voice: actions)
        }
    }

    func run(voice actions: [VoiceBridge.Action]) {
        for action in actions {
            switch action {
            case .connect:
                emit(.openVoiceLink)
            case .disconnect:
                emit(.closeVoiceLink)
            case .send(let text):
                emit(.voiceSend(text))
            case .joined(let room, let member, let answer):
                guard let entry = rooms[room] else { continue }
                run(entry.room.voiceJoined(member, answer: answer, now: eventTime.server), in: entry)
            case .failed(let room, let member, let reason):
                metrics.voiceFailures += 1
                logger.info("voice seat lost", metadata: ["room": "\(room)", "member": "\(member)", "reason": "\(reason)"])
                guard let entry = rooms[room] else { continue }
                run(entry.room.voiceFailed(member, reason: reason, now: eventTime.server), in: entry)
            case .speaking(let room, let member, let speaking):
                guard let entry = rooms[room] else { continue }
                run(entry.room.voiceSpeaking(member, speaking, now: eventTime.server), in: entry)
            case .ended(let room, let reason):
                guard let entry = rooms[room] else { continue }
                run(entry.room.voiceEnded(reason: reason, now: eventTime.server), in: entry)
            case .cleared(let count):
                logger.info("the media server's rooms an earlier link left were destroyed", metadata: ["rooms": "\(count)"])
            }
        }
        metrics.voiceRooms = voice?.roomCount ?? 0
        metrics.voiceSeats = voice?.seatCount ?? 0
        metrics.voiceLinkUp = voice?.isReady == true
    }

    /// A room no longer served here lets go of its seats on the media server.
    func forgetVoice(of room: RoomName) {
        guard var bridge = voice else { return }
        let actions = bridge.forget(room, now: eventTime.monotonic)
        voice = bridge
        run(voice: actions)
    }

    func voiceTick() {
        guard var bridge = voice else { return }
        let actions = bridge.tick(now: eventTime.monotonic)
        voice = bridge
        run(voice: actions)
    }

    /// Opens the link, numbered so that a late event of an earlier one is told apart.
    func openVoiceLink() {
        guard let clients = voiceClients, let url = configuration.voice.janusURL, let address = WebSocketAddress(url) else { return }
        voiceLinkNumber += 1
        let number = voiceLinkNumber
        voiceLink = clients.connect(address, encoding: .json, handlers: ClientHandlers(
            opened: { [weak self] in self?.post(.voiceOpened(number)) },
            received: { [weak self] text in self?.post(.voiceReceived(number, text)) },
            closed: { [weak self] _ in self?.post(.voiceClosed(number)) }),
            subprotocol: JanusWire.subprotocol)
    }

    func voiceLinkOpened(_ number: UInt64) {
        guard number == voiceLinkNumber, var bridge = voice else { return }
        logger.info("media server reached", metadata: ["voice-url": "\(configuration.voice.janusURL ?? "")"])
        let actions = bridge.opened(now: eventTime.monotonic)
        voice = bridge
        run(voice: actions)
    }

    func voiceReceived(_ number: UInt64, _ text: String) {
        guard number == voiceLinkNumber, var bridge = voice else { return }
        guard let message = JanusWire.message(text) else {
            logger.warning("the media server sent what is not a message", metadata: ["bytes": "\(text.utf8.count)"])
            return
        }
        let actions = bridge.received(message, now: eventTime.monotonic)
        voice = bridge
        run(voice: actions)
    }

    func voiceLinkClosed(_ number: UInt64) {
        guard number == voiceLinkNumber, var bridge = voice else { return }
        if bridge.isReady || bridge.seatCount > 0 {
            logger.warning("media server link lost; voice seats end", metadata: ["seats": "\(bridge.seatCount)"])
        }
        voiceLink = nil
        let actions = bridge.closed(now: eventTime.monotonic)
        voice = bridge
        // Said once a spell: tried again every 30 s at most, quietly after.
        if bridge.failuresInARow == 1 {
            logger.warning("media server out of reach; voice is unavailable until it answers, tried again shortly",
                           metadata: ["voice-url": "\(configuration.voice.janusURL ?? "")"])
        }
        run(voice: actions)
    }
}
