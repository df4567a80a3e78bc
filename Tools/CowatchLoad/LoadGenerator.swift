import CowatchClient
import CowatchTime
import Foundation

/// Opens every member connection of every room over one or more client contexts,
/// then drives the rooms' controllers in phases of commands: a closed loop per
/// room, or a fixed schedule sent from the calling thread. Idle connections, in
/// rooms of their own, are opened and then left alone.
public final class LoadGenerator: @unchecked Sendable {
    public let plan: LoadPlan
    private let contexts: [WebSocketClients]
    /// The rooms that take part (`plan.rooms` of them), then the idle rooms.
    private let rooms: [BenchRoom]

    private let lock = NSLock()
    private var progress = LoadProgress()
    private var closing = false
    /// Commands each room has been given so far, so that the turns carry on
    /// from the warm-up into the measured phase.
    private var commandsIssued = 0

    public init(plan: LoadPlan) throws {
        self.plan = plan
        var contexts: [WebSocketClients] = []
        for _ in 0..<plan.contexts { contexts.append(try WebSocketClients(trust: nil)) }
        self.contexts = contexts
        var rooms: [BenchRoom] = []
        let onFirstServer: ((Int) -> Bool)? = plan.relays ? { plan.serverIndex(room: 0, member: $0) == 0 } : nil
        for _ in 0..<plan.rooms {
            rooms.append(BenchRoom(members: plan.members, encoding: plan.encoding, reading: plan.frameReading,
                                   players: plan.players, onFirstServer: onFirstServer))
        }
        for index in 0..<plan.idleRooms {
            let size = min(plan.idleRoomSize, plan.idleConnections - index * plan.idleRoomSize)
            rooms.append(BenchRoom(members: size, encoding: plan.encoding, reading: plan.frameReading))
        }
        self.rooms = rooms
        for room in rooms { room.generator = self }
    }

    /// The counters, with the frames summed over every room.
    public var snapshot: LoadProgress {
        var copy = counters
        copy.frames = rooms.reduce(0) { $0 + $1.frameCount }
        return copy
    }

    /// The counters kept here, without the per-room sums: cheap to poll.
    private var counters: LoadProgress { lock.withLock { progress } }

    /// Opens members `members` of every room that takes part; see `open(_:timeout:)`.
    public func open(members: Range<Int>, timeout: Double) -> Double? {
        // Member-major, so that every room fills at the same pace.
        var pending: [(room: Int, member: Int)] = []
        pending.reserveCapacity(plan.rooms * members.count)
        for member in members {
            for room in 0..<plan.rooms { pending.append((room, member)) }
        }
        return open(pending, timeout: timeout)
    }

    /// Opens the idle connections; see `open(_:timeout:)`.
    public func openIdle(timeout: Double) -> Double? {
        var pending: [[(room: Int, member: Int)]] = [[]]
        pending[0].reserveCapacity(plan.idleConnections)
        for member in 0..<plan.idleRoomSize {
            // With several servers, each room's first member is welcomed before
            // the others connect: its server owns the room.
            if member == 1 && plan.servers.count > 1 { pending.append([]) }
            for room in plan.rooms..<rooms.count where member < rooms[room].memberCount {
                pending[pending.count - 1].append((room, member))
            }
        }
        var seconds = 0.0
        for batch in pending where !batch.isEmpty {
            guard let took = open(batch, timeout: max(0.1, timeout - seconds)) else { return nil }
            seconds += took
        }
        return seconds
    }

