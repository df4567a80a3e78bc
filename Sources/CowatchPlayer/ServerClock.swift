/// The server clock's offset from this machine's, estimated from `/time` round
/// trips as the page's `static/sync/clock.js` does: a sample sent at local
/// time t0, answered with server time s (whole ms, truncated) and received at t1
/// says the offset (server - local) lies in (s - t1, s + 1 - t0). The estimate is
/// the middle of the recent samples' intersection, or the mean of the quickest
/// samples' midpoints when they do not all meet (a clock stepped or drifting).
public struct ServerClock: Sendable, Hashable {
    public struct Sample: Sendable, Hashable {
        public var low: Double
        public var high: Double
        public var rtt: Double
        public var at: Double
    }

    /// Samples older than this (ms) are forgotten, and at most `windowMax` are kept.
    public static let windowMs = 30_000.0
    public static let windowMax = 40
    public static let best = 3
    /// A round trip longer than this (ms) is not one of ours, or useless.
    public static let maxRttMs = 10_000.0

    public private(set) var samples: [Sample] = []
    /// Server minus local, ms.
    public private(set) var offset = 0.0
    public private(set) var uncertainty = Double.infinity
    public var synced: Bool { !samples.isEmpty }

    public init() {}

    /// Adds the round trip of a `/time` sent at local `sent`, answered with
    /// `server`, received at local `received` (all ms). False when it cannot be one.
    @discardableResult
    public mutating func add(sent: Double, server: Double, received: Double) -> Bool {
        let rtt = received - sent
        guard rtt >= 0, rtt <= Self.maxRttMs else { return false }
        let sample = Sample(low: server - received, high: server + 1 - sent, rtt: rtt, at: received)
        samples.append(sample)
        while samples.count > Self.windowMax || (samples.count > Self.best && sample.at - samples[0].at > Self.windowMs) {
            samples.removeFirst()
        }
        estimate()
        return true
    }

    private mutating func estimate() {
        guard let low = samples.map(\.low).max(), let high = samples.map(\.high).min() else { return }
        if low <= high {
            offset = (low + high) / 2
            uncertainty = (high - low) / 2
            return
        }
        let quickest = samples.sorted { $0.rtt < $1.rtt }.prefix(Self.best)
        offset = quickest.reduce(0) { $0 + ($1.low + $1.high) / 2 } / Double(quickest.count)
        uncertainty = quickest.first.map { ($0.high - $0.low) / 2 } ?? .infinity
    }

    /// Server time (ms) at local time `local` (ms).
    public func serverTime(atLocal local: Double) -> Double { local + offset }

    /// When (local ms, from the first sample at `startedAt`) the next `/time` is
    /// due after one sent at `lastSent`: a burst of 8 at 40 ms, every half second
    /// for ten seconds, then every two (static/clock.js's schedule).
    public static func nextSample(startedAt: Double, sentCount: Int, lastSent: Double) -> Double {
        if sentCount < 8 { return startedAt + Double(sentCount) * 40 }
        if lastSent - startedAt < 10_000 { return lastSent + 500 }
        return lastSent + 2_000
    }
}
