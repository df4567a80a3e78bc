/// Wall time on the protocol's scale (milliseconds since the Unix epoch, as
/// `ServerInstant`) to a fraction of a millisecond: the server's clock as a
/// client estimates it from `/time` round trips, or this machine's clock on the
/// same scale before that estimate is applied. A player lines its start up to
/// within a millisecond, so whole milliseconds are too coarse; the arithmetic is
/// the `Double` arithmetic the page does on the same numbers
/// (`Sources/CowatchWeb/Web/static/sync/clock.js`, `timeline.js`), step for step.
public struct PreciseInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let milliseconds: Double

    public init(milliseconds: Double) { self.milliseconds = milliseconds }

    /// A whole-millisecond reading, exactly.
    public init(_ instant: ServerInstant) { milliseconds = Double(instant.milliseconds) }

    // Each comparison is `Double`'s own, so that a NaN compares as it did as a number.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds < rhs.milliseconds }
    public static func <= (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds <= rhs.milliseconds }
    public static func > (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds > rhs.milliseconds }
    public static func >= (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds >= rhs.milliseconds }

    public static func + (instant: Self, span: PreciseInterval) -> Self {
        Self(milliseconds: instant.milliseconds + span.milliseconds)
    }

    public static func - (instant: Self, span: PreciseInterval) -> Self {
        Self(milliseconds: instant.milliseconds - span.milliseconds)
    }

    /// How long from `earlier` to `later` (negative when `earlier` is later).
    public static func - (later: Self, earlier: Self) -> PreciseInterval {
        PreciseInterval(milliseconds: later.milliseconds - earlier.milliseconds)
    }

    public var description: String { "\(milliseconds)ms" }
}

/// A length of time in milliseconds with fractions: between two
/// `PreciseInstant`s, an offset between two clocks, or a delay that a timer
/// on the monotonic clock is set with (`MonotonicDuration(_:)`).
public struct PreciseInterval: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let milliseconds: Double

    public init(milliseconds: Double) { self.milliseconds = milliseconds }

    public static func milliseconds(_ milliseconds: Double) -> Self { Self(milliseconds: milliseconds) }

    /// A monotonic span, exactly (microseconds are whole thousandths of a millisecond).
    public init(_ duration: MonotonicDuration) { milliseconds = Double(duration.microseconds) / 1000 }

    public static let zero = Self(milliseconds: 0)

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds < rhs.milliseconds }
    public static func <= (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds <= rhs.milliseconds }
    public static func > (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds > rhs.milliseconds }
    public static func >= (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds >= rhs.milliseconds }

    public static func + (lhs: Self, rhs: Self) -> Self { Self(milliseconds: lhs.milliseconds + rhs.milliseconds) }
    public static func - (lhs: Self, rhs: Self) -> Self { Self(milliseconds: lhs.milliseconds - rhs.milliseconds) }
    public static prefix func - (span: Self) -> Self { Self(milliseconds: -span.milliseconds) }
    public static func * (span: Self, factor: Double) -> Self { Self(milliseconds: span.milliseconds * factor) }
    public static func / (span: Self, divisor: Double) -> Self { Self(milliseconds: span.milliseconds / divisor) }

    public var description: String { "\(milliseconds)ms" }
}

extension MonotonicDuration {
    /// `span` to whole microseconds, toward zero, for a timer on the monotonic
    /// clock. A span beyond what `Int64` microseconds hold (a server's wild
    /// `at` can make one) is held at the bound, and a NaN is no time.
    public init(_ span: PreciseInterval) {
        let microseconds = span.milliseconds * 1000
        if microseconds.isNaN {
            self.init(microseconds: 0)
        } else if microseconds >= 9.2e18 {
            self.init(microseconds: Int64.max)
        } else if microseconds <= -9.2e18 {
            self.init(microseconds: Int64.min)
        } else {
            self.init(microseconds: Int64(microseconds))
        }
    }
}