    /// Opens the `pending` members, at most `connectWindow` at a time and
    /// `connectRate` per second, and waits until each has its welcome and first
    /// state, or one failed, or `timeout` passed. Returns the seconds it took, or nil.
    private func open(_ pending: [(room: Int, member: Int)], timeout: Double) -> Double? {
        let started = Date()
        let deadline = started.addingTimeInterval(timeout)
        let base = lock.withLock { progress.opened + progress.failed }
        let target = counters.welcomed + pending.count
        var next = 0
        while Date() < deadline {
            let current = counters
            if current.welcomed >= target || current.failed > 0 { break }
            let settled = current.opened + current.failed - base
            var allowed = min(pending.count, settled + max(1, plan.connectWindow))
            if plan.connectRate > 0 {
                allowed = min(allowed, Int(Date().timeIntervalSince(started) * plan.connectRate) + 1)
            }
            while next < allowed {
                launch(room: pending[next].room, member: pending[next].member)
                next += 1
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
        for room in rooms.prefix(plan.rooms) { room.begin(commands: [LoadPlan.opening], closedLoop: true, participants: 1) }
        return waitFor(timeout: timeout) { $0.roomsFinished >= self.plan.rooms || $0.failed > 0 }
            && counters.failed == 0
    }

    /// Sends `rounds` commands in every room that takes part, on the plan's
    /// schedule, and waits until each has reached every member of its room or
    /// `timeout` passes. The warm-up is one phase, the measurement the next.
    public func runPhase(rounds: Int, timeout: Double) -> PhaseResults {
        let deadline = SystemClock.monotonicNanoseconds() + UInt64(timeout * 1_000_000_000)
        let refusedBefore = lock.withLock { () -> Int in
            progress.roomsFinished = 0
            return progress.refusals
        }
        // A refused command brings no state, after which states would be paired
        // with the wrong commands: the phase stops there.
        let stop = { (progress: LoadProgress) in progress.failed > 0 || progress.refusals > refusedBefore }
        let commands = plan.commands(commandsIssued..<(commandsIssued + rounds))
        commandsIssued += rounds
        let active = rooms.prefix(plan.rooms)
        var lag: UInt64 = 0
        // A fixed schedule's phase lasts its rounds' intervals, the last one included.
        var scheduleEnd: UInt64?
        switch plan.schedule {
        case .closed:
            for room in active { room.begin(commands: commands, closedLoop: true, participants: plan.members) }
        case let .fixed(interval, staggered):
            for room in active { room.begin(commands: commands, closedLoop: false, participants: plan.members) }
            let sent = sendOnSchedule(rounds: rounds, interval: interval, staggered: staggered, deadline: deadline, stop: stop)
            lag = sent.lag
            scheduleEnd = sent.start + UInt64(Double(rounds) * interval * 1_000_000_000)
        }
        let remaining = Double(deadline &- min(deadline, SystemClock.monotonicNanoseconds())) / 1_000_000_000
        let finished = waitFor(timeout: remaining) { $0.roomsFinished >= self.plan.rooms || stop($0) }
        // The rest of the last interval, so that what the caller measures around
        // the phase (CPU) covers whole intervals: the server's idle time between
        // commands belongs to the workload.
        if finished, !stop(counters), let scheduleEnd { SystemClock.sleep(untilMonotonicNanoseconds: min(scheduleEnd, deadline)) }

        var members: [UInt64] = [], last: [UInt64] = []
        members.reserveCapacity(plan.rooms * rounds * plan.members)
        last.reserveCapacity(plan.rooms * rounds)
        var firstSend = UInt64.max, lastCompletion: UInt64 = 0, frames = 0, sent = 0, refusals = 0
        let split = plan.relays
        var groups: [[UInt64]] = split ? [[], []] : [], groupsLast: [[UInt64]] = split ? [[], []] : []
        for room in active {
            let outcome = room.outcome
            members.append(contentsOf: outcome.memberLatencies)
            last.append(contentsOf: outcome.lastMemberLatencies)
            if split {
                for group in 0..<2 {
                    groups[group].append(contentsOf: outcome.groupLatencies[group])
                    groupsLast[group].append(contentsOf: outcome.groupLastLatencies[group])
                }
            }
            if let first = outcome.firstSend { firstSend = min(firstSend, first) }
            lastCompletion = max(lastCompletion, outcome.lastCompletion)
            frames += outcome.frames
            sent += outcome.sent
            refusals += outcome.refusals
        }
        members.sort()
        last.sort()
        for group in groups.indices {
            groups[group].sort()
            groupsLast[group].sort()
        }
        var seconds = lastCompletion > firstSend ? Double(lastCompletion - firstSend) / 1_000_000_000 : 0
        if case let .fixed(interval, _) = plan.schedule { seconds = max(seconds, Double(rounds) * interval) }
        return PhaseResults(memberLatencies: members, lastMemberLatencies: last,
                            serverGroupLatencies: groups, serverGroupLastLatencies: groupsLast, commandsSent: sent,
                            commandsPlanned: plan.rooms * rounds, frames: frames, seconds: seconds,
                            scheduleLag: Double(lag) / 1_000_000_000, refusals: refusals,
                            completed: finished && counters.failed == 0 && refusals == 0
                                && last.count == plan.rooms * rounds)
    }

    /// The open loop: command k of room i goes at `start + k * interval`, plus
    /// `i / rooms * interval` when staggered, whether or not earlier ones have
    /// arrived. Returns when the schedule started and how late the latest send
    /// was, in nanoseconds.
    private func sendOnSchedule(rounds: Int, interval: Double, staggered: Bool, deadline: UInt64,
                                stop: (LoadProgress) -> Bool) -> (start: UInt64, lag: UInt64) {
        let step = UInt64(interval * 1_000_000_000)
        // A short lead, so that the first sends are not already late.
        let start = SystemClock.monotonicNanoseconds() + 5_000_000
        let active = rooms.prefix(plan.rooms)
        var lag: UInt64 = 0
        for round in 0..<rounds {
            for (index, room) in active.enumerated() {
                let offset = staggered ? step * UInt64(index) / UInt64(plan.rooms) : 0
                let due = start + UInt64(round) * step + offset
                SystemClock.sleep(untilMonotonicNanoseconds: due)
                let now = SystemClock.monotonicNanoseconds()
                if now > deadline || stop(counters) { return (start, lag) }
                lag = max(lag, max(now, due) - due)
                room.sendNext()
            }
        }
        return (start, lag)
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

    private func roomName(_ index: Int) -> String {
        index < plan.rooms ? "\(plan.roomPrefix)\(index)" : "\(plan.roomPrefix)idle-\(index - plan.rooms)"
    }

    private func launch(room roomIndex: Int, member: Int) {
        let room = rooms[roomIndex]
        let clients = contexts[min(contexts.count - 1, plan.context(room: roomIndex, member: member))]
        var address = plan.servers[plan.serverIndex(room: roomIndex, member: member)]
        address.path = "/rooms/\(roomName(roomIndex))"
        address.source = plan.sourceAddress(connection: roomIndex * plan.members + member)
        address = address.adding("name", "m\(member)")
        if plan.players && roomIndex < plan.rooms { address = address.adding("player", "1") }
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
                        progress.firstFailure = "m\(member) of room \(roomName(roomIndex)): "
                            + (info.code.map { "closed with \($0) \(info.reason)" } ?? info.reason)
                    }
                }
            })
        room.attach(clients.connect(address, encoding: plan.encoding, handlers: handlers), as: member)
    }

    // MARK: - Called from the service threads

    func memberWelcomed() {
        lock.withLock { progress.welcomed += 1 }
    }

    func roomFinished() {
        lock.withLock { progress.roomsFinished += 1 }
    }

    func commandRefused() {
        lock.withLock { progress.refusals += 1 }
    }
}
