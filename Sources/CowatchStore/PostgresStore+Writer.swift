import CowatchCore
import CowatchTime
import Foundation
import Logging

/// The queue of changes and the writer thread that drains it in batches, with
/// its outage handling and the figures it keeps for /metrics.
extension PostgresStore {
    public func write(_ changes: [StoreChange]) {
        guard !changes.isEmpty else { return }
        condition.lock()
        queue.append(contentsOf: changes)
        if queue.count > maximumQueued {
            let excess = queue.count - maximumQueued
            queue.removeFirst(excess)
            droppedChanges += excess
        }
        condition.signal()
        condition.unlock()
    }

    /// How long `flush` waits for changes to be applied during an outage.
    static let flushDuringOutage = MonotonicDuration.seconds(10)

    /// Waits until every queued change is applied; during an outage, at most
    /// `flushDuringOutage` on the store's clock.
    public func flush() {
        condition.lock()
        let deadline = time.monotonic() + Self.flushDuringOutage
        // Woken at least every 0.2 s to see whether an outage has outlasted the deadline.
        while (!queue.isEmpty || applying) && !(outage && time.monotonic() > deadline) {
            _ = SystemClock.wait(on: condition, for: .milliseconds(200))
        }
        condition.unlock()
    }

    public func close() {
        flush()
        condition.lock()
        closing = true
        condition.broadcast()
        condition.unlock()
    }

    public var failedWrites: Int { condition.withLock { failures } }
    public var pendingChanges: Int { condition.withLock { queue.count + (applying ? 1 : 0) } }

    /// For /metrics: changes dropped during an outage, whether the database is
    /// away now, the durations of the batches written since the last call, and the
    /// transactions tried again after losing a race.
    public func takeStatistics() -> (dropped: Int, outage: Bool, writeTimes: [MonotonicDuration], conflicts: Int) {
        condition.withLock {
            defer { writeTimes.removeAll() }
            return (droppedChanges, outage, writeTimes, conflicts)
        }
    }

    /// The pause before a batch that lost races is tried again.
    static let retryLaterPause = MonotonicDuration.milliseconds(50)
    /// The first pause before reconnecting during an outage, doubled up to the longest.
    static let firstReconnectDelay = MonotonicDuration.milliseconds(200)
    static let longestReconnectDelay = MonotonicDuration.seconds(5)

    func writeLoop() {
        var delay = Self.firstReconnectDelay
        while true {
            condition.lock()
            while queue.isEmpty && !closing { condition.wait() }
            if queue.isEmpty && closing {
                condition.unlock()
                connection?.close()
                return
            }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            applying = true
            let owned = epochs
            condition.unlock()

            let started = time.monotonic()
            let outcome = apply(batch, owned: owned)
            let took = time.monotonic() - started
            let conflictsSoFar = conflictsSeen

            condition.lock()
            conflicts = conflictsSoFar
            applying = false
            switch outcome {
            case .written(let refused):
                // Rooms this node had given up are expected to be refused; only a
                // lease that moved on under an epoch still held is news.
                let fenced = refused.filter { room in owned[room] != nil && epochs[room] == owned[room] }
                if outage { logger.notice("database back; writes resumed", metadata: ["database": "\(Self.redacted(url))"]) }
                outage = false
                delay = Self.firstReconnectDelay
                writeTimes.append(took)
                if writeTimes.count > 10_000 { writeTimes.removeFirst(5_000) }
                for room in fenced { epochs[room] = nil }
                if !fenced.isEmpty {
                    // Told before the batch counts as applied, so that whoever waits
                    // in `flush()` finds the news already given.
                    applying = true
                    condition.unlock()
                    for room in fenced { if let epoch = owned[room] { onFenced?(room, epoch) } }
                    condition.lock()
                    applying = false
                }
                condition.broadcast()
                condition.unlock()
            case .refused:
                failures += 1
                condition.broadcast()
                condition.unlock()
            case .retryLater(let remaining):
                // Not an outage: the database answered. What was not written goes
                // back in front and is tried again after a pause.
                queue.insert(contentsOf: remaining, at: 0)
                condition.broadcast()
                condition.unlock()
                SystemClock.sleep(for: Self.retryLaterPause)
            case .databaseAway(let error, let remaining):
                if !outage {
                    failures += 1
                    logger.error("database unreachable; writes wait for it",
                                 metadata: ["database": "\(Self.redacted(url))", "error": "\(error)"])
                }
                outage = true
                // What was not written goes back in front, to be applied once the
                // database is back (a room already written is not written twice).
                queue.insert(contentsOf: remaining, at: 0)
                condition.broadcast()
                condition.unlock()
                SystemClock.sleep(for: delay)
                delay = min(delay + delay, Self.longestReconnectDelay)
                if closing { condition.withLock { droppedChanges += queue.count; queue.removeAll() } }
            }
        }
    }
}
