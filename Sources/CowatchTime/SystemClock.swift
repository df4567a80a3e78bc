#if canImport(Glibc)
import Glibc
#endif

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

    package static func monotonic() -> MonotonicInstant {
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
