import CowatchCore
import CowatchTime
import Testing
@testable import CowatchGateway

/// Room ownership in a cluster (Sources/CowatchGateway/Cluster/RoomOwnership.swift): events
/// in, actions out, a clock passed in.
@Suite("Room ownership in a cluster (docs/cluster.md, Leases)")
struct RoomOwnershipTests {
    static let lobby = RoomName("lobby")!
    static let den = RoomName("den")!

    func owning(_ rooms: [RoomName] = [lobby], at time: Double = 100, hold: Double = 0) -> RoomOwnership {
        var ownership = RoomOwnership(lease: .seconds(1.5), margin: .seconds(0.25), hold: .seconds(hold), seqBlock: 100)
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
        #expect(ownership.handle(.renewed(sentAt: at(101.0), held: [Self.lobby: 3], asked: [Self.lobby], receivedAt: at(101.0 + 0.01))).isEmpty)
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

    @Test("a heartbeat that asked for a room and does not list it, or lists it under another epoch, steps down from it alone")
    func takenElsewhere() {
        let both: Set = [Self.lobby, Self.den]
        var ownership = owning([Self.lobby, Self.den])
        let actions = ownership.handle(.renewed(sentAt: at(100.5), held: [Self.lobby: 4], asked: both, receivedAt: at(100.5 + 0.01)))
        #expect(Set(actions) == [.stepDown(Self.lobby, why: "another node holds its lease now"),
                                 .stepDown(Self.den, why: "another node holds its lease now")])
        var other = owning([Self.lobby, Self.den])
        #expect(other.handle(.renewed(sentAt: at(100.5), held: [Self.lobby: 3], asked: both, receivedAt: at(100.5 + 0.01))) == [.stepDown(Self.den, why: "another node holds its lease now")])
        #expect(other.epoch(of: Self.lobby) == 3)
        // Taken after the heartbeat read what to ask for: its absence says nothing.
        var late = owning([Self.lobby, Self.den])
        #expect(late.handle(.renewed(sentAt: at(100.5), held: [Self.lobby: 3], asked: [Self.lobby], receivedAt: at(100.5 + 0.01))).isEmpty)
        #expect(late.epoch(of: Self.den) == 3)
    }

    @Test("with a hold, a lapsed room is held, not given up; a renewal under its epoch lets it go on, with its trust renewed")
    func heldThenResumed() {
        var ownership = owning(hold: 60)
        #expect(ownership.handle(.renewalFailed).isEmpty)
        #expect(ownership.handle(.tick(now: at(101.2))).isEmpty)
        #expect(ownership.handle(.tick(now: at(101.3))) == [.hold(Self.lobby)])
        #expect(ownership.isHeld(Self.lobby))
        #expect(ownership.handle(.tick(now: at(130))).isEmpty)
        #expect(ownership.renewable == [Self.lobby])
        // A renewal that hung for longer than its trust renews the lease but leaves the room held.
        #expect(ownership.handle(.renewed(sentAt: at(134), held: [Self.lobby: 3], asked: [Self.lobby], receivedAt: at(140))).isEmpty)
        #expect(ownership.isHeld(Self.lobby))
        #expect(ownership.handle(.renewed(sentAt: at(140), held: [Self.lobby: 3], asked: [Self.lobby], receivedAt: at(140 + 0.01))) == [.resume(Self.lobby)])
        #expect(!ownership.isHeld(Self.lobby))
        #expect(ownership.handle(.tick(now: at(141.2))).isEmpty)
        #expect(ownership.handle(.tick(now: at(141.3))) == [.hold(Self.lobby)])
    }

    @Test("a held room steps down when a renewal that asked for it shows another node took it, or when the hold runs out")
    func heldThenGivenUp() {
        var taken = owning(hold: 60)
        _ = taken.handle(.tick(now: at(102)))
        #expect(taken.handle(.renewed(sentAt: at(103), held: [:], asked: [], receivedAt: at(103 + 0.01))).isEmpty)
        #expect(taken.handle(.renewed(sentAt: at(104), held: [:], asked: [Self.lobby], receivedAt: at(104 + 0.01)))
                == [.stepDown(Self.lobby, why: "another node holds its lease now")])
        var outlasted = owning(hold: 60)
        #expect(outlasted.handle(.tick(now: at(102))) == [.hold(Self.lobby)])
        #expect(outlasted.handle(.tick(now: at(161.9))).isEmpty)
        #expect(outlasted.handle(.tick(now: at(162))) == [.stepDown(Self.lobby, why: "its lease could not be renewed for database-hold-seconds")])
        #expect(outlasted.renewable.isEmpty)
    }

    @Test("the set of rooms to renew changes its count when a room comes or goes, not when one is renewed or numbered")
    func renewableChanges() {
        var ownership = owning()
        let start = ownership.roomsChanged
        _ = ownership.handle(.renewed(sentAt: at(100.5), held: [Self.lobby: 3], asked: [Self.lobby], receivedAt: at(100.5 + 0.01)))
        _ = ownership.handle(.numbered(Self.lobby, seq: 1010))
        #expect(ownership.roomsChanged == start)
        _ = ownership.handle(.acquired(Self.den, epoch: 1, ceiling: 100, requestedAt: at(101)))
        _ = ownership.handle(.released(Self.lobby))
        #expect(ownership.roomsChanged == start + 2)
        #expect(ownership.renewable == [Self.den])
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
        // Unanswered (the database away): asked again with the next state.
        var unanswered = owning()
        _ = unanswered.handle(.numbered(Self.lobby, seq: 1060))
        #expect(unanswered.handle(.ceilingExtended(Self.lobby, epoch: 3, ceiling: 1200, granted: nil)).isEmpty)
        #expect(unanswered.handle(.numbered(Self.lobby, seq: 1061)) == [.extendCeiling(Self.lobby, epoch: 3, to: 1200)])
    }

    @Test("a released room is forgotten: later heartbeats and ticks say nothing of it")
    func released() {
        var ownership = owning()
        _ = ownership.handle(.released(Self.lobby))
        #expect(ownership.handle(.renewed(sentAt: at(101), held: [:], asked: [], receivedAt: at(101 + 0.01))).isEmpty)
        #expect(ownership.handle(.tick(now: at(200))).isEmpty)
    }
}
