import CowatchTime
import Foundation
import Testing

/// Deadlines set on a `TimeSource`: what a test's skipped time brings at once,
/// and what time passing brings on the system's clocks.
@Suite("Deadlines on a time source")
struct TimeSourceTests {
    /// Counts the deadlines that came, and lets a test wait for a number of them.
    final class Arrivals: @unchecked Sendable {
        private let lock = NSLock()
        private let arrived = DispatchSemaphore(value: 0)
        private var names: [String] = []

        func note(_ name: String) {
            lock.withLock { names.append(name) }
            arrived.signal()
        }

        /// Waits for `count` arrivals; the bound only turns a hang into a failure.
        func wait(for count: Int) -> [String] {
            for _ in 0..<count { _ = arrived.wait(timeout: .now() + 30) }
            return lock.withLock { names }
        }

        var seen: [String] { lock.withLock { names } }
    }

    @Test("a skip runs the deadlines it passes, in the order they were set, and no others")
    func skipBringsDeadlines() {
        let time = SkippableTime()
        let queue = DispatchQueue(label: "deadlines")
        let arrivals = Arrivals()
        time.schedule(after: .seconds(60), on: queue) { arrivals.note("a minute") }
        time.schedule(after: .seconds(30), on: queue) { arrivals.note("half a minute") }
        time.schedule(after: .seconds(3600), on: queue) { arrivals.note("an hour") }
        #expect(time.pendingDeadlines == 3)
        time.skip(.seconds(61))
        #expect(arrivals.wait(for: 2) == ["a minute", "half a minute"])
        // The hour's deadline is still pending: a round trip on its queue shows nothing else ran.
        queue.sync {}
        #expect(arrivals.seen.count == 2)
        #expect(time.pendingDeadlines == 1)
        time.skip(.seconds(3600))
        #expect(arrivals.wait(for: 1) == ["a minute", "half a minute", "an hour"])
        #expect(time.pendingDeadlines == 0)
    }

    @Test("a deadline set after a skip counts from the moved clock")
    func deadlineAfterSkip() {
        let time = SkippableTime()
        let before = time.monotonic()
        time.skip(.seconds(100))
        #expect(time.monotonic() - before >= .seconds(100))
        let arrivals = Arrivals()
        time.schedule(after: .seconds(10), on: .global()) { arrivals.note("ten seconds") }
        time.skip(.seconds(9))
        #expect(time.pendingDeadlines == 1)
        time.skip(.seconds(1))
        #expect(arrivals.wait(for: 1) == ["ten seconds"])
    }

    @Test("time passing brings a deadline too, once, with or without skips")
    func passingTime() {
        for time in [SystemTime(), SkippableTime()] as [any TimeSource] {
            let arrivals = Arrivals()
            let started = time.monotonic()
            time.schedule(after: .milliseconds(20), on: .global()) { arrivals.note("soon") }
            #expect(arrivals.wait(for: 1) == ["soon"])
            #expect(time.monotonic() - started >= .milliseconds(20))
        }
    }

    @Test("durations cross to Dispatch's and Swift's and back")
    func conversions() {
        #expect(MonotonicDuration(.milliseconds(1500)) == .seconds(1.5))
        #expect(MonotonicDuration.seconds(2.25).duration == .milliseconds(2250))
        #expect(MonotonicDuration(microseconds: -5).dispatchInterval == .microseconds(0))
        #expect(MonotonicDuration.seconds(3).dispatchInterval == .microseconds(3_000_000))
    }

    @Test("seconds a user typed never crash the conversion: infinity and huge numbers stop at the limit, NaN is zero")
    func wildSeconds() {
        #expect(MonotonicDuration.seconds(.infinity).microseconds == .max)
        #expect(MonotonicDuration.seconds(-.infinity).microseconds == .min)
        #expect(MonotonicDuration.seconds(1e300).microseconds > 9_000_000_000_000_000_000)
        #expect(MonotonicDuration.seconds(.nan) == .zero)
    }
}
