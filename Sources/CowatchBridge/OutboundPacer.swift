import CowatchTime
import DequeModule

/// Lines waiting to be sent at a pace the other side accepts: a token bucket
/// (`burst` lines at once, then `perSecond`) in front of a bounded queue that
/// keeps their order. IRC servers disconnect clients that flood them, and a
/// Cowatch room closes a connection that sends over its command rate, so every
/// line the bridge sends to either side goes through one of these.
///
/// A value: `now` comes in, the lines to send now come out, with when to ask
/// again. When the queue is full a new line is refused and counted, so that
/// the sender can say how many were lost.
public struct OutboundPacer<Item: Sendable>: Sendable {
    public let settings: PacerSettings
    private var queue = Deque<Item>()
    private var tokens: Double
    private var refilled: MonotonicInstant?
    /// Lines refused because the queue was full, since `takeDropped()`.
    public private(set) var dropped = 0

    public init(settings: PacerSettings) {
        self.settings = settings
        tokens = Double(max(1, settings.burst))
    }

    public var count: Int { queue.count }
    public var isEmpty: Bool { queue.isEmpty }

    /// Queues `item` after the others. False (and counted) when the queue is full.
    @discardableResult
    public mutating func enqueue(_ item: Item) -> Bool {
        guard queue.count < settings.maximumQueued else {
            dropped += 1
            return false
        }
        queue.append(item)
        return true
    }

    /// The lines that may go now, oldest first.
    public mutating func release(now: MonotonicInstant) -> [Item] {
        refill(now: now)
        var out: [Item] = []
        while tokens >= 1, let item = queue.popFirst() {
            tokens -= 1
            out.append(item)
        }
        return out
    }

    /// How long until the next waiting line may go; nil when none waits.
    /// Rounded up to the clock's microsecond, so that asking again after it
    /// finds the token earned rather than a hair short of it.
    public func delayUntilNext(now: MonotonicInstant) -> MonotonicDuration? {
        guard !queue.isEmpty else { return nil }
        var copy = self
        copy.refill(now: now)
        guard copy.tokens < 1 else { return .zero }
        guard settings.perSecond > 0 else { return nil }
        let seconds = (1 - copy.tokens) / settings.perSecond
        return MonotonicDuration(microseconds: Int64((seconds * 1_000_000).rounded(.up)))
    }

    /// Forgets what waits (the connection it was for is gone); returns how many.
    @discardableResult
    public mutating func clear() -> Int {
        defer { queue.removeAll() }
        return queue.count
    }

    /// The count of refused lines, reset to 0.
    public mutating func takeDropped() -> Int {
        defer { dropped = 0 }
        return dropped
    }

    private mutating func refill(now: MonotonicInstant) {
        let capacity = Double(max(1, settings.burst))
        if let refilled, now > refilled {
            tokens = min(capacity, tokens + (now - refilled).seconds * settings.perSecond)
        }
        if refilled.map({ now > $0 }) ?? true { refilled = now }
    }
}

/// How fast an `OutboundPacer` lets lines go, and how many it keeps waiting.
public struct PacerSettings: Sendable, Hashable {
    /// Lines per second once the burst is spent.
    public var perSecond: Double
    /// Lines that may go at once after a quiet spell.
    public var burst: Int
    /// Lines kept waiting at most; more are refused.
    public var maximumQueued: Int

    public init(perSecond: Double, burst: Int, maximumQueued: Int) {
        self.perSecond = perSecond
        self.burst = burst
        self.maximumQueued = maximumQueued
    }
}
