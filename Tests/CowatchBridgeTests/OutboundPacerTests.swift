@testable import CowatchBridge
import CowatchClient
import CowatchTime
import Testing

/// The monotonic instant `seconds` after the clock's start.
private func at(_ seconds: Double) -> MonotonicInstant {
    MonotonicInstant(microseconds: 0) + .seconds(seconds)
}

@Suite("The outbound pacer")
struct OutboundPacerTests {
    @Test("a burst goes at once, then one line per interval, in order")
    func burstThenRate() {
        var pacer = OutboundPacer<Int>(settings: PacerSettings(perSecond: 2, burst: 3, maximumQueued: 100))
        for n in 1...6 { pacer.enqueue(n) }
        #expect(pacer.release(now: at(0)) == [1, 2, 3])
        #expect(pacer.delayUntilNext(now: at(0)) == .milliseconds(500))
        #expect(pacer.release(now: at(0.25)) == [])
        #expect(pacer.release(now: at(0.5)) == [4])
        #expect(pacer.release(now: at(1.5)) == [5, 6])
        #expect(pacer.delayUntilNext(now: at(1.5)) == nil)
    }

    @Test("a quiet spell earns the burst back, never more")
    func refill() {
        var pacer = OutboundPacer<Int>(settings: PacerSettings(perSecond: 1, burst: 2, maximumQueued: 100))
        for n in 1...2 { pacer.enqueue(n) }
        #expect(pacer.release(now: at(0)) == [1, 2])
        for n in 3...6 { pacer.enqueue(n) }
        #expect(pacer.release(now: at(100)) == [3, 4])
        #expect(pacer.delayUntilNext(now: at(100)) == .seconds(1))
    }

    @Test("after the delay it names, the next line is ready, even at a rate that is no whole number of microseconds")
    func delayIsEnough() {
        var pacer = OutboundPacer<Int>(settings: PacerSettings(perSecond: 3, burst: 1, maximumQueued: 10))
        for n in 1...3 { pacer.enqueue(n) }
        #expect(pacer.release(now: at(0)) == [1])
        var now = at(0)
        for expected in 2...3 {
            guard let delay = pacer.delayUntilNext(now: now) else { Issue.record("no delay with lines waiting"); return }
            #expect(delay >= .seconds(1.0 / 3) && delay <= .seconds(1.0 / 3) + MonotonicDuration(microseconds: 1))
            now = now + delay
            #expect(pacer.release(now: now) == [expected])
        }
    }

    @Test("a full queue refuses and counts, and keeps what it has in order")
    func bounded() {
        var pacer = OutboundPacer<Int>(settings: PacerSettings(perSecond: 1, burst: 1, maximumQueued: 3))
        let accepted = (1...5).map { pacer.enqueue($0) }
        #expect(accepted == [true, true, true, false, false])
        #expect(pacer.dropped == 2)
        #expect(pacer.takeDropped() == 2)
        #expect(pacer.dropped == 0)
        #expect(pacer.release(now: at(0)) == [1])
        #expect(pacer.release(now: at(10)) == [2])
        #expect(pacer.release(now: at(11)) == [3])
    }

    @Test("clearing forgets what waits, and says how much")
    func clear() {
        var pacer = OutboundPacer<Int>(settings: PacerSettings(perSecond: 1, burst: 1, maximumQueued: 10))
        for n in 1...4 { pacer.enqueue(n) }
        _ = pacer.release(now: at(0))
        #expect(pacer.clear() == 3)
        #expect(pacer.isEmpty)
    }
}

@Suite("Reconnect backoff")
struct BackoffTests {
    @Test("doubling from the first delay to the maximum, each jittered to half to all of it")
    func doubling() {
        var backoff = Backoff(settings: Backoff.Settings(first: .seconds(1), maximum: .seconds(8)), seed: 42)
        let delays = (0..<6).map { _ in backoff.next() }
        let fulls = [1.0, 2, 4, 8, 8, 8]
        for (delay, full) in zip(delays, fulls) { #expect(delay >= .seconds(full / 2) && delay <= .seconds(full)) }
        backoff.succeeded()
        #expect(backoff.next() <= .seconds(1))
    }

    @Test("seeds made from names are the same in every run")
    func seeds() {
        #expect(Backoff.seed("#cowatch") == Backoff.seed("#cowatch"))
        #expect(Backoff.seed("#cowatch") != Backoff.seed("#second"))
    }
}
