import CowatchTime

/// The server clock's offset from this machine's, estimated from `/time` round
/// trips as the page's `static/sync/clock.js` does: a sample sent at local
/// time t0, answered with server time s (whole ms, truncated) and received at t1
/// says the offset (server - local) lies in (s - t1, s + 1 - t0). The estimate is
/// the middle of the recent samples' intersection, or the mean of the quickest
/// samples' midpoints when they do not all meet (a clock stepped or drifting).
///
/// Local times are this machine's clock on the server's scale (epoch
/// milliseconds), so that an offset is a plain interval between the two.
public struct ServerClock: Sendable, Hashable {
    public struct Sample: Sendable, Hashable {
        /// The least and the most the offset (server - local) can be, by this round trip.
        public var low: PreciseInterval
        public var high: PreciseInterval
        public var rtt: PreciseInterval
        /// When it was received, local time.
        public var at: PreciseInstant
    }

    /// Samples older than this are forgotten, and at most `windowMax` are kept.
    public static let window = PreciseInterval.milliseconds(30_000)
    public static let windowMax = 40
    public static let best = 3
    /// A round trip longer than this is not one of ours, or useless.
    public static let maxRtt = PreciseInterval.milliseconds(10_000)

    public private(set) var samples: [Sample] = []
    /// Server minus local.
    public private(set) var offset = PreciseInterval.zero
    public private(set) var uncertainty = PreciseInterval.milliseconds(.infinity)
    public var synced: Bool { !samples.isEmpty }

    public init() {}

    /// Adds the round trip of a `/time` sent at local `sent`, answered with
    /// `server`, received at local `received`. False when it cannot be one.
    @discardableResult
    public mutating func add(sent: PreciseInstant, server: PreciseInstant, received: PreciseInstant) -> Bool {
        let rtt = received - sent
        guard rtt >= .zero, rtt <= Self.maxRtt else { return false }
        let sample = Sample(low: server - received, high: server + .milliseconds(1) - sent, rtt: rtt, at: received)
        samples.append(sample)
        while samples.count > Self.windowMax || (samples.count > Self.best && sample.at - samples[0].at > Self.window) {
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
        offset = quickest.reduce(PreciseInterval.zero) { $0 + ($1.low + $1.high) / 2 } / Double(quickest.count)
        uncertainty = quickest.first.map { ($0.high - $0.low) / 2 } ?? .milliseconds(.infinity)
    }

    /// Server time at local time `local`.
    public func serverTime(atLocal local: PreciseInstant) -> PreciseInstant { local + offset }

    /// When (local time, from the first sample at `startedAt`) the next `/time`
    /// is due after one sent at `lastSent`: a burst of 8 at 40 ms, every half
    /// second for ten seconds, then every two (static/sync/server-clock.js's schedule).
    public static func nextSample(startedAt: PreciseInstant, sentCount: Int, lastSent: PreciseInstant) -> PreciseInstant {
        if sentCount < 8 { return startedAt + .milliseconds(Double(sentCount) * 40) }
        if lastSent - startedAt < .milliseconds(10_000) { return lastSent + .milliseconds(500) }
        return lastSent + .milliseconds(2_000)
    }
}
