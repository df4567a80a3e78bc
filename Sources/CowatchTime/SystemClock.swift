#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The one place the system's clocks are read. Everything else is given the
/// time: the core and the connection take `now` with every input, the gateway,
/// the clients, the bridge and the load generator read it here once per event
/// and pass it on.
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

    /// The monotonic clock in seconds, for the modules that speak seconds (the
    /// bridge, the terminal client, the cluster's leases, the desktop player).
    public static func monotonicSeconds() -> Double {
        Double(monotonicNanoseconds()) / 1e9
    }

    /// Sleeps until the monotonic clock reads `deadline` ns (at once if it has).
    public static func sleep(untilMonotonicNanoseconds deadline: UInt64) {
        var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
    }
}

/// Where a long-lived component (the gateway) reads the time: the system's
/// clocks, or, in tests, clocks that can be moved ahead at once (`SkippableTime`),
/// so that what takes minutes of waiting (a grace, an expiry) takes none.
public protocol TimeSource: Sendable {
    func now() -> ServerInstant
    func monotonic() -> MonotonicInstant
}

/// The system's clocks (`SystemClock`).
public struct SystemTime: TimeSource {
    public init() {}
    public func now() -> ServerInstant { SystemClock.now() }
    public func monotonic() -> MonotonicInstant { SystemClock.monotonic() }
}

/// The system's clocks, both moved ahead by what `skip` has added: time still
/// passes, and a test jumps over a wait instead of sleeping through it.
public final class SkippableTime: TimeSource, @unchecked Sendable {
    /// NSLock: what ThreadSanitizer sees (it reports false races on `Synchronization.Mutex`).
    private let lock = NSLock()
    private var skippedMicroseconds: Int64 = 0

    public init() {}

    /// Moves both clocks ahead by `seconds`.
    public func skip(seconds: Double) {
        lock.withLock { skippedMicroseconds += Int64((seconds * 1_000_000).rounded()) }
    }

    private var skipped: Int64 { lock.withLock { skippedMicroseconds } }

    public func now() -> ServerInstant {
        ServerInstant(milliseconds: SystemClock.now().milliseconds + skipped / 1000)
    }

    public func monotonic() -> MonotonicInstant {
        MonotonicInstant(microseconds: SystemClock.monotonic().microseconds + skipped)
    }
}
