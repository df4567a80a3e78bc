import CowatchCore
import CowatchCoreChecks
import Foundation
import SlashCommands
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Random sessions for `Room`: a seeded generator of member inputs, runs that
// minimise what they find, a watch for hangs and breadcrumbs for traps. Used by
// `RandomizedRoomTests`. The steps, the gateway simulation and the invariants are
// in the CowatchCoreChecks module, shared with the room fuzzer.
//
// Everything is deterministic for a given seed: the generator draws from its own
// SplitMix64, never from the system generator.

// MARK: - Random numbers

/// SplitMix64 (Steele, Lea and Flood): tiny, fast, and the same on every platform.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 0..<bound. The modulo bias is irrelevant for test input.
    mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next() % UInt64(bound))
    }

    mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.upperBound - range.lowerBound + 1)
    }

    mutating func int64(in range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / 9_007_199_254_740_992.0 < probability
    }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// An index into `weights`, chosen in proportion to the weights.
    mutating func weighted(_ weights: [Int]) -> Int {
        var roll = below(weights.reduce(0, +))
        for (index, weight) in weights.enumerated() {
            if roll < weight { return index }
            roll -= weight
        }
        return weights.count - 1
    }

    /// The seed of sequence `index` of a run started from `base`.
    static func derive(_ base: UInt64, _ index: Int) -> UInt64 {
        var generator = SplitMix64(seed: base ^ (UInt64(truncatingIfNeeded: index) &* 0xD1B5_4A32_D192_ED03))
        return generator.next()
    }
}

// MARK: - Generator

/// Draws the steps of one random session, looking at the driver only to choose
/// sensible speakers (connected slots) and connections (closed slots).
struct RandomSessionGenerator {
    struct Persona {
        var name: String?
        var player: Bool
        var join: Bool
    }

    var rng: SplitMix64
    let setup: RoomSetup
    var slotCount: Int { setup.slots }
    let personas: [Persona]
    let names: [String]

    init(seed: UInt64, byteHeavyNames: Bool) {
        rng = SplitMix64(seed: seed)
        names = Self.names + (byteHeavyNames ? Self.byteHeavyNames : [])
        let slotCount = rng.int(in: 3...8)
        var configuration = RoomConfiguration()
        if rng.chance(0.3) { configuration.maximumMembers = rng.int(in: 2...(slotCount + 2)) }
        if rng.chance(0.3) { configuration.maximumQueueLength = rng.int(in: 1...4) }
        if rng.chance(0.4) { configuration.resumeGrace = ServerInterval(milliseconds: rng.int64(in: 500...8_000)) }
        setup = RoomSetup(slots: slotCount, configuration: configuration)
        var personas: [Persona] = []
        for _ in 0..<slotCount {
            let name: String? = rng.chance(0.08) ? nil : rng.pick(names)
            personas.append(Persona(name: name, player: rng.chance(0.6), join: rng.chance(0.8)))
        }
        self.personas = personas
    }

    mutating func nextStep(_ driver: RoomDriver) -> RoomStep {
        let connected = driver.connectedSlots
        let offline = driver.offlineSlots
        if connected.count < 2, !offline.isEmpty, rng.chance(0.7) {
            return connect(rng.pick(offline), driver)
        }
        switch rng.below(1000) {
        case 0..<760 where !connected.isEmpty:
            let slot = rng.pick(connected)
            // Idle rooms exercise little: share something more often.
            if driver.room.state.playback.status == .idle, rng.chance(0.2) {
                return .message(slot: slot, text: rng.chance(0.8) ? "/watch " + mediaItem() : "/next")
            }
            return .message(slot: slot, text: line(for: slot))
        case 760..<790 where !connected.isEmpty:
            let slot = rng.pick(connected)
            let count = rng.int(in: 2...4)
            return .message(slot: slot, text: (0..<count).map { _ in line(for: slot) }.joined(separator: "\n"))
        case 790..<890:
            return advance()
        case 890..<915 where !connected.isEmpty:
            return .disconnect(slot: rng.pick(connected))
        case 915..<950 where !offline.isEmpty:
            return connect(rng.pick(offline), driver)
        case 950..<955 where !connected.isEmpty:
            return connect(rng.pick(connected), driver, duplicate: true)
        case 955..<980:
            let milliseconds: Int64 = switch rng.below(10) {
            case 0: rng.pick([-50, 0, 5_000, 60_000, Int64.max / 4])
            case 1...5: rng.int64(in: 0...120)
            default: rng.int64(in: 100...2_500)
            }
            return .measure(slot: rng.below(slotCount), milliseconds: milliseconds)
        case 980..<990:
            return .refireRetiredTimer(pick: rng.below(1_000))
        case 990..<995:
            return .ghostLine(text: line(for: 0))
        default:
            return advance()
        }
    }

