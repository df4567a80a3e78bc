import Foundation

/// What `cowatch bench` asks of the load generator.
public struct LoadPlan: Sendable {
    /// The server; its host and port are used, the path is replaced per room.
    public var server: WebSocketAddress
    public var rooms: Int
    /// Members per room, named m0, m1, ...; m0 is the room's controller.
    public var members: Int
    /// Measured commands per room, after the warm-up.
    public var rounds: Int
    /// Commands per room sent and waited for before measuring.
    public var warmupRounds: Int
    public var encoding: ClientEncoding
    /// Connections per libwebsockets client context (one service thread each).
    public var connectionsPerContext: Int
    /// Connections being opened at once, all contexts together.
    public var connectWindow: Int
    /// New connections per second at most; 0 for no limit. Every arrival is
    /// announced to the whole room, so a big room filled too fast overflows the
    /// server's outboxes.
    public var connectRate: Double
    /// Prefix of the room names, unique per run so that rooms of an earlier run
    /// (kept for their resume grace) are not reused.
    public var roomPrefix: String

    public init(server: WebSocketAddress, rooms: Int, members: Int, rounds: Int, warmupRounds: Int,
                encoding: ClientEncoding, connectionsPerContext: Int, connectWindow: Int, connectRate: Double,
                roomPrefix: String) {
        self.server = server
        self.rooms = rooms
        self.members = members
        self.rounds = rounds
        self.warmupRounds = warmupRounds
        self.encoding = encoding
        self.connectionsPerContext = connectionsPerContext
        self.connectWindow = connectWindow
        self.connectRate = connectRate
        self.roomPrefix = roomPrefix
    }

    public var connections: Int { rooms * members }
    public var contexts: Int { (connections + connectionsPerContext - 1) / max(1, connectionsPerContext) }

    /// What the controller sends: one `/watch` to start the session (paused at 0),
    /// then `/play`, `/pause`, `/seek +5` in turn. Each changes the state: with no
    /// player in the room `/play` starts at once, and `/pause` follows a `/play`.
    public static let opening = "/watch https://example.org/bench.mp4 Bench"
    public static let cycle = ["/play", "/pause", "/seek +5"]
}

/// The counters of one phase, read by the command from its own thread.
public struct LoadProgress: Sendable {
    public var opened = 0
    /// Members that have received their first `state` (the welcome is complete).
    public var welcomed = 0
    /// Connections that ended without being asked to.
    public var failed = 0
    public var firstFailure: String?
    /// Every frame received, and the `state` frames among them.
    public var frames = 0
    public var states = 0
    public var roomsFinished = 0
}

/// Measured rounds: one latency per command, from its sending until the last
/// member of its room had the resulting `state`.
public struct RoundResults: Sendable {
    /// Nanoseconds, sorted.
    public var latencies: [UInt64]
    /// `state` frames received from the first measured command to the last completed round.
    public var stateDeliveries: Int
    public var frames: Int
    public var seconds: Double
    public var completed: Bool

    /// Nearest-rank percentile in milliseconds.
    public func percentile(_ fraction: Double) -> Double {
        guard !latencies.isEmpty else { return .nan }
        let rank = Int((fraction * Double(latencies.count)).rounded(.up))
        let index = min(latencies.count - 1, max(0, rank - 1))
        return Double(latencies[index]) / 1_000_000
    }
}

/// Opens every member connection of every room over one or more client contexts,
/// then drives each room's controller in a closed loop.
public final class LoadGenerator: @unchecked Sendable {
    public let plan: LoadPlan
    private let contexts: [WebSocketClients]
    private let rooms: [BenchRoom]

    private let lock = NSLock()
    private var progress = LoadProgress()
    private var closing = false

    public init(plan: LoadPlan) throws {
        self.plan = plan
        var contexts: [WebSocketClients] = []
        for _ in 0..<plan.contexts { contexts.append(try WebSocketClients()) }
        self.contexts = contexts
        var rooms: [BenchRoom] = []
        for _ in 0..<plan.rooms {
            rooms.append(BenchRoom(members: plan.members, encoding: plan.encoding, measured: plan.rounds))
        }
        self.rooms = rooms
        for room in rooms { room.generator = self }
    }

