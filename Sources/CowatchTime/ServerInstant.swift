/// A server clock reading: whole milliseconds since the Unix epoch, as on the wire.
///
/// The core never reads a clock; the gateway passes one of these with every input.
public struct ServerInstant: Hashable, Comparable, Sendable {
    public let milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public static func < (lhs: ServerInstant, rhs: ServerInstant) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    public func advanced(by interval: ServerInterval) -> ServerInstant {
        ServerInstant(milliseconds: milliseconds &+ interval.milliseconds)
    }

    /// How long from `earlier` to this instant (negative when `earlier` is later).
    public func interval(since earlier: ServerInstant) -> ServerInterval {
        ServerInterval(milliseconds: milliseconds &- earlier.milliseconds)
    }
}

/// A span of server time in whole milliseconds.
public struct ServerInterval: Hashable, Comparable, Sendable {
    public let milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// Rounds to the nearest millisecond; non-finite or negative seconds give zero.
    public init(seconds: Double) {
        let ms = (seconds * 1000).rounded()
        self.milliseconds = ms.isFinite && ms > 0 ? Int64(Swift.min(ms, 9.0e15)) : 0
    }

    /// Swift's `Duration` (what settings and commands are read in), to the
    /// nearest millisecond, as `init(seconds:)` rounds.
    public init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(seconds: Double(seconds) + Double(attoseconds) / 1e18)
    }

    public static let zero = ServerInterval(milliseconds: 0)

    public var seconds: Double { Double(milliseconds) / 1000 }

    public static func < (lhs: ServerInterval, rhs: ServerInterval) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }
}
