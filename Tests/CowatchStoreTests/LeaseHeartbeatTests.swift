import CowatchCore
@testable import CowatchStore
import CowatchTime
import Foundation
import Testing

/// The cluster's heartbeats are timed on the clock the leases are given: time
/// skipped past the renewal interval brings the next heartbeat at once.
@Suite("Lease heartbeats on the gateway's clock",
       .enabled(if: TestDatabase.url != nil, "commands/test starts PostgreSQL and sets COWATCH_TEST_DATABASE_URL"))
struct LeaseHeartbeatTests {
    /// Renewals as they come, and a wait for a number of them.
    final class Renewals: @unchecked Sendable {
        private let lock = NSLock()
        private let arrived = DispatchSemaphore(value: 0)
        private var count = 0

        func note() {
            lock.withLock { count += 1 }
            arrived.signal()
        }

        /// Waits for one more; the bound only turns a hang into a failure.
        func waitForOne() -> Bool { SystemClock.wait(on: arrived, for: .seconds(30)) }

        var seen: Int { lock.withLock { count } }
    }

    @Test("the next heartbeat comes when the clock passes the renewal interval")
    func heartbeatOnSkippedTime() throws {
        let url = try TestDatabase.fresh()
        let time = SkippableTime()
        let store = try PostgresStore(url: url, node: "n1", fencing: true, time: time)
        defer { store.close() }
        let leases = PostgresLeases(url: url, settings: PostgresLeases.Settings(
            node: "n1", advertiseURL: "ws://127.0.0.1:1", lease: .seconds(1200), renew: .seconds(600), hold: .seconds(90)),
                                    store: store, time: time)
        let renewals = Renewals()
        leases.onRenewal = { _ in renewals.note() }
        leases.start()
        defer { leases.stop() }
        #expect(renewals.waitForOne())
        // The next heartbeat's deadline is set once the first is through.
        let deadline = SystemClock.monotonic() + .seconds(30)
        while time.pendingDeadlines == 0, SystemClock.monotonic() < deadline { SystemClock.sleep(for: .milliseconds(10)) }
        #expect(renewals.seen == 1)
        time.skip(.seconds(601))
        #expect(renewals.waitForOne())
        #expect(renewals.seen == 2)
    }
}
