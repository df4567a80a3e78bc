/// A point on the monotonic clock, which never jumps with the wall clock: what
/// timeouts, pings and rates are measured against. Its origin is arbitrary, so
/// only differences between instants mean anything.
public struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.microseconds < rhs.microseconds }

    public static func + (instant: Self, span: MonotonicDuration) -> Self {
        Self(microseconds: instant.microseconds &+ span.microseconds)
    }

    public static func - (later: Self, earlier: Self) -> MonotonicDuration {
        MonotonicDuration(microseconds: later.microseconds &- earlier.microseconds)
    }

    public var description: String { "t+\(microseconds)µs" }
}

/// A length of monotonic time, microsecond precision.
public struct MonotonicDuration: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    /// Rounds to the microsecond; beyond what an `Int64` of microseconds holds
    /// (about 292,000 years) it stops at that limit, and NaN is zero, so that a
    /// number read from a user cannot crash the conversion.
    public static func seconds(_ seconds: Double) -> Self {
        let microseconds = (seconds * 1_000_000).rounded()
        guard microseconds.isFinite else { return Self(microseconds: microseconds.isNaN ? 0 : microseconds > 0 ? .max : .min) }
        return Self(microseconds: Int64(Swift.max(-9.2e18, Swift.min(9.2e18, microseconds))))
    }

    public static func milliseconds(_ milliseconds: Int64) -> Self { Self(microseconds: milliseconds * 1000) }

    /// Swift's `Duration` (what settings are declared in), to the microsecond.
    public init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(microseconds: seconds &* 1_000_000 &+ attoseconds / 1_000_000_000_000)
    }

    /// As Swift's `Duration`.
    public var duration: Duration { .microseconds(microseconds) }

    public static let zero = Self(microseconds: 0)

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.microseconds < rhs.microseconds }

    public static func + (lhs: Self, rhs: Self) -> Self { Self(microseconds: lhs.microseconds &+ rhs.microseconds) }

    public static func - (lhs: Self, rhs: Self) -> Self { Self(microseconds: lhs.microseconds &- rhs.microseconds) }

    public var seconds: Double { Double(microseconds) / 1_000_000 }

    /// Whole milliseconds, rounded up so that a measured round trip is never zero.
    public var roundedUpMilliseconds: Int64 { (microseconds + 999) / 1000 }

    public var description: String { "\(microseconds)µs" }
}
