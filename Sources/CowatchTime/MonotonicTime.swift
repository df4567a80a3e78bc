/// A point on the monotonic clock, which never jumps with the wall clock: what
/// timeouts, pings and rates are measured against. Its origin is arbitrary, so
/// only differences between instants mean anything.
package struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    package let microseconds: Int64

    package init(microseconds: Int64) { self.microseconds = microseconds }

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.microseconds < rhs.microseconds }

    package static func + (instant: Self, span: MonotonicDuration) -> Self {
        Self(microseconds: instant.microseconds &+ span.microseconds)
    }

    package static func - (later: Self, earlier: Self) -> MonotonicDuration {
        MonotonicDuration(microseconds: later.microseconds &- earlier.microseconds)
    }

    package var description: String { "t+\(microseconds)µs" }
}

/// A length of monotonic time, microsecond precision.
package struct MonotonicDuration: Comparable, Hashable, Sendable, CustomStringConvertible {
    package let microseconds: Int64

    package init(microseconds: Int64) { self.microseconds = microseconds }

    package static func seconds(_ seconds: Double) -> Self {
        Self(microseconds: Int64((seconds * 1_000_000).rounded()))
    }

    package static func milliseconds(_ milliseconds: Int64) -> Self { Self(microseconds: milliseconds * 1000) }

    package static let zero = Self(microseconds: 0)

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.microseconds < rhs.microseconds }

    package static func + (lhs: Self, rhs: Self) -> Self { Self(microseconds: lhs.microseconds &+ rhs.microseconds) }

    package var seconds: Double { Double(microseconds) / 1_000_000 }

    /// Whole milliseconds, rounded up so that a measured round trip is never zero.
    package var roundedUpMilliseconds: Int64 { (microseconds + 999) / 1000 }

    package var description: String { "\(microseconds)µs" }
}
