import CowatchCore
import CowatchTime

/// Which rooms this node may act for in a cluster, and until when (docs/cluster.md,
/// "Leases"): a value with events in (a room taken, a heartbeat's answer, the
/// clock, a state numbered) and actions out (step down from a room, reserve more
/// numbers). No database and no clock of its own; tested event by event.
///
/// The rules:
/// - A lease is trusted until the moment its last renewal was *sent* plus the
///   lease length, less a safety margin: the database's lease began no earlier
///   than that send, so the node stops acting before any other node can start.
/// - A heartbeat that no longer lists a room, or lists it under another epoch,
///   means another node has it: step down at once.
/// - A room past its trusted time steps down on the next tick, whatever the
///   database says later (a paused or cut-off node never acts late).
/// - `seq` stays within the numbers the lease reserved: more are asked for well
///   before the end, and a room that reaches the end without them steps down.
struct RoomOwnership {
    struct Held: Hashable {
        var epoch: Int64
        var ceiling: Int64
        var trustedUntil: MonotonicInstant
        var extending = false
    }

    enum Event: Hashable {
        /// Taken; the acquire was sent at `requestedAt`.
        case acquired(RoomName, epoch: Int64, ceiling: Int64, requestedAt: MonotonicInstant)
        case renewed(sentAt: MonotonicInstant, held: [RoomName: Int64])
        case renewalFailed
        case numbered(RoomName, seq: Int64)
        case ceilingExtended(RoomName, epoch: Int64, ceiling: Int64, granted: Bool)
        /// Given up by this node (drained, or forgotten).
        case released(RoomName)
        case tick(now: MonotonicInstant)
    }

    enum Action: Hashable {
        case stepDown(RoomName, why: String)
        case extendCeiling(RoomName, epoch: Int64, to: Int64)
    }

    /// How long a lease lasts from its renewal's sending, less the margin.
    let trusted: MonotonicDuration
    let seqBlock: Int64
    private(set) var rooms: [RoomName: Held] = [:]

    /// `margin`, subtracted from every lease since clock rates and scheduling are
    /// not exact: by default a fifth of the lease, at most 0.25 s.
    init(lease: MonotonicDuration, margin: MonotonicDuration? = nil, seqBlock: Int64 = 10_000) {
        let margin = margin ?? MonotonicDuration(microseconds: min(250_000, lease.microseconds / 5))
        trusted = MonotonicDuration(microseconds: lease.microseconds - margin.microseconds)
        self.seqBlock = seqBlock
    }

    func epoch(of room: RoomName) -> Int64? { rooms[room]?.epoch }

    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .acquired(let room, let epoch, let ceiling, let requestedAt):
            rooms[room] = Held(epoch: epoch, ceiling: ceiling, trustedUntil: requestedAt + trusted)
            return []

        case .renewed(let sentAt, let held):
            var actions: [Action] = []
            for (room, lease) in rooms {
                if held[room] == lease.epoch {
                    rooms[room]?.trustedUntil = max(lease.trustedUntil, sentAt + trusted)
                } else {
                    rooms[room] = nil
                    actions.append(.stepDown(room, why: "another node holds its lease now"))
                }
            }
            return actions

        case .renewalFailed:
            // Nothing changes yet: the next tick steps down from whatever lapses.
            return []

        case .numbered(let room, let seq):
            guard var lease = rooms[room] else { return [] }
            if seq > lease.ceiling {
                rooms[room] = nil
                return [.stepDown(room, why: "its reserved numbers ran out before more were granted")]
            }
            guard seq > lease.ceiling - seqBlock / 2, !lease.extending else { return [] }
            lease.extending = true
            rooms[room] = lease
            return [.extendCeiling(room, epoch: lease.epoch, to: lease.ceiling + seqBlock)]

        case .ceilingExtended(let room, let epoch, let ceiling, let granted):
            guard var lease = rooms[room], lease.epoch == epoch else { return [] }
            lease.extending = false
            if granted {
                lease.ceiling = max(lease.ceiling, ceiling)
                rooms[room] = lease
                return []
            }
            rooms[room] = nil
            return [.stepDown(room, why: "its lease refused more numbers")]

        case .released(let room):
            rooms[room] = nil
            return []

        case .tick(let now):
            var actions: [Action] = []
            for (room, lease) in rooms where lease.trustedUntil < now {
                rooms[room] = nil
                actions.append(.stepDown(room, why: "its lease was not renewed in time"))
            }
            return actions.sorted { "\($0)" < "\($1)" }
        }
    }
}
