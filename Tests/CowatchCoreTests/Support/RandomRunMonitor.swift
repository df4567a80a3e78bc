import CowatchCore
import CowatchCoreChecks
import Foundation
import SlashCommands
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The hang watch of the randomized room test (a step that never returns is as
// much a failure as a trap).

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
