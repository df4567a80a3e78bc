#if canImport(Glibc)
import CowatchConnection
import Glibc
#endif
import CowatchCore

/// The gateway's two clocks: wall time for the protocol (epoch milliseconds, what
/// `at` and `/time` speak), and a monotonic clock for measuring durations.
enum ServerClock {
    static func now() -> ServerInstant {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return ServerInstant(milliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    /// The monotonic clock, for timeouts, round trips and latencies.
    static func monotonic() -> MonotonicInstant {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return MonotonicInstant(microseconds: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000)
    }
}
