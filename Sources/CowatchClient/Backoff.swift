import CowatchTime

/// How long to wait before trying a connection again: doubling from `first` up
/// to `maximum` with each failure in a row, and jittered (half to all of it) so
/// that many connections lost together do not all come back in the same instant.
public struct Backoff: Sendable, Hashable {
    public struct Settings: Sendable, Hashable {
        public var first: MonotonicDuration
        public var maximum: MonotonicDuration

        public init(first: MonotonicDuration, maximum: MonotonicDuration) {
            self.first = first
            self.maximum = maximum
        }
    }

    public let settings: Settings
    /// Failures since the last success.
    public private(set) var failures = 0
    private var random: UInt64

    public init(settings: Settings, seed: UInt64) {
        self.settings = settings
        random = seed
    }

    /// The delay before the next try, counting one more failure.
    public mutating func next() -> MonotonicDuration {
        failures += 1
        let full = min(settings.maximum.seconds, settings.first.seconds * Double(1 << min(failures - 1, 30)))
        return .seconds(full * (0.5 + 0.5 * fraction()))
    }

    public mutating func succeeded() {
        failures = 0
    }

    /// A number in [0, 1): SplitMix64, enough to spread retries and repeatable in tests.
    public mutating func fraction() -> Double {
        random &+= 0x9E37_79B9_7F4A_7C15
        var mixed = random
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return Double(mixed >> 11) / Double(UInt64(1) << 53)
    }

    /// A seed made from a name (FNV-1a), the same in every run, unlike `hashValue`.
    public static func seed(_ text: String) -> UInt64 {
        text.utf8.reduce(0xCBF2_9CE4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }
}