    private mutating func connect(_ slot: Int, _ driver: RoomDriver, duplicate: Bool = false) -> RoomStep {
        let persona = personas[slot]
        let name = rng.chance(0.8) ? persona.name : (rng.chance(0.1) ? nil : rng.pick(names))
        let player = rng.chance(0.85) ? persona.player : !persona.player
        let resume: RoomStep.Resume
        if duplicate || (driver.slots[slot].token != nil && rng.chance(0.75)) {
            resume = .own
        } else if rng.chance(0.1) {
            resume = .slot(rng.below(slotCount))
        } else {
            resume = rng.chance(0.15) ? .garbage : .none
        }
        return .connect(slot: slot, name: name, player: player, join: persona.join, resume: resume)
    }

    private mutating func advance() -> RoomStep {
        let milliseconds: Int64 = switch rng.below(20) {
        case 0: 0
        case 1...8: rng.int64(in: 1...250)
        case 9...14: rng.int64(in: 250...2_000)
        case 15...18: rng.int64(in: 2_000...8_000)
        default: rng.int64(in: 8_000...75_000)
        }
        let lateness: Int64 = rng.chance(0.3) ? rng.int64(in: 1...400) : 0
        return .advance(milliseconds: milliseconds, lateness: lateness)
    }

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private mutating func line(for slot: Int) -> String {
        let player = personas[slot].player
        let weights = [
            player ? 16 : 2, // 0 ready
            8, // 1 play
            4, // 2 pause
            6, // 3 seek
            3, // 4 rate
            4, // 5 watch
            3, // 6 queue
            2, // 7 next
            1, // 8 end
            2, // 9 join
            2, // 10 leave
            4, // 11 suspend
            4, // 12 resume
            2, // 13 catchup
            player ? 4 : 1, // 14 buffering
            player ? 3 : 1, // 15 ended
            2, // 16 autoplay
            2, // 17 player
            3, // 18 policy
            3, // 19 op / deop / kick
            1, // 20 nick
            3, // 21 chat and /me
            2, // 22 informational and malformed
        ]
        switch rng.weighted(weights) {
        case 0:
            return "/ready " + rng.pick(["{seq}", "{seq}", "{seq}", "{seq}", "{seq}", "{seq}", "{seq-1}", "{seq-2}",
                                         "{seq-10}", "{seq+1}", "{seq+100}", "0", "1", "999999999999999999",
                                         "9999999999999999999", "-1", "x", ""])
        case 1:
            return rng.pick(["/play", "/play", "/play", "/play now", "/play now", "/PLAY Now", "/play  now ", "/play later"])
        case 2:
            return rng.pick(["/pause", "/pause", "/pause", "/pause now"])
        case 3:
            return "/seek " + rng.pick(["0", "5", "95", "95.5", "1:35", "1:01:35", "999999", "+10", "-10", "+0", "-0",
                                        "+999999", "-999999", "+1:30", "-1:01:35", "0.001", "59:59", "1:60", "abc",
                                        "", "1000000", "+5.5", "-3.25", "12:34:56", "-0.0005", "+277:46:39"])
        case 4:
            return "/rate " + rng.pick(["1", "1.5", "2", "0.25", "4", "4x", "0.5X", "0.24", "4.001", "0", "5", "-1",
                                        "1e2", "nan", "inf", "1.2345678", "3.999", "0.250"])
        case 5:
            return "/watch " + mediaItem()
        case 6:
            return rng.chance(0.3) ? "/queue" : "/queue " + mediaItem()
        case 7:
            return rng.pick(["/next", "/next", "/next", "/next now"])
        case 8:
            return rng.pick(["/end", "/end", "/end please"])
        case 9:
            return rng.pick(["/join", "/join", "/join", "/JOIN", "/join now"])
        case 10:
            return rng.pick(["/leave", "/leave", "/leave", "/leave now"])
        case 11:
            return rng.chance(0.25) ? "/suspend" : "/suspend " + reason()
        case 12:
            switch rng.below(8) {
            case 0, 1: return "/resume"
            case 2, 3: return "/resume " + reason()
            case 4, 5: return "/resume at " + time()
            case 6: return "/resume \(reason()) at \(time())"
            default: return rng.pick(["/resume at", "/resume at abc", "/resume stallRecovery extra", "/resume AT 5", "/resume x at 1 2"])
            }
        case 13:
            return "/catchup" + rng.pick(["", "", " 5", " 10", " 0.5", " 600", " 601", " 0", " -5", " 9999", " 0.001", " 3.25"])
        case 14:
            return rng.pick(["/buffering", "/buffering", "/buffering", "/buffering now"])
        case 15:
            return "/ended " + rng.pick(["{seq}", "{seq}", "{seq}", "{seq-1}", "{seq-3}", "{seq+1}", "0", "abc"])
        case 16:
            return "/autoplay " + rng.pick(["on", "on", "off", "yes", "no", "maybe", ""])
        case 17:
            return "/player " + rng.pick(["on", "off", "1", "0", "maybe"])
        case 18:
            return "/policy" + rng.pick(["", " control hosts", " control everyone", " control everyone", " stall wait",
                                         " stall continue", " wait 0", " wait 0.5", " wait 2", " wait 300", " wait 301",
                                         " wait -1", " control hosts stall wait wait 0", " stall wait wait 1",
                                         " wait 0 wait 3", " bogus x", " control", " CONTROL Hosts"])
        case 19:
            let command = rng.pick(["/op", "/op", "/op", "/deop", "/deop", "/kick"])
            let target = rng.pick(["{name:\(rng.below(slotCount))}", "{name:\(rng.below(slotCount))}",
                                   "{NAME:\(rng.below(slotCount))}", "{name:\(slot)}", "nobody", ""])
            return target.isEmpty ? command : "\(command) \(target)"
        case 20:
            return "/nick " + (rng.chance(0.9) ? rng.pick(names) : rng.pick(["", "two words", String(repeating: "n", count: 33)]))
        case 21:
            let text = rng.pick(Self.chat)
            return rng.chance(0.2) ? "/me " + text : text
        default:
            return rng.pick(["/time 1700000000000", "/time -5.5", "/time 12345678901234567", "/time abc", "/who",
                             "/status", "/status", "/help", "/help seek", "/help /play", "/help nope", "/nope", "/",
                             "", "   ", "//", "//play", "/who now", "/queue", "/policy"])
        }
    }

