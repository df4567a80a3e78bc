@testable import CowatchGateway
import CowatchCore
import CowatchTime
import Testing

/// Connections waiting for their room's node in a cluster
/// (`Sources/CowatchGateway/Cluster/Placements.swift`), on a manual clock.
@Suite("Placing connections in a cluster")
struct PlacementsTests {
    static let lobby = RoomName("lobby")!
    static let den = RoomName("den")!
    let start = MonotonicInstant(microseconds: 1_000_000)

    @Test("a room is asked about once, however many wait for it; the answer hands them all back, in order")
    func oneQuestion() {
        var placements = Placements()
        #expect(placements.wait(1, for: Self.lobby, after: .zero, now: start) == [Self.lobby])
        #expect(placements.wait(2, for: Self.lobby, after: .zero, now: start) == [])
        #expect(placements.answered(Self.lobby) == [1, 2])
        #expect(placements.wait(3, for: Self.lobby, after: .zero, now: start) == [Self.lobby])
    }

    @Test("a room whose owner did not answer is asked again after the delay, not before")
    func askAgain() {
        var placements = Placements()
        _ = placements.wait(1, for: Self.lobby, after: .zero, now: start)
        _ = placements.answered(Self.lobby)
        #expect(placements.wait(1, for: Self.lobby, after: .milliseconds(150), now: start) == [])
        #expect(placements.due(at: start + .milliseconds(149)) == [])
        #expect(placements.due(at: start + .milliseconds(150)) == [Self.lobby])
        #expect(placements.due(at: start + .seconds(1)) == [])
    }

    @Test("of two delays for one room the sooner holds, and a question in flight is not asked twice")
    func soonerDelay() {
        var placements = Placements()
        _ = placements.wait(1, for: Self.den, after: .milliseconds(500), now: start)
        _ = placements.wait(2, for: Self.den, after: .milliseconds(150), now: start)
        #expect(placements.due(at: start + .milliseconds(150)) == [Self.den])
        _ = placements.wait(3, for: Self.den, after: .milliseconds(150), now: start + .milliseconds(150))
        #expect(placements.due(at: start + .milliseconds(300)) == [])
        #expect(placements.answered(Self.den) == [1, 2, 3])
    }

    @Test("a member placed longer than the patience has outwaited it")
    func patience() {
        let patience = MonotonicDuration.seconds(5)
        #expect(!Placements.outwaited(since: start, now: start + .seconds(5), patience: patience))
        #expect(Placements.outwaited(since: start, now: start + .seconds(5.001), patience: patience))
    }
}
