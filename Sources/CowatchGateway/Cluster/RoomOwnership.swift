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
/// - A heartbeat that asked for a room and does not list it, or lists it under
///   another epoch, means another node has it: step down at once.
/// - A room past its trusted time is *held* on the next tick: it may not
///   change (the gateway refuses what would change it and its timers wait),
///   since another node may be taking it; its members stay, and what it has
///   shown stays in the write queue. A renewal under the same epoch means nobody
///   took it: it goes on, and the queue is written. A room held longer than
///   `hold` steps down. With no hold, a lapsed room steps down at once. Either
///   way a paused or cut-off node never acts late.
/// - `seq` stays within the numbers the lease reserved: more are asked for well
///   before the end, and a room that reaches the end without them steps down.
struct RoomOwnership {
    struct Held: Hashable {
        var epoch: Int64
        var ceiling: Int64
        var trustedUntil: MonotonicInstant
        var extending = false
        /// Since when the room has been held (its trust lapsed), if it is.
        var heldSince: MonotonicInstant?
    }

    enum Event: Hashable {
        /// Taken; the acquire was sent at `requestedAt`.
        case acquired(RoomName, epoch: Int64, ceiling: Int64, requestedAt: MonotonicInstant)
        /// A heartbeat's answer, read at `receivedAt`: the leases the database
        /// renewed, among those it was `asked` to renew even if lapsed (see
        /// `renewable`).
        case renewed(sentAt: MonotonicInstant, held: [RoomName: Int64], asked: Set<RoomName>, receivedAt: MonotonicInstant)
        case renewalFailed
        case numbered(RoomName, seq: Int64)
        /// More numbers granted, refused (the lease moved on), or not answered
        /// (`granted` nil: the database was away; asked again later).
        case ceilingExtended(RoomName, epoch: Int64, ceiling: Int64, granted: Bool?)
        /// Given up by this node (drained, or forgotten).
        case released(RoomName)
        case tick(now: MonotonicInstant)
    }

    enum Action: Hashable {
        case stepDown(RoomName, why: String)
        case extendCeiling(RoomName, epoch: Int64, to: Int64)
        /// Its trust lapsed: nothing may change it until `resume`.
        case hold(RoomName)
        /// Renewed under its epoch after a hold: nobody took it.
        case resume(RoomName)
    }

    /// How long a lease lasts from its renewal's sending, less the margin.
    let trusted: MonotonicDuration
    /// How long a lapsed room is held before it steps down (`database-hold-seconds`).
    let hold: MonotonicDuration
    let seqBlock: Int64
    private(set) var rooms: [RoomName: Held] = [:]
    /// Grows whenever a room is added or removed (never when one is only
    /// updated), so that whoever keeps a copy of the names knows when to read
    /// them again without comparing sets.
    private(set) var roomsChanged = 0

    /// `margin`, subtracted from every lease since clock rates and scheduling are
    /// not exact: by default a fifth of the lease, at most 0.25 s.
    init(lease: MonotonicDuration, margin: MonotonicDuration? = nil, hold: MonotonicDuration = .seconds(0),
         seqBlock: Int64 = 10_000) {
        let margin = margin ?? MonotonicDuration(microseconds: min(250_000, lease.microseconds / 5))
        trusted = MonotonicDuration(microseconds: lease.microseconds - margin.microseconds)
        self.hold = hold
        self.seqBlock = seqBlock
    }

    func epoch(of room: RoomName) -> Int64? { rooms[room]?.epoch }

    func isHeld(_ room: RoomName) -> Bool { rooms[room]?.heldSince != nil }

    var heldCount: Int { rooms.values.reduce(0) { $0 + ($1.heldSince == nil ? 0 : 1) } }

    /// The rooms whose leases a heartbeat renews even when they lapsed in the
    /// database: all this node acts for or holds. Renewing a lapsed lease under
    /// its epoch is safe, since an epoch changes with every new owner.
    var renewable: Set<RoomName> { Set(rooms.keys) }

    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .acquired(let room, let epoch, let ceiling, let requestedAt):
            if rooms[room] == nil { roomsChanged &+= 1 }
            rooms[room] = Held(epoch: epoch, ceiling: ceiling, trustedUntil: requestedAt + trusted)
            return []

        case .renewed(let sentAt, let held, let asked, let receivedAt):
            var actions: [Action] = []
            for (room, lease) in rooms {
                if held[room] == lease.epoch {
                    rooms[room]?.trustedUntil = max(lease.trustedUntil, sentAt + trusted)
                    // A renewal that took longer than its trust (one that hung
                    // while the database was away) leaves the room held: the
                    // next one, sent now, lets it go on for good.
                    if lease.heldSince != nil, sentAt + trusted > receivedAt {
                        rooms[room]?.heldSince = nil
                        actions.append(.resume(room))
                    }
                } else if held[room] != nil || asked.contains(room) {
                    forget(room)
                    actions.append(.stepDown(room, why: "another node holds its lease now"))
                }
                // Not asked for (taken after the heartbeat was sent) and not
                // listed: no news; its own trust decides.
            }
            return actions.sorted { "\($0)" < "\($1)" }

        case .renewalFailed:
            // Nothing changes yet: the next tick holds whatever lapses.
            return []

        case .numbered(let room, let seq):
            guard var lease = rooms[room] else { return [] }
            if seq > lease.ceiling {
                forget(room)
                return [.stepDown(room, why: "its reserved numbers ran out before more were granted")]
            }
            guard seq > lease.ceiling - seqBlock / 2, !lease.extending else { return [] }
            lease.extending = true
            rooms[room] = lease
            return [.extendCeiling(room, epoch: lease.epoch, to: lease.ceiling + seqBlock)]

        case .ceilingExtended(let room, let epoch, let ceiling, let granted):
            guard var lease = rooms[room], lease.epoch == epoch else { return [] }
            lease.extending = false
            guard let granted else {
                // Unanswered: the next state numbered asks again.
                rooms[room] = lease
                return []
            }
            if granted {
                lease.ceiling = max(lease.ceiling, ceiling)
                rooms[room] = lease
                return []
            }
            forget(room)
            return [.stepDown(room, why: "its lease refused more numbers")]

        case .released(let room):
            forget(room)
            return []

        case .tick(let now):
            var actions: [Action] = []
            for (room, lease) in rooms where lease.trustedUntil < now {
                if let since = lease.heldSince {
                    guard now - since >= hold else { continue }
                    forget(room)
                    actions.append(.stepDown(room, why: "its lease could not be renewed for database-hold-seconds"))
                } else if hold.microseconds > 0 {
                    rooms[room]?.heldSince = now
                    actions.append(.hold(room))
                } else {
                    forget(room)
                    actions.append(.stepDown(room, why: "its lease was not renewed in time"))
                }
            }
            return actions.sorted { "\($0)" < "\($1)" }
        }
    }

    private mutating func forget(_ room: RoomName) {
        guard rooms.removeValue(forKey: room) != nil else { return }
        roomsChanged &+= 1
    }
}