    private mutating func mediaItem() -> String {
        let url = rng.pick(["https://example.org/a.mp4", "https://example.org/a.mp4", "https://example.org/b.mp4",
                            "https://example.org/b.mp4", "http://example.org/c.mp4?x=1#t", "https://EXAMPLE.org/a.mp4",
                            "https://user@example.org/v.mp4", "https://example.org/", "ftp://example.org/x",
                            "https://", "http://:80/x", "notaurl"])
        let title = rng.pick(["", "", "", " Episode 1", " Episode 1", " \"quoted\" \\ title", " 🎬 Movie night",
                              " " + String(repeating: "t", count: 201), " line\u{2028}break"])
        return url + title
    }

    private mutating func reason() -> String {
        rng.pick(["stallRecovery", "audioSessionInterrupted", "playingInterstitial", "coordinatedPlaybackNotPossible",
                  "userActionRequired", "userIsChangingCurrentTime", "catchup", "custom.reason-1", "bad!reason"])
    }

    private mutating func time() -> String {
        rng.pick(["0", "30", "95.5", "1:35", "+10", "-10", "-999999", "+999999", "abc"])
    }

    static let names = [
        "alice", "Alice", "bob", "BOB", "carol", "dave", "guest", "guest-2", "émile", "e\u{301}mile", "李雷", "🙂",
        "zoë", String(repeating: "x", count: 32), "a-very-long-name-with-32-chars-x", "o'brien", "\"quoted\"",
        "back\\slash", "名前-2", "has space", "", "\u{202E}evil", String(repeating: "y", count: 33),
        String(repeating: "😀", count: 32),
    ]

