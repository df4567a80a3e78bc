import CowatchCore
import CowatchTime
import Testing
@testable import CowatchGateway

/// Room ownership in a cluster (Sources/CowatchGateway/RoomOwnership.swift): events
/// in, actions out, a clock passed in.
@Suite("Room ownership in a cluster (docs/cluster.md, Leases)")
struct RoomOwnershipTests {
    static let lobby = RoomName("lobby")!
    static let den = RoomName("den")!

    func owning(_ rooms: [RoomName] = [lobby], at time: Double = 100) -> RoomOwnership {
        var ownership = RoomOwnership(lease: .seconds(1.5), margin: .seconds(0.25), seqBlock: 100)
        for room in rooms { _ = ownership.handle(.acquired(room, epoch: 3, ceiling: 1100, requestedAt: at(time))) }
        return ownership
    }

    /// A monotonic instant `seconds` after the clock's start.
    func at(_ seconds: Double) -> MonotonicInstant {
        MonotonicInstant(microseconds: 0) + .seconds(seconds)
    }

    @Test("a lease is trusted until its last renewal's sending plus the lease, less the margin")
    func trustedUntil() {
        var ownership = owning()
        #expect(ownership.handle(.tick(now: at(101.2))).isEmpty)
        #expect(ownership.handle(.renewed(sentAt: at(101.0), held: [Self.lobby: 3])).isEmpty)
        #expect(ownership.handle(.tick(now: at(102.2))).isEmpty)
        #expect(ownership.handle(.tick(now: at(102.3))) == [.stepDown(Self.lobby, why: "its lease was not renewed in time")])
        #expect(ownership.epoch(of: Self.lobby) == nil)
    }

    @Test("failed heartbeats change nothing until the trusted time passes: a paused or cut-off node steps down on its next tick")
    func pausedNodeStepsDown() {
        var ownership = owning()
        #expect(ownership.handle(.renewalFailed).isEmpty)
        // Resumed ten seconds later: the first tick gives the room up, before anything else is done for it.
        #expect(ownership.handle(.tick(now: at(110))) == [.stepDown(Self.lobby, why: "its lease was not renewed in time")])
    }

    @Test("a heartbeat that no longer lists a room, or lists it under another epoch, steps down from it alone")
    func takenElsewhere() {
        var ownership = owning([Self.lobby, Self.den])
        let actions = ownership.handle(.renewed(sentAt: at(100.5), held: [Self.lobby: 4]))
        #expect(Set(actions) == [.stepDown(Self.lobby, why: "another node holds its lease now"),
                                 .stepDown(Self.den, why: "another node holds its lease now")])
        var other = owning([Self.lobby, Self.den])
        #expect(other.handle(.renewed(sentAt: at(100.5), held: [Self.lobby: 3])) == [.stepDown(Self.den, why: "another node holds its lease now")])
        #expect(other.epoch(of: Self.lobby) == 3)
    }

    @Test("more numbers are asked for halfway through the last block, once; a room that runs out first steps down")
    func numbering() {
        var ownership = owning()
        #expect(ownership.handle(.numbered(Self.lobby, seq: 1040)).isEmpty)
        #expect(ownership.handle(.numbered(Self.lobby, seq: 1051)) == [.extendCeiling(Self.lobby, epoch: 3, to: 1200)])
        #expect(ownership.handle(.numbered(Self.lobby, seq: 1060)).isEmpty)
        #expect(ownership.handle(.ceilingExtended(Self.lobby, epoch: 3, ceiling: 1200, granted: true)).isEmpty)
        #expect(ownership.handle(.numbered(Self.lobby, seq: 1199)).count == 1)
        #expect(ownership.handle(.numbered(Self.lobby, seq: 1201)) == [.stepDown(Self.lobby, why: "its reserved numbers ran out before more were granted")])
    }

    @Test("more numbers refused (the lease moved on) step down")
    func extensionRefused() {
        var ownership = owning()
        _ = ownership.handle(.numbered(Self.lobby, seq: 1060))
        #expect(ownership.handle(.ceilingExtended(Self.lobby, epoch: 3, ceiling: 1200, granted: false))
                == [.stepDown(Self.lobby, why: "its lease refused more numbers")])
    }

    @Test("a released room is forgotten: later heartbeats and ticks say nothing of it")
    func released() {
        var ownership = owning()
        _ = ownership.handle(.released(Self.lobby))
        #expect(ownership.handle(.renewed(sentAt: at(101), held: [:])).isEmpty)
        #expect(ownership.handle(.tick(now: at(200))).isEmpty)
    }
}
