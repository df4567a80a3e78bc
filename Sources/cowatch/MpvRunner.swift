import CowatchClient
import CowatchCore
import CowatchPlayer
import CowatchTime
import Foundation

/// Carries out what `DesktopPlayer` decides for `cowatch watch`: the one place
/// that touches mpv's IPC socket, the room's connection, timers and the clock.
/// Everything happens on `queue`, one input at a time. Each input goes to the
/// player with a fresh reading of mpv's position, timestamped at the middle of
/// its IPC round trip (a fraction of a millisecond on one machine). Both clocks
/// are read from `time`.
final class MpvRunner: @unchecked Sendable {
    /// mpv's properties the player follows (MpvReadings), observed: mpv says
    /// when they change.
    static let observed = ["pause", "seeking", "paused-for-cache", "demuxer-cache-duration", "demuxer-cache-idle",
                           "duration", "eof-reached", "speed", "container-fps"]
    /// How often the player looks at mpv's position (the page's tick).
    static let tick = MonotonicDuration.milliseconds(50)
    /// Room events kept while the first `/time` answer is awaited (a fraction of
    /// a second): beyond this the oldest go, a newer state standing for them.
    static let maximumEarlyMessages = 200

    private let queue = DispatchQueue(label: "cowatch-watch", qos: .userInteractive)
    private let mpv: MpvSocket
    private let clients: WebSocketClients
    private let address: WebSocketAddress
    private let verbose: Bool
    private let launched: Process?
    /// This machine's wall clock, and its monotonic clock, when the runner began:
    /// local time on the server's scale is the first moved on by the second.
    private let wallAtStart: PreciseInstant
    private let monotonicAtStart: MonotonicInstant

    // On `queue` only.
    private var life: ClientLife
    private var connection: ClientConnection?
    private var open = false
    private var player: DesktopPlayer
    private var clock = ServerClock()
    private var readings = MpvReadings()
    private var nextRequest = 1
    private var answers: [Int: (MpvMessage) -> Void] = [:]
    private var tickPending = false
    /// Counts the wakes asked for: a timer comes due only if no newer wake or
    /// cancel followed it.
    private var wakeGeneration = 0
    private var clockStartedAt = PreciseInstant(milliseconds: 0)
    private var clockSent = 0
    private var clockLastSent = PreciseInstant(milliseconds: 0)
    private var clockGeneration = 0
    /// Room events that came before the first clock estimate.
    private var early: [RoomEvent] = []
    private var lastMode = ""
    private var lastDriftNote: MonotonicInstant?
    private var signals: [DispatchSourceSignal] = []
    private let trust: ClientTrust
    /// Where the room connection's events are timed and its timers set.
    private let time: any TimeSource

    init(mpv: MpvSocket, launched: Process?, address: WebSocketAddress, localFile: LocalCopy?, share: String?, verbose: Bool,
         trust: ClientTrust, connectTimeout: MonotonicDuration, time: any TimeSource = SystemTime()) throws {
        self.mpv = mpv
        self.time = time
        self.launched = launched
        self.address = address
        self.verbose = verbose
        player = DesktopPlayer(localFile: localFile, share: share)
        life = ClientLife(settings: ClientLife.Settings(interactive: true, confirmTimeout: connectTimeout))
        self.trust = trust
        clients = try WebSocketClients(connectTimeout: connectTimeout, trust: trust, probesFailures: true)
        monotonicAtStart = time.monotonic()
        wallAtStart = PreciseInstant(time.now())
    }