    /// Names at the 128-byte limit made of few characters (combining marks), where
    /// a `-2` suffix would push the name past the byte limit.
    static let byteHeavyNames = [
        String(repeating: "a\u{301}\u{301}\u{301}", count: 18) + "ab",
        String(repeating: "o\u{308}\u{308}\u{308}", count: 18) + "cd",
    ]

    static let chat = [
        "hello", "  spaced out  ", "tab\there", "quote \" and backslash \\", "emoji 🎬🍿", "rtl \u{202E}olleh",
        "line\u{2028}separator", "para\u{2029}graph", "//not a command", "<script>alert(1)</script>",
        "{\"type\":\"state\",\"seq\":999}", "carriage return\r", "nul\u{0}byte", "escape \u{1B}[31mred",
        "del\u{7F}", "c1 \u{85} next line", String(repeating: "long ", count: 1_000),
    ]
}

// MARK: - Runs

/// What a run found: each distinct invariant's first violation, minimised.
struct RandomRunReport: Sendable {
    var sequences = 0
    var steps = 0
    var findings: [String] = []
    var invariants: Set<String> = []
}

/// Shared between the worker thread and the test, which watches for a step that
/// never returns (a hang is as much a failure as a trap).
///
/// A step is judged by the processor time the worker spends on it where the
/// platform can tell (Linux), so a worker starved by a busy machine is not taken
/// for a hung one; elsewhere by wall-clock time.
final class RandomRunMonitor: @unchecked Sendable {
    private let lock = NSLock()
    /// Added to the replay hint, e.g. ` COWATCH_RANDOM_HEAVY=1`.
    private let replayEnvironment: String

    init(replayEnvironment: String = "") {
        self.replayEnvironment = replayEnvironment
    }

    private var stepSerial: UInt64 = 0
    private var stepRunning = false
    private var sequenceSeed: UInt64 = 0
    private var stepIndex = 0
    private var steps: [RoomStep] = []
    private var setup = RoomSetup(slots: 0, configuration: RoomConfiguration())
    private var report: RandomRunReport?
    /// The step the watcher last saw running, and the worker's clocks then.
    private var watched: (serial: UInt64, cpu: UInt64?, wall: UInt64)?
    #if os(Linux)
    private var workerClock: clockid_t?
    #endif
    /// This worker's slot in `CrashBreadcrumbs`.
    private var breadcrumb: Int?

    /// Call on the worker thread before its first step.
    func registerWorker() {
        let slot = CrashBreadcrumbs.register()
        lock.lock()
        breadcrumb = slot
        lock.unlock()
        #if os(Linux)
        var clock = clockid_t()
        if pthread_getcpuclockid(pthread_self(), &clock) == 0 {
            lock.lock(); defer { lock.unlock() }
            workerClock = clock
        }
        #endif
    }

    func beginSequence(seed: UInt64, setup: RoomSetup) {
        lock.lock(); defer { lock.unlock() }
        sequenceSeed = seed
        self.setup = setup
        steps.removeAll(keepingCapacity: true)
        if let breadcrumb {
            CrashBreadcrumbs.note(breadcrumb, message: "\nrandomized room: the room crashed in sequence seed \(RandomRoomRun.hex(seed)) "
                + "(replay with COWATCH_RANDOM_REPLAY=\(RandomRoomRun.hex(seed))\(replayEnvironment)) at step ")
        }
    }

