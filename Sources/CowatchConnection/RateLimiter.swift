import CowatchTime

/// A token bucket per connection: `rate` commands per second on average, up to
/// `burst` at once.
package struct RateLimiter {
    package let rate: Double
    package let burst: Double
    private var tokens: Double
    private var lastRefill: MonotonicInstant

    package init(rate: Double, burst: Double, now: MonotonicInstant) {
        self.rate = rate
        self.burst = Swift.max(1, burst)
        self.tokens = Swift.max(1, burst)
        self.lastRefill = now
    }

    /// Takes one token; false when the connection is over its rate.
    package mutating func take(now: MonotonicInstant) -> Bool {
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Whether the bucket has filled up again: the connection has kept to its rate
    /// for as long as a whole burst takes to earn.
    package mutating func isFull(now: MonotonicInstant) -> Bool {
        refill(now: now)
        return tokens >= burst
    }

    private mutating func refill(now: MonotonicInstant) {
        let elapsed = (now - lastRefill).seconds
        guard elapsed > 0 else { return }
        lastRefill = now
        tokens = Swift.min(burst, tokens + elapsed * rate)
    }
}