    func start() {
        mpv.startReading(received: { [self] line in queue.async { self.mpvLine(line) } },
                         ended: { [self] in queue.async { self.mpvEnded() } })
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { [self] in finish(code: 0) }
            source.resume()
            signals.append(source)
        }
        queue.async { [self] in
            // An attached mpv is made to stay on an item's last frame (the room
            // says when the item ends) and to stay open without one.
            request(["set_property", "keep-open", "yes"])
            request(["set_property", "idle", "yes"])
            request(["set_property", "pause", true])
            // Pitch kept by a filter that stays: mpv's own comes and goes as the
            // speed leaves and meets exactly 1, and the position jumps each time
            // (Sources/CowatchPlayer/Steadiness.swift). The label replaces ours
            // on an mpv attached again.
            request(["af", "add", "@cowatch-speed:scaletempo2"])
            for (index, name) in Self.observed.enumerated() { request(["observe_property", .number(Double(index + 1)), .string(name)]) }
            for action in life.handle(.start(now: time.monotonic())) { perform(action) }
            scheduleTick()
        }
    }

    // MARK: mpv

    private func request(_ arguments: [MpvValue], answered: ((MpvMessage) -> Void)? = nil) {
        let id = nextRequest
        nextRequest += 1
        if let answered { answers[id] = answered }
        mpv.write(MpvMessage.command(arguments, id: id))
    }

    private func mpvLine(_ line: String) {
        guard let message = MpvMessage(line: line) else { return }
        switch message {
        case .reply(let id, let success, let error, _):
            if let answered = answers.removeValue(forKey: id) {
                answered(message)
            } else if !success, verbose {
                Output.error("cowatch: mpv answered request \(id): \(error)")
            }
        case .propertyChange(let name, let data):
            observe(name, data)
        case .event(let name, let reason):
            switch name {
            case "start-file":
                readings.loaded = false
            case "file-loaded":
                readings.loaded = true
                readings.eofReached = false
                sampled(.mpv(.fileLoaded))
            case "seek":
                // At once, not after a reading: an answer already on its way may
                // show the new position, and the player must know first that the
                // seek is not its own.
                deliver(.mpv(.seek), at: time.monotonic())
            case "playback-restart":
                sampled(.mpv(.playbackRestart))
            case "end-file":
                readings.loaded = false
                sampled(.mpv(.endFile(reason: reason ?? "")))
            default:
                break
            }
        }
    }

    private func observe(_ name: String, _ data: MpvValue) {
        switch name {
        case "pause":
            guard let paused = data.bool else { return }
            readings.paused = paused
            sampled(.mpv(.pauseChanged(paused)))
        case "seeking": readings.seeking = data.bool ?? false
        case "paused-for-cache": readings.pausedForCache = data.bool ?? false
        case "demuxer-cache-duration": readings.bufferedAhead = data.double
        case "demuxer-cache-idle": readings.cacheIdle = data.bool ?? false
        case "duration": readings.duration = data.double
        case "eof-reached": readings.eofReached = data.bool ?? false
        case "speed": readings.speed = data.double ?? readings.speed
        case "container-fps":
            if let fps = data.double, fps >= 1, fps <= 1000 {
                readings.frame = 1 / fps
                readings.frameKnown = true
            } else {
                readings.frame = 0.05
                readings.frameKnown = false
            }
        default: break
        }
    }

    /// Reads mpv's position, then hands `input` to the player. Playing, that is
    /// `audio-pts`, which moves smoothly; paused, and without audio, `time-pos`,
    /// which moves by whole frames (Steadiness): paused, `audio-pts` stands a
    /// queue of audio (about 0.2 s) short of where mpv holds.
    private func sampled(_ input: DesktopPlayer.Input) {
        let sent = time.monotonic()
        guard !readings.paused else { return sampledFrame(input) }
        request(["get_property", "audio-pts"]) { [self] answer in
            guard case .reply(_, true, _, let data) = answer, let position = data.double else { return sampledFrame(input) }
            readings.position = position
            readings.precision = 0.001
            deliver(input, at: Self.middle(sent, time.monotonic()))
        }
    }

    private func sampledFrame(_ input: DesktopPlayer.Input) {
        let sent = time.monotonic()
        request(["get_property", "time-pos"]) { [self] answer in
            if case .reply(_, true, _, let data) = answer, let position = data.double {
                readings.position = position
                readings.precision = readings.frame
            } else {
                readings.position = nil
            }
            deliver(input, at: Self.middle(sent, time.monotonic()))
        }
    }

    private func deliver(_ input: DesktopPlayer.Input, at monotonic: MonotonicInstant) {
        let now = clock.serverTime(atLocal: local(monotonic))
        for action in player.handle(input, readings: readings, now: now, monotonic: monotonic) { perform(action) }
        if verbose, input == .tick, lastDriftNote.map({ monotonic - $0 >= .milliseconds(1000) }) ?? true, let drift = player.drift {
            lastDriftNote = monotonic
            Output.error(String(format: "cowatch: drift %.1f ms, speed %.4f, position %.3f", drift * 1000, readings.speed,
                                readings.position ?? -1))
        }
        let status = player.detail.isEmpty ? player.mode : "\(player.mode): \(player.detail)"
        if status != lastMode {
            lastMode = status
            Output.error("cowatch: \(status)")
        }
    }

    private func perform(_ action: DesktopPlayer.Action) {
        switch action {
        case .send(let line):
            if verbose { Output.error("cowatch: → \(line)") }
            if open { connection?.send(line) }
        case .load(let target):
            readings.loaded = false
            readings.eofReached = false
            request(["loadfile", .string(target), "replace"])
        case .unload:
            readings.loaded = false
            request(["stop"])
        case .tell(let words):
            Output.error("cowatch: \(words)")
        case .pause:
            readings.paused = true
            request(["set_property", "pause", true])
        case .play(let at, let speed):
            if readings.speed != speed { request(["set_property", "speed", .number(speed)]) }
            readings.speed = speed
            // To the instant: the timer woke a few ms before it.
            let wait = (at - clock.offset) - local(time.monotonic())
            SystemClock.sleep(for: MonotonicDuration(wait))
            readings.paused = false
            request(["set_property", "pause", false])
        case .seek(let position):
            request(["seek", .number(position), "absolute+exact"])
        case .speed(let speed):
            readings.speed = speed
            request(["set_property", "speed", .number(speed)])
        case .wake(let id, let delay):
            wakeGeneration += 1
            let generation = wakeGeneration
            time.schedule(after: MonotonicDuration(delay), on: queue) { [self] in
                if generation == wakeGeneration { sampled(.wake(id)) }
            }
        case .cancelWake:
            wakeGeneration += 1
        case .note(let text):
            if verbose { Output.error("cowatch: \(text)") }
        }
    }

    private func scheduleTick() {
        time.schedule(after: Self.tick, on: queue) { [self] in
            scheduleTick()
            guard clock.synced, !tickPending else { return }
            tickPending = true
            sampled(.tick)
            // The tick's own answer comes back in order after any input before it.
            request(["get_property", "pause"]) { [self] _ in tickPending = false }
        }
    }

    private func mpvEnded() {
        Output.error("cowatch: mpv closed")
        finish(code: 0)
    }

    private func finish(code: Int32) {
        connection?.close()
        if let launched, launched.isRunning { launched.terminate() }
        mpv.shutdownSocket()
        clients.shutdown()
        exit(code)
    }

    // MARK: the room

    private func post(_ event: ClientLife.Event) {
        queue.async { [self] in
            for action in life.handle(event) { perform(action) }
        }
    }

    private func perform(_ action: ClientLife.Action) {
        switch action {
        case .connect(let attempt, let resume):
            let target = resume.map { address.adding("resume", $0) } ?? address
            connection = clients.connect(target, encoding: .json, handlers: ClientHandlers(
                opened: { [self] in post(.opened(attempt)); queue.async { self.opened() } },
                received: { [self] text in post(.received(attempt, text)); queue.async { self.received(text) } },
                closed: { [self] info in queue.async { self.open = false }; post(.closed(attempt, info, now: time.monotonic())) }))
        case .send(let text):
            if open { connection?.send(text) }
        case .close:
            connection?.close()
        case .print:
            break // the room's events are the player's, not lines for a terminal
        case .say(let text):
            Output.error(text)
        case .explainRefusal(let attempt):
            let target = address
            DispatchQueue.global().async { [self] in
                let answer = try? PlainHTTP.upgradeAnswer(target, subprotocol: ClientEncoding.json.rawValue, trust: trust)
                post(.refusalExplained(attempt, status: answer?.status == 101 ? nil : answer?.status,
                                       body: answer?.body ?? "", now: time.monotonic()))
            }
        case .schedule(let timer, let delay):
            time.schedule(after: delay, on: queue) { [self] in
                for action in life.handle(.timerFired(timer, now: time.monotonic())) { perform(action) }
            }
        case .exit(let code):
            finish(code: code)
        }
    }

    private func opened() {
        open = true
        deliver(.connected, at: time.monotonic())
        clockGeneration += 1
        clockSent = 0
        clockStartedAt = local(time.monotonic())
        sampleClock(generation: clockGeneration)
    }

    /// `/time` round trips on the page's schedule (ServerClock.nextSample).
    private func sampleClock(generation: Int) {
        guard generation == clockGeneration, open else { return }
        let sent = local(time.monotonic())
        connection?.send(String(format: "/time %.3f", sent.milliseconds))
        clockSent += 1
        clockLastSent = sent
        let next = ServerClock.nextSample(startedAt: clockStartedAt, sentCount: clockSent, lastSent: clockLastSent)
        time.schedule(after: MonotonicDuration(max(.zero, next - sent)), on: queue) { [self] in
            sampleClock(generation: generation)
        }
    }

    private func received(_ text: String) {
        let event: RoomEvent
        do {
            guard let decoded = try JSONEventDecoding.decode(text) else { return } // a type this version does not know
            event = decoded
        } catch {
            Output.error("cowatch: an event that could not be read (\(error)): \(text.prefix(200))")
            return
        }
        switch event {
        case .time(let client, let server):
            let wasSynced = clock.synced
            clock.add(sent: PreciseInstant(milliseconds: client), server: PreciseInstant(milliseconds: Double(server.milliseconds)),
                      received: local(time.monotonic()))
            if !wasSynced, clock.synced {
                if verbose {
                    Output.error(String(format: "cowatch: server clock offset %.1f ms (± %.1f)", clock.offset.milliseconds,
                                        clock.uncertainty.milliseconds))
                }
                let waiting = early
                early = []
                for event in waiting { sampled(.room(event)) }
            }
        case .participantLeft, .chat, .notice, .reply, .voice, .voiceTicket, .voiceAnswer:
            return
        case .error(let error):
            // Reports that answer a state the room has moved on from are expected.
            if error.code != .staleReport { Output.error("cowatch: the room says: \(error.message)") }
            if clock.synced { sampled(.room(event)) }
        case .welcome, .state, .participant, .catchup:
            if clock.synced {
                sampled(.room(event))
            } else {
                early.append(event)
                if early.count > Self.maximumEarlyMessages { early.removeFirst() }
            }
        }
    }

    // MARK: clocks

    /// This machine's clock on the server's scale (epoch milliseconds), moving
    /// with the monotonic clock (never stepped).
    private func local(_ monotonic: MonotonicInstant) -> PreciseInstant {
        wallAtStart + PreciseInterval(monotonic - monotonicAtStart)
    }

    /// Halfway between two readings, to the microsecond.
    static func middle(_ first: MonotonicInstant, _ second: MonotonicInstant) -> MonotonicInstant {
        first + MonotonicDuration(microseconds: (second - first).microseconds / 2)
    }
}