    func beginStep(_ index: Int, _ step: RoomStep, record: Bool) {
        lock.lock(); defer { lock.unlock() }
        stepSerial &+= 1
        stepRunning = true
        stepIndex = index
        if record { steps.append(step) }
        if let breadcrumb { CrashBreadcrumbs.note(breadcrumb, step: index + 1) }
    }

    func endStep() {
        lock.lock(); defer { lock.unlock() }
        stepRunning = false
    }

    func finish(_ report: RandomRunReport) {
        lock.lock(); defer { lock.unlock() }
        self.report = report
        stepRunning = false
        if let breadcrumb { CrashBreadcrumbs.release(breadcrumb) }
        breadcrumb = nil
    }

    var finished: RandomRunReport? {
        lock.lock(); defer { lock.unlock() }
        return report
    }

    /// The worker's processor time in nanoseconds, where the platform tells.
    private func workerProcessorTime() -> UInt64? {
        #if os(Linux)
        guard let workerClock else { return nil }
        var time = timespec()
        guard clock_gettime(workerClock, &time) == 0 else { return nil }
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        #else
        return nil
        #endif
    }

    /// Called periodically by the watcher: a description of the current step if it
    /// has used more than `processorSeconds` of processor time (or, where that
    /// cannot be measured, `wallSeconds` of wall-clock time) without returning.
    func hungStep(processorSeconds: Double, wallSeconds: Double) -> String? {
        lock.lock(); defer { lock.unlock() }
        guard stepRunning else {
            watched = nil
            return nil
        }
        let wall = DispatchTime.now().uptimeNanoseconds
        let cpu = workerProcessorTime()
        guard let seen = watched, seen.serial == stepSerial else {
            watched = (stepSerial, cpu, wall)
            return nil
        }
        let limit: String
        if let cpu, let seenCPU = seen.cpu {
            guard Double(cpu &- seenCPU) / 1e9 > processorSeconds else { return nil }
            limit = "after \(NumberText.decimal(processorSeconds, places: 1)) s of processor time"
        } else {
            guard Double(wall &- seen.wall) / 1e9 > wallSeconds else { return nil }
            limit = "within \(NumberText.decimal(wallSeconds, places: 1)) s"
        }
        var text = "HANG: a step did not return \(limit) (invariant: no input traps or hangs the room)\n"
        text += "  sequence seed \(RandomRoomRun.hex(sequenceSeed)), \(setup), step \(stepIndex + 1)\n"
        text += "  steps so far (replay with COWATCH_RANDOM_REPLAY=\(RandomRoomRun.hex(sequenceSeed))\(replayEnvironment)):\n"
        for (index, step) in steps.enumerated() { text += "  \(index + 1). \(step)\n" }
        return text
    }
}

