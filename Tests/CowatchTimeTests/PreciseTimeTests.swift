import CowatchTime
import Testing

/// Server time to a fraction of a millisecond (Sources/CowatchTime/PreciseTime.swift):
/// the same numbers as the `Double` arithmetic it stands for, and a safe way onto a timer.
@Suite("Precise server time")
struct PreciseTimeTests {
    @Test("instants and intervals add and subtract as their milliseconds do, fractions kept")
    func arithmetic() {
        let at = PreciseInstant(milliseconds: 1_700_000_000_000.25)
        let later = at + .milliseconds(12.5)
        #expect(later.milliseconds == 1_700_000_000_000.25 + 12.5)
        #expect(later - at == .milliseconds(1_700_000_000_012.75 - 1_700_000_000_000.25))
        #expect(later - .milliseconds(12.5) == at)
        #expect(-PreciseInterval.milliseconds(3) == .milliseconds(-3))
        #expect((PreciseInterval.milliseconds(3) + .milliseconds(1.5)) * 2 / 3 == .milliseconds(3))
        #expect(at < later && later > at && at <= at && at >= at)
    }

    @Test("a whole-millisecond reading and a monotonic span come over exactly")
    func conversions() {
        #expect(PreciseInstant(ServerInstant(milliseconds: 1_700_000_000_001)).milliseconds == 1_700_000_000_001)
        #expect(PreciseInterval(MonotonicDuration(microseconds: 1_234_567)) == .milliseconds(1234.567))
        #expect(MonotonicDuration(PreciseInterval.milliseconds(12.3456)) == MonotonicDuration(microseconds: 12_345))
        #expect(MonotonicDuration(PreciseInterval.milliseconds(-0.0019)) == MonotonicDuration(microseconds: -1))
    }

    @Test("a span too long for a timer is held at the bound, and a NaN is none, rather than trapping")
    func wildSpans() {
        #expect(MonotonicDuration(PreciseInterval.milliseconds(1e300)).microseconds == Int64.max)
        #expect(MonotonicDuration(PreciseInterval.milliseconds(.infinity)).microseconds == Int64.max)
        #expect(MonotonicDuration(PreciseInterval.milliseconds(-.infinity)).microseconds == Int64.min)
        #expect(MonotonicDuration(PreciseInterval.milliseconds(.nan)) == .zero)
    }

    @Test("comparisons are the numbers' own: a NaN is neither before nor after")
    func nan() {
        let nan = PreciseInterval.milliseconds(.nan)
        #expect(!(nan < .zero) && !(nan > .zero) && !(nan <= .zero) && !(nan >= .zero))
        #expect(max(nan, .zero).milliseconds.isNaN == max(Double.nan, 0).isNaN)
    }
}