    /// The counters, with the frames and states summed over every room.
    public var snapshot: LoadProgress {
        var copy = counters
        var frames = 0, states = 0
        for room in rooms {
            let counts = room.counters
            frames += counts.frames
            states += counts.states
        }
        copy.frames = frames
        copy.states = states
        return copy
    }

    /// The counters kept here, without the per-room sums: cheap to poll.
    private var counters: LoadProgress { lock.withLock { progress } }

    /// Opens members `members` of every room, at most `connectWindow` at a time
    /// and `connectRate` per second, and waits until each has its welcome and
    /// first state, or one failed, or `timeout` passed. Returns the seconds it
    /// took, or nil.
    public func open(members: Range<Int>, timeout: Double) -> Double? {
        let started = Date()
        let deadline = started.addingTimeInterval(timeout)
        // Member-major, so that every room fills at the same pace.
        var pending: [(room: Int, member: Int)] = []
        pending.reserveCapacity(plan.rooms * members.count)
        for member in members {
            for room in 0..<plan.rooms { pending.append((room, member)) }
        }
        let base = lock.withLock { progress.opened + progress.failed }
        let target = counters.welcomed + pending.count
        var launched = 0
        while Date() < deadline {
            let current = counters
            if current.welcomed >= target || current.failed > 0 { break }
            let settled = current.opened + current.failed - base
            var allowed = min(pending.count, settled + max(1, plan.connectWindow))
            if plan.connectRate > 0 {
                allowed = min(allowed, Int(Date().timeIntervalSince(started) * plan.connectRate) + 1)
            }
            while launched < allowed {
                launch(room: pending[launched].room, member: pending[launched].member)
                launched += 1
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
        let current = counters
        return current.welcomed >= target && current.failed == 0 ? Date().timeIntervalSince(started) : nil
    }

    /// Waits until no frame has arrived for `quiet` seconds: the arrival
    /// announcements of a big room take a while to fan out.
    public func waitUntilQuiet(quiet: Double, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var last = snapshot.frames
        var since = Date()
        while Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            let frames = snapshot.frames
            if frames != last {
                last = frames
                since = Date()
            } else if Date().timeIntervalSince(since) >= quiet {
                return true
            }
        }
        return false
    }

    /// Every controller, alone in its room so far, sends `/watch` and waits for
    /// the resulting state.
    public func startSessions(timeout: Double) -> Bool {
        lock.withLock { progress.roomsFinished = 0 }
        for room in rooms { room.begin(commands: [LoadPlan.opening], measureFrom: nil, participants: 1) }
        return waitFor(timeout: timeout) { $0.roomsFinished >= self.plan.rooms || $0.failed > 0 }
            && counters.failed == 0
    }

    /// Runs the warm-up and measured rounds in every room concurrently.
    public func runRounds(timeout: Double) -> RoundResults {
        lock.withLock { progress.roomsFinished = 0 }
        let total = plan.warmupRounds + plan.rounds
        let commands = (0..<total).map { LoadPlan.cycle[$0 % LoadPlan.cycle.count] }
        for room in rooms { room.begin(commands: commands, measureFrom: plan.warmupRounds, participants: plan.members) }
        let completed = waitFor(timeout: timeout) { $0.roomsFinished >= self.plan.rooms || $0.failed > 0 }
        var latencies: [UInt64] = []
        latencies.reserveCapacity(plan.rooms * plan.rounds)
        var firstStart = UInt64.max, lastEnd: UInt64 = 0, states = 0, frames = 0
        for room in rooms {
            let result = room.measurement
            latencies.append(contentsOf: result.latencies)
            if let start = result.measureStart {
                firstStart = min(firstStart, start.time)
                states += result.states - start.states
                frames += result.frames - start.frames
            }
            lastEnd = max(lastEnd, result.lastCompletion)
        }
        latencies.sort()
        let seconds = lastEnd > firstStart ? Double(lastEnd - firstStart) / 1_000_000_000 : 0
        return RoundResults(latencies: latencies, stateDeliveries: states, frames: frames, seconds: seconds,
                            completed: completed && counters.failed == 0 && latencies.count == plan.rooms * plan.rounds)
    }

    /// Closes every connection and stops the service threads, waiting at most
    /// `timeout` seconds. True when everything stopped in time.
    public func closeAll(timeout: Double) -> Bool {
        lock.withLock { closing = true }
        let stopped = DispatchSemaphore(value: 0)
        let contexts = self.contexts
        let thread = Thread {
            for clients in contexts { clients.shutdown() }
            stopped.signal()
        }
        thread.start()
        return stopped.wait(timeout: .now() + timeout) == .success
    }

    /// Polls the counters until `condition` holds or `timeout` passes.
    private func waitFor(timeout: Double, _ condition: (LoadProgress) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(counters) { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition(counters)
    }

    private func launch(room roomIndex: Int, member: Int) {
        let room = rooms[roomIndex]
        let global = roomIndex * plan.members + member
        let clients = contexts[min(contexts.count - 1, global / max(1, plan.connectionsPerContext))]
        var address = plan.server
        address.path = "/rooms/\(plan.roomPrefix)\(roomIndex)"
        address = address.adding("name", "m\(member)")
        let handlers = ClientHandlers(
            opened: { [self] in
                lock.withLock { progress.opened += 1 }
            },
            received: { text in room.received(text, from: member) },
            closed: { [self] info in
                lock.withLock {
                    guard !closing else { return }
                    progress.failed += 1
                    if progress.firstFailure == nil {
                        progress.firstFailure = "m\(member) of room \(roomIndex): "
                            + (info.code.map { "closed with \($0) \(info.reason)" } ?? info.reason)
                    }
                }
            })
        room.attach(clients.connect(address, encoding: plan.encoding, handlers: handlers), as: member)
    }

    // MARK: - Called from the service threads

    fileprivate func memberWelcomed() {
        lock.withLock { progress.welcomed += 1 }
    }

    fileprivate func roomFinished() {
        lock.withLock { progress.roomsFinished += 1 }
    }
}

/// One room's members as the load generator sees them. Its members may live on
/// different client contexts, so everything is behind `lock`.
final class BenchRoom: @unchecked Sendable {
    struct Measurement {
        var latencies: [UInt64]
        var measureStart: (time: UInt64, states: Int, frames: Int)?
        var lastCompletion: UInt64
        var states: Int
        var frames: Int
    }

    let memberCount: Int
    let encoding: ClientEncoding
    weak var generator: LoadGenerator?

    private let lock = NSLock()
    private var connections: [ClientConnection?]
    private var stateCount: [Int]
    /// The round in which each member last reached the target; 0 for none.
    private var reachedRound: [Int]
    private var frames = 0
    private var states = 0
    private var roomSeq = -1

    // The closed loop.
    private var commands: [String] = []
    private var measureFrom: Int?
    private var participants = 0
    private var nextCommand = 0
    private var round = 0
    private var roundActive = false
    private var baselineSeq = 0
    private var baselineCounts: [Int] = []
    private var completedMembers = 0
    private var sentAt: UInt64 = 0
    private var latencies: [UInt64] = []
    private var measureStart: (time: UInt64, states: Int, frames: Int)?
    private var lastCompletion: UInt64 = 0
    private var measuring = false

    init(members: Int, encoding: ClientEncoding, measured: Int) {
        self.memberCount = members
        self.encoding = encoding
        connections = Array(repeating: nil, count: members)
        stateCount = Array(repeating: 0, count: members)
        reachedRound = Array(repeating: 0, count: members)
        latencies.reserveCapacity(measured)
    }

    var counters: (frames: Int, states: Int) { lock.withLock { (frames, states) } }

    var measurement: Measurement {
        lock.withLock {
            Measurement(latencies: latencies, measureStart: measureStart, lastCompletion: lastCompletion,
                        states: states, frames: frames)
        }
    }

    func attach(_ connection: ClientConnection, as member: Int) {
        lock.withLock { connections[member] = connection }
    }

    /// Starts a closed loop of `commands`: each is sent when the previous one has
    /// reached every member. Commands from index `measureFrom` on are measured; a round is complete when
    /// the first `participants` members have its state.
    func begin(commands: [String], measureFrom: Int?, participants: Int) {
        let first = lock.withLock { () -> (ClientConnection, String)? in
            self.commands = commands
            self.participants = min(participants, memberCount)
            self.measureFrom = measureFrom
            nextCommand = 0
            measuring = false
            return prepareNext(now: Self.now())
        }
        if let (connection, command) = first { connection.send(command) }
    }

    /// Arms the next round and returns what to send, or nil when the loop is over.
    /// Called with `lock` held.
    private func prepareNext(now: UInt64) -> (ClientConnection, String)? {
        guard nextCommand < commands.count, let controller = connections[0] else {
            roundActive = false
            return nil
        }
        let command = commands[nextCommand]
        if nextCommand == measureFrom && !measuring {
            measuring = true
            measureStart = (now, states, frames)
        }
        nextCommand += 1
        round += 1
        roundActive = true
        completedMembers = 0
        baselineSeq = roomSeq
        if encoding == .text { baselineCounts = stateCount }
        sentAt = now
        return (controller, command)
    }

    func received(_ text: String, from member: Int) {
        let seq = Self.stateSeq(text, encoding: encoding)
        var welcomed = false, finished = false
        let next = lock.withLock { () -> (ClientConnection, String)? in
            frames += 1
            guard let seq else { return nil }
            states += 1
            stateCount[member] += 1
            if stateCount[member] == 1 { welcomed = true }
            if seq > roomSeq { roomSeq = seq }
            guard roundActive, member < participants, reachedRound[member] != round else { return nil }
            let reached = encoding == .json ? seq > baselineSeq : stateCount[member] > baselineCounts[member]
            guard reached else { return nil }
            reachedRound[member] = round
            completedMembers += 1
            guard completedMembers == participants else { return nil }
            let now = Self.now()
            if measuring { latencies.append(now - sentAt) }
            lastCompletion = now
            guard let next = prepareNext(now: now) else {
                finished = true
                return nil
            }
            return next
        }
        if let (connection, command) = next { connection.send(command) }
        if welcomed { generator?.memberWelcomed() }
        if finished { generator?.roomFinished() }
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// The `seq` of a `state` event, or nil for any other frame. In the text
    /// encoding, where states carry no number, every state line counts as 0.
    static func stateSeq(_ text: String, encoding: ClientEncoding) -> Int? {
        var text = text
        return text.withUTF8 { bytes -> Int? in
            switch encoding {
            case .json: return jsonStateSeq(bytes)
            case .text: return textIsState(bytes) ? 0 : nil
            }
        }
    }

    private static let typeState = Array(#""type":"state""#.utf8)
    private static let seqKey = Array(#""seq":"#.utf8)

    /// The server writes `type` first and `seq` right after it; other layouts are
    /// found by a scan.
    static func jsonStateSeq(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let typeAt = find(typeState, in: bytes, from: 0) else { return nil }
        let afterType = typeAt + typeState.count
        guard let seqAt = find(seqKey, in: bytes, from: afterType) ?? find(seqKey, in: bytes, from: 0) else { return nil }
        var index = seqAt + seqKey.count
        var value = 0, digits = 0
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, digits < 18 {
            value = value * 10 + Int(bytes[index] - 0x30)
            index += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// `= paused ...`, `= playing ...`, `= waiting ...`, `= nothing is playing ...`,
    /// `= the session ended ...`; not the `= time ...` answer (the bench sends no
    /// informational commands, so no other `= ` line arrives).
    static func textIsState(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "="), bytes[1] == UInt8(ascii: " ") else { return false }
        let time = Array("= time ".utf8)
        if bytes.count >= time.count && zip(time, bytes).allSatisfy({ $0 == $1 }) { return false }
        return true
    }

    private static func find(_ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let first = needle.first, bytes.count >= needle.count else { return nil }
        var index = start
        let last = bytes.count - needle.count
        while index <= last {
            if bytes[index] == first {
                var match = true
                for offset in 1..<needle.count where bytes[index + offset] != needle[offset] {
                    match = false
                    break
                }
                if match { return index }
            }
            index += 1
        }
        return nil
    }
}