/// A trap in the room kills the test process before any report is printed, so
/// each worker leaves a breadcrumb (its sequence seed and step) that a signal
/// handler writes to standard error before handing the signal to the handler that
/// was there before (the Swift runtime's backtracer, or the default).
enum CrashBreadcrumbs {
    static let capacity = 64
    static let messageBytes = 256
    private static let lock = NSLock()
    private nonisolated(unsafe) static let used: UnsafeMutablePointer<Bool> = {
        let pointer = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
        pointer.initialize(repeating: false, count: capacity)
        return pointer
    }()
    private nonisolated(unsafe) static let threads = UnsafeMutablePointer<pthread_t>.allocate(capacity: capacity)
    private nonisolated(unsafe) static let steps: UnsafeMutablePointer<Int> = {
        let pointer = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        pointer.initialize(repeating: 0, count: capacity)
        return pointer
    }()
    private nonisolated(unsafe) static let lengths: UnsafeMutablePointer<Int> = {
        let pointer = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        pointer.initialize(repeating: 0, count: capacity)
        return pointer
    }()
    private nonisolated(unsafe) static let messages: UnsafeMutablePointer<UInt8> = {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * messageBytes)
        pointer.initialize(repeating: 0, count: capacity * messageBytes)
        return pointer
    }()
    /// The actions in place before ours, by signal number.
    nonisolated(unsafe) static let previous: UnsafeMutablePointer<sigaction> = {
        let pointer = UnsafeMutablePointer<sigaction>.allocate(capacity: 64)
        pointer.initialize(repeating: sigaction(), count: 64)
        return pointer
    }()
    static let signals: [Int32] = [SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGBUS, SIGSEGV]
    private static let installed: Bool = {
        for signal in signals {
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = randomRoomCrashHandler
            #else
            action.__sigaction_u.__sa_handler = randomRoomCrashHandler
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            _ = sigaction(signal, &action, previous + Int(signal))
        }
        return true
    }()

    /// A slot for the calling thread; installs the handler on first use.
    static func register() -> Int? {
        _ = installed
        lock.lock(); defer { lock.unlock() }
        guard let slot = (0..<capacity).first(where: { !used[$0] }) else { return nil }
        (threads + slot).initialize(to: pthread_self())
        steps[slot] = 0
        lengths[slot] = 0
        used[slot] = true
        return slot
    }

    static func release(_ slot: Int) {
        lock.lock(); defer { lock.unlock() }
        used[slot] = false
    }

    static func note(_ slot: Int, message: String) {
        let bytes = Array(message.utf8.prefix(messageBytes))
        lengths[slot] = 0
        for (index, byte) in bytes.enumerated() { messages[slot * messageBytes + index] = byte }
        lengths[slot] = bytes.count
    }

    static func note(_ slot: Int, step: Int) {
        steps[slot] = step
    }

    /// Runs in the signal handler: only async-signal-safe calls (write).
    static func report() {
        let me = pthread_self()
        for slot in 0..<capacity where used[slot] && pthread_equal(threads[slot], me) != 0 && lengths[slot] > 0 {
            _ = write(2, messages + slot * messageBytes, lengths[slot])
            var divisor = 1
            while divisor <= steps[slot] / 10 { divisor *= 10 }
            var rest = steps[slot]
            while divisor > 0 {
                var digit = UInt8(48 + rest / divisor)
                _ = write(2, &digit, 1)
                rest %= divisor
                divisor /= 10
            }
            var newline: UInt8 = 10
            _ = write(2, &newline, 1)
        }
    }
}

private func randomRoomCrashHandler(_ signal: Int32) {
    CrashBreadcrumbs.report()
    // Put the previous action back. Returning re-runs the faulting instruction (or
    // abort() raises again), which now reaches it.
    _ = sigaction(signal, CrashBreadcrumbs.previous + Int(signal), nil)
}

