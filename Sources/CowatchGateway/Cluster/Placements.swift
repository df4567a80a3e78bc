import CowatchCore
import CowatchTime

/// In a cluster, the connections waiting to learn which node serves their
/// room (`Route.placing`), as a value: who waits for which room, which rooms
/// the database is being asked about, and which to ask again when (their owner
/// did not answer, or the database could not). One question per room however
/// many wait for it; its answer hands back everyone who waited. The gateway
/// asks (`PostgresLeases.acquire`) and carries the answer out
/// (Gateway+Placement.swift).
struct Placements {
    /// Connection numbers waiting, by room.
    private(set) var waiting: [RoomName: [UInt64]] = [:]
    /// Rooms asked about and not answered yet.
    private(set) var asking: Set<RoomName> = []
    /// Rooms to ask about again, and from when.
    private(set) var askAgain: [RoomName: MonotonicInstant] = [:]

    /// Connection `id` waits for `room`: the rooms to ask about now (none while
    /// it is already asked, or when `delay` puts the question off).
    mutating func wait(_ id: UInt64, for room: RoomName, after delay: MonotonicDuration, now: MonotonicInstant) -> [RoomName] {
        waiting[room, default: []].append(id)
        guard delay > .zero else { return ask(room) }
        let due = now + delay
        askAgain[room] = min(askAgain[room] ?? due, due)
        return []
    }

    /// The database answered for `room`: everyone who waited for it, in order.
    mutating func answered(_ room: RoomName) -> [UInt64] {
        asking.remove(room)
        return waiting.removeValue(forKey: room) ?? []
    }

    /// The rooms whose question was put off until `now` or before.
    mutating func due(at now: MonotonicInstant) -> [RoomName] {
        askAgain.filter { $0.value <= now }.keys.sorted { $0.rawValue < $1.rawValue }.flatMap { ask($0) }
    }

    private mutating func ask(_ room: RoomName) -> [RoomName] {
        guard !asking.contains(room) else { return [] }
        asking.insert(room)
        askAgain[room] = nil
        return [room]
    }

    /// Whether a connection placed since `since` has waited longer than
    /// `patience` (a dead owner's lease must end before anyone may take its
    /// room): it is then asked to come back later.
    static func outwaited(since: MonotonicInstant, now: MonotonicInstant, patience: MonotonicDuration) -> Bool {
        now - since > patience
    }
}
