/// A token bucket per connection: `rate` commands per second on average, up to
/// `burst` at once.
struct RateLimiter {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var lastRefill: Int64

    init(rate: Double, burst: Double, now microseconds: Int64) {
        self.rate = rate
        self.burst = Swift.max(1, burst)
        self.tokens = Swift.max(1, burst)
        self.lastRefill = microseconds
    }

    /// Takes one token; false when the connection is over its rate.
    mutating func take(now microseconds: Int64) -> Bool {
        let elapsed = Double(microseconds - lastRefill) / 1_000_000
        lastRefill = microseconds
        tokens = Swift.min(burst, tokens + elapsed * rate)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