enum RandomRoomRun {
    struct Options: Sendable {
        var sequences: Int
        var steps: Int
        var byteHeavyNames = false
        /// Parse every `jsonEvery`-th frequent event back from JSON (1: all of them).
        var jsonEvery = 1
        /// Distinct invariants to report (each minimised) before the run stops.
        var maximumFindings = 4
    }

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16, uppercase: true) }

    /// Runs `options.sequences` sequences derived from `baseSeed`.
    static func run(baseSeed: UInt64, options: Options, monitor: RandomRunMonitor) -> RandomRunReport {
        var report = RandomRunReport()
        for index in 0..<options.sequences {
            let seed = SplitMix64.derive(baseSeed, index)
            let outcome = generate(seed: seed, options: options, tolerating: report.invariants, monitor: monitor)
            report.sequences += 1
            report.steps += outcome.steps.count
            guard let violation = outcome.violation, !report.invariants.contains(violation.invariant) else { continue }
            report.invariants.insert(violation.invariant)
            let minimal = minimise(outcome.steps, setup: outcome.setup, invariant: violation.invariant,
                                   options: options, monitor: monitor)
            report.findings.append(describe(violation, seed: seed, baseSeed: baseSeed, sequence: index,
                                            original: outcome.steps.count, minimal: minimal, setup: outcome.setup,
                                            options: options))
            if report.findings.count >= options.maximumFindings { break }
        }
        return report
    }

    /// Generates and runs one sequence, stopping at its first violation.
    static func generate(seed: UInt64, options: Options, tolerating tolerated: Set<String> = [],
                         monitor: RandomRunMonitor?, trace: Bool = false)
        -> (steps: [RoomStep], setup: RoomSetup, violation: InvariantViolation?, trace: [String]) {
        var generator = RandomSessionGenerator(seed: seed, byteHeavyNames: options.byteHeavyNames)
        var driver = RoomDriver(generator.setup, jsonEvery: options.jsonEvery)
        driver.tolerated = tolerated
        if trace { driver.trace = [] }
        monitor?.beginSequence(seed: seed, setup: generator.setup)
        var steps: [RoomStep] = []
        for index in 0..<options.steps {
            let step = generator.nextStep(driver)
            steps.append(step)
            if trace { driver.trace?.append("\(index + 1). \(step)") }
            monitor?.beginStep(index, step, record: true)
            driver.perform(step)
            monitor?.endStep()
            if driver.violation != nil { break }
        }
        return (steps, generator.setup, driver.violation, driver.trace ?? [])
    }

    /// Runs a fixed list of steps; returns the first violation and its step index.
    static func replay(_ steps: [RoomStep], setup: RoomSetup, focus: String? = nil, monitor: RandomRunMonitor?,
                       trace: Bool = false) -> (violation: InvariantViolation?, index: Int?, trace: [String]) {
        var driver = RoomDriver(setup, jsonEvery: 1)
        driver.focus = focus
        if trace { driver.trace = [] }
        for (index, step) in steps.enumerated() {
            if trace { driver.trace?.append("\(index + 1). \(step)") }
            monitor?.beginStep(index, step, record: false)
            driver.perform(step)
            monitor?.endStep()
            if let violation = driver.violation { return (violation, index, driver.trace ?? []) }
        }
        return (nil, nil, driver.trace ?? [])
    }

    /// Delta debugging: drops chunks of steps while the same invariant still breaks.
    static func minimise(_ steps: [RoomStep], setup: RoomSetup, invariant: String, options: Options,
                         monitor: RandomRunMonitor) -> [RoomStep] {
        func fails(_ candidate: [RoomStep]) -> Int? {
            let result = replay(candidate, setup: setup, focus: invariant, monitor: monitor)
            return result.violation?.invariant == invariant ? result.index : nil
        }
        guard var end = fails(steps) else { return steps }
        var current = Array(steps[...end])
        var chunk = max(1, current.count / 2)
        var attempts = 0
        while chunk >= 1 && attempts < 4_000 {
            var removedAny = false
            var start = 0
            while start < current.count && attempts < 4_000 {
                attempts += 1
                var candidate = current
                candidate.removeSubrange(start..<min(current.count, start + chunk))
                if let index = fails(candidate) {
                    end = index
                    current = Array(candidate[...index])
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny {
                if chunk == 1 { break }
                chunk /= 2
            }
        }
        return current
    }

    static func describe(_ violation: InvariantViolation, seed: UInt64, baseSeed: UInt64, sequence: Int,
                         original: Int, minimal: [RoomStep], setup: RoomSetup, options: Options) -> String {
        var text = "INVARIANT VIOLATED: \(violation.invariant)\n"
        text += "  \(violation.detail)\n"
        text += "  while handling: \(violation.input)\n"
        text += "  base seed \(hex(baseSeed)), sequence \(sequence), sequence seed \(hex(seed)) "
        text += "(replay with COWATCH_RANDOM_REPLAY=\(hex(seed))\(options.byteHeavyNames ? " COWATCH_RANDOM_HEAVY=1" : "")), "
        text += "failed at step \(original) of the sequence\n"
        text += "  minimal reproduction (\(minimal.count) steps, \(setup); {seq} is the room's seq when the line is sent):\n"
        let replayed = replay(minimal, setup: setup, focus: violation.invariant, monitor: nil, trace: true)
        for line in replayed.trace { text += "    \(line)\n" }
        return text
    }
}
