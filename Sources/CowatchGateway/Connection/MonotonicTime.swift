/// A point on the monotonic clock, which never jumps with the wall clock: what
/// timeouts, pings and rates are measured against. Its origin is arbitrary, so
/// only differences between instants mean anything.
struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    let microseconds: Int64

    init(microseconds: Int64) { self.microseconds = microseconds }

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.microseconds < rhs.microseconds }

    static func + (instant: Self, span: MonotonicDuration) -> Self {
        Self(microseconds: instant.microseconds &+ span.microseconds)
    }

    static func - (later: Self, earlier: Self) -> MonotonicDuration {
        MonotonicDuration(microseconds: later.microseconds &- earlier.microseconds)
    }

    var description: String { "t+\(microseconds)µs" }
}

/// A length of monotonic time, microsecond precision.
struct MonotonicDuration: Comparable, Hashable, Sendable, CustomStringConvertible {
    let microseconds: Int64

    init(microseconds: Int64) { self.microseconds = microseconds }

    static func seconds(_ seconds: Double) -> Self {
        Self(microseconds: Int64((seconds * 1_000_000).rounded()))
    }

    static func milliseconds(_ milliseconds: Int64) -> Self { Self(microseconds: milliseconds * 1000) }

    static let zero = Self(microseconds: 0)

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.microseconds < rhs.microseconds }

    static func + (lhs: Self, rhs: Self) -> Self { Self(microseconds: lhs.microseconds &+ rhs.microseconds) }

    var seconds: Double { Double(microseconds) / 1_000_000 }

    /// Whole milliseconds, rounded up so that a measured round trip is never zero.
    var roundedUpMilliseconds: Int64 { (microseconds + 999) / 1000 }

    var description: String { "\(microseconds)µs" }
}
