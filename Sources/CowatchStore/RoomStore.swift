import CowatchCore
import CowatchTime

/// Where rooms outlive the process. Writes are queued and applied in order off
/// the caller's thread, so the service loop never waits for a disk; a failed
/// write is logged and counted, never thrown at the room.
public protocol RoomStore: AnyObject, Sendable {
    /// Everything kept, to bring the rooms back at start-up.
    func load() throws -> StoredRooms
    /// Queues changes; returns at once.
    func write(_ changes: [StoreChange])
    /// Waits until every queued change has been applied (or failed).
    func flush()
    /// Flushes and releases the store.
    func close()
    /// Writes that failed since start.
    var failedWrites: Int { get }
    /// Changes queued and not yet applied (a batch being applied counts as
    /// one): the write backlog, 0 once everything written so far is on disk.
    var pendingChanges: Int { get }
}

public enum StoreChange: Sendable, Hashable {
    case room(RoomSnapshot)
    case member(RoomName, MemberRecord)
    case forgetMember(RoomName, MemberID)
    case chat(RoomName, ChatLine)
    /// The room is gone (its last member left for good).
    case forgetRoom(RoomName)
    /// The server is alive at this instant: after a crash, the last one says when
    /// it went down.
    case alive(ServerInstant)
    /// Something of the server's own to keep (the operator's decisions, as JSON),
    /// replacing what was kept under the same name.
    case serverState(name: String, json: String)
}

/// What a store holds.
public struct StoredRooms: Sendable, Hashable {
    public struct Room: Sendable, Hashable {
        public var snapshot: RoomSnapshot
        public var members: [MemberRecord]
        /// Oldest first.
        public var chat: [ChatLine]

        public init(snapshot: RoomSnapshot, members: [MemberRecord], chat: [ChatLine]) {
            self.snapshot = snapshot
            self.members = members
            self.chat = chat
        }
    }

    public var rooms: [Room]
    /// The last time the server that wrote this said it was alive.
    public var lastAlive: ServerInstant?
    /// What `serverState` changes kept, by name.
    public var serverState: [String: String]
    /// A cluster's operator state (nil: not a cluster's store).
    public var sharedOperator: SharedOperatorState?

    public init(rooms: [Room] = [], lastAlive: ServerInstant? = nil, serverState: [String: String] = [:],
                sharedOperator: SharedOperatorState? = nil) {
        self.rooms = rooms
        self.lastAlive = lastAlive
        self.serverState = serverState
        self.sharedOperator = sharedOperator
    }
}

public enum StoreError: Error, CustomStringConvertible, Equatable {
    /// The data directory or database cannot be opened or read.
    case unreadable(path: String, reason: String)
    /// Written by a newer Cowatch: this binary would not understand it.
    case newerSchema(path: String, found: Int, supported: Int)
    /// Another server holds the data directory.
    case inUse(path: String, holder: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "cannot use the store at \(path): \(reason)"
        case .newerSchema(let path, let found, let supported):
            "the store at \(path) has schema version \(found), newer than this binary's \(supported): upgrade Cowatch, or point --data-dir elsewhere"
        case .inUse(let path, let holder):
            "another cowatch serve (\(holder)) is using the data directory \(path): stop it first, or give this one another --data-dir"
        }
    }
}
