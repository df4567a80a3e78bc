/// A position in the media, in seconds from its start.
///
/// Never negative and always finite: every way of making one clamps, so the core
/// cannot publish a position below zero whatever arithmetic led to it.
public struct MediaTime: Hashable, Comparable, Sendable {
    public let seconds: Double

    public static let zero = MediaTime(seconds: 0)

    /// About 31,700 years: far beyond any media, and still exact in milliseconds.
    public static let maximumSeconds = 1e12

    public init(seconds: Double) {
        self.seconds = seconds.isFinite ? Swift.min(Self.maximumSeconds, Swift.max(0, seconds)) : 0
    }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool { lhs.seconds < rhs.seconds }

    /// This position moved by `delta` seconds, clamped at the start of the media.
    public func offset(by delta: Double) -> MediaTime {
        MediaTime(seconds: seconds + delta)
    }

    /// The position rounded to whole milliseconds, the precision the contract promises.
    public var milliseconds: Int64 {
        Int64((seconds * 1000).rounded())
    }

    /// `h:mm:ss`, as the contract writes positions (`0:12:03`).
    public var clockText: String {
        let total = Int64(seconds.rounded(.down))
        let h = total / 3600
        let m = (total % 3600) / 60
        let s = total % 60
        let mm = m < 10 ? "0\(m)" : "\(m)"
        let ss = s < 10 ? "0\(s)" : "\(s)"
        return "\(h):\(mm):\(ss)"
    }
}

extension MediaTime: CustomStringConvertible {
    public var description: String { clockText }
}
