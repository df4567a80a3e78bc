// Random numbers for the randomized room test: deterministic for a given seed,
// the same on every platform, never drawn from the system generator.

/// SplitMix64 (Steele, Lea and Flood): tiny, fast, and the same on every platform.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 0..<bound. The modulo bias is irrelevant for test input.
    mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next() % UInt64(bound))
    }

    mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.upperBound - range.lowerBound + 1)
    }

    mutating func int64(in range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / 9_007_199_254_740_992.0 < probability
    }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// An index into `weights`, chosen in proportion to the weights.
    mutating func weighted(_ weights: [Int]) -> Int {
        var roll = below(weights.reduce(0, +))
        for (index, weight) in weights.enumerated() {
            if roll < weight { return index }
            roll -= weight
        }
        return weights.count - 1
    }

    /// The seed of sequence `index` of a run started from `base`.
    static func derive(_ base: UInt64, _ index: Int) -> UInt64 {
        var generator = SplitMix64(seed: base ^ (UInt64(truncatingIfNeeded: index) &* 0xD1B5_4A32_D192_ED03))
        return generator.next()
    }
}
