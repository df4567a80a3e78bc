/// A playback rate: how many media seconds pass per real second.
///
/// Bounded to what browsers' media elements play reliably (0.25 to 4); values
/// outside are refused at parse time and clamped anywhere else.
public struct PlaybackRate: Hashable, Comparable, Sendable {
    public static let minimum = 0.25
    public static let maximum = 4.0
    public static let normal = PlaybackRate(clamping: 1)

    public let value: Double

    /// Nil when `value` is outside the bounds or not a number.
    public init?(_ value: Double) {
        guard value.isFinite, value >= Self.minimum, value <= Self.maximum else { return nil }
        self.value = value
    }

    public init(clamping value: Double) {
        self.value = value.isFinite ? Swift.min(Self.maximum, Swift.max(Self.minimum, value)) : 1
    }

    public static func < (lhs: PlaybackRate, rhs: PlaybackRate) -> Bool { lhs.value < rhs.value }
}

extension PlaybackRate: CustomStringConvertible {
    /// `1`, `1.5`, `0.25`: no trailing zeros.
    public var description: String { NumberText.decimal(value, places: 3) }
}
