#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The one place the system's clocks are read. Everything else is given the
/// time: the core and the connection take `now` with every input, the gateway,
/// the clients, the bridge and the load generator read it from a `TimeSource`
/// once per event and pass it on.
///
/// Two clocks: wall time for the protocol (epoch milliseconds, what `at` and
/// `/time` speak) and the monotonic clock, which never jumps with the wall
/// clock, for timeouts, round trips, latencies, leases and schedules.
public enum SystemClock {
    public static func now() -> ServerInstant {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return ServerInstant(milliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    /// CLOCK_MONOTONIC in nanoseconds: the reading the others are made from.
    public static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    public static func monotonic() -> MonotonicInstant {
        MonotonicInstant(microseconds: Int64(monotonicNanoseconds() / 1000))
    }

    /// Sleeps until the monotonic clock reads `deadline` ns (at once if it has).
    public static func sleep(untilMonotonicNanoseconds deadline: UInt64) {
        var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
    }

    /// Sleeps for `span` of the monotonic clock (at once when it is not positive).
    public static func sleep(for span: MonotonicDuration) {
        guard span > .zero else { return }
        sleep(untilMonotonicNanoseconds: monotonicNanoseconds() + UInt64(span.microseconds) * 1000)
    }

    /// Waits on `condition` (whose lock the caller holds) until it is signalled
    /// or `span` has passed, whichever comes first; true when signalled.
    /// `NSCondition` only takes a wall-clock date, so the date is made here.
    public static func wait(on condition: NSCondition, for span: MonotonicDuration) -> Bool {
        condition.wait(until: Date(timeIntervalSinceNow: span.seconds))
    }

    /// Waits until `semaphore` is signalled or `span` has passed, whichever
    /// comes first; true when signalled.
    public static func wait(on semaphore: DispatchSemaphore, for span: MonotonicDuration) -> Bool {
        semaphore.wait(timeout: .now() + span.dispatchInterval) == .success
    }

    /// The wall clock as Foundation's `Date`, for what formats it (a log line's time).
    /// Finer than `now()`: to the nanosecond the system gives.
    public static func date() -> Date {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Date(timeIntervalSince1970: Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9)
    }
}

/// Where a long-lived component (the gateway, a client's runner, the bridge,
/// the cluster's leases) reads the time and sets its deadlines: the system's
/// clocks, or, in tests, clocks that can be moved ahead at once
/// (`SkippableTime`), so that what takes minutes of waiting (a grace, an
/// expiry, a timeout) takes none.
public protocol TimeSource: Sendable {
    func now() -> ServerInstant
    func monotonic() -> MonotonicInstant
    /// Runs `work` on `queue` once `delay` has passed on this source's monotonic
    /// clock: the one way a deadline is set, so that it moves with the clock.
    func schedule(after delay: MonotonicDuration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void)
}

extension TimeSource {
    /// The system's timer: a source whose clock only ever runs with the
    /// system's needs nothing else.
    public func schedule(after delay: MonotonicDuration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + delay.dispatchInterval, execute: work)
    }
}

extension MonotonicDuration {
    /// As Dispatch counts a delay; a negative span is no delay.
    public var dispatchInterval: DispatchTimeInterval {
        .microseconds(Int(Swift.max(0, Swift.min(microseconds, Int64(Int32.max) * 1_000_000))))
    }
}

/// The system's clocks (`SystemClock`).
public struct SystemTime: TimeSource {
    public init() {}
    public func now() -> ServerInstant { SystemClock.now() }
    public func monotonic() -> MonotonicInstant { SystemClock.monotonic() }
}

/// The system's clocks, both moved ahead by what `skip` has added: time still
/// passes, and a test jumps over a wait instead of sleeping through it. A
/// deadline set with `schedule` comes when the clocks reach it, by passing
/// time or by a skip, whichever is first, and runs once.
public final class SkippableTime: TimeSource, @unchecked Sendable {
    private struct Pending {
        var deadline: MonotonicInstant
        var queue: DispatchQueue
        var work: @Sendable () -> Void
    }

    /// NSLock: what ThreadSanitizer sees (it reports false races on `Synchronization.Mutex`).
    private let lock = NSLock()
    private var skippedMicroseconds: Int64 = 0
    private var pending: [UInt64: Pending] = [:]
    private var nextTimer: UInt64 = 0

    public init() {}

    /// Moves both clocks ahead by `span`, and runs the deadlines it passes.
    public func skip(_ span: MonotonicDuration) {
        let due = lock.withLock { () -> [Pending] in
            skippedMicroseconds += span.microseconds
            let reached = SystemClock.monotonic().microseconds + skippedMicroseconds
            let passed = pending.filter { $0.value.deadline.microseconds <= reached }
            for key in passed.keys { pending[key] = nil }
            return passed.sorted { $0.key < $1.key }.map(\.value)
        }
        for timer in due { timer.queue.async(execute: timer.work) }
    }

    private var skipped: Int64 { lock.withLock { skippedMicroseconds } }

    public func now() -> ServerInstant {
        ServerInstant(milliseconds: SystemClock.now().milliseconds + skipped / 1000)
    }

    public func monotonic() -> MonotonicInstant {
        MonotonicInstant(microseconds: SystemClock.monotonic().microseconds + skipped)
    }

    /// Deadlines set and not yet come, so that a test can wait for one to be set.
    public var pendingDeadlines: Int { lock.withLock { pending.count } }

    public func schedule(after delay: MonotonicDuration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        let timer = lock.withLock { () -> UInt64 in
            nextTimer += 1
            let deadline = MonotonicInstant(microseconds: SystemClock.monotonic().microseconds + skippedMicroseconds) + delay
            pending[nextTimer] = Pending(deadline: deadline, queue: queue, work: work)
            return nextTimer
        }
        // Time passing alone brings the deadline too: the clock never runs slower than the system's.
        queue.asyncAfter(deadline: .now() + delay.dispatchInterval) { [self] in
            let due = lock.withLock { pending.removeValue(forKey: timer) }
            due?.work()
        }
    }
}
