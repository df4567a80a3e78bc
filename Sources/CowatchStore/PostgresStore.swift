import CowatchCore
import CowatchTime
import Foundation
import Logging

/// Rooms in PostgreSQL, for a cluster of nodes sharing one database (docs/cluster.md).
/// Keeps what the SQLite store keeps, in the same shape, written the same way: the
/// service thread queues changes, a writer thread of its own applies them in
/// batches, one transaction each. A database outage is survived: the batch is
/// kept, the writer reconnects with a growing delay and applies it once the
/// database is back (queued changes are bounded; beyond the bound the oldest are
/// dropped and counted).
///
/// Fencing: in a cluster, every room written must be owned by this node under the
/// lease epoch the gateway set with `own(_:epoch:)`. Each batch locks the rooms'
/// lease rows and compares; a room whose lease has moved on (another node took it
/// while this one was paused or cut off) is not written, and `onFenced` says so.
public final class PostgresStore: RoomStore, @unchecked Sendable {
    public let url: String
    public let node: String
    // Internal, not private: the store's extensions (PostgresStore+Schema, +Reading,
    // +Writer, +Batch) read and write them.
    let logger: Logger
    let chatLimit: Int
    /// Bytes of stored chat lines (as JSON) a room keeps, besides `chatLimit` lines.
    let chatBytes: Int
    let fencing: Bool
    let maximumQueued: Int
    /// Where the writer times its batches and `flush` its deadline.
    let time: any TimeSource
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()
    /// The writer's connection; `nil` while the database is away.
    var connection: PostgresConnection?

    // Shared with the writer thread, behind `condition`.
    let condition = NSCondition()
    var queue: [StoreChange] = []
    var applying = false
    var closing = false
    var failures = 0
    var droppedChanges = 0
    var outage = false
    /// Transactions that lost a race (a deadlock, a serialization failure) and
    /// were tried again: counted by the writer thread (`conflictsSeen`) and
    /// published under `condition` after each batch (`conflicts`).
    var conflicts = 0
    var conflictsSeen = 0
    var epochs: [RoomName: Int64] = [:]
    var writeTimes: [MonotonicDuration] = []
    /// A room whose writes were refused because its lease moved on from the epoch
    /// this node held; called on the writer thread.
    public var onFenced: (@Sendable (RoomName, Int64) -> Void)?
    /// Given to the writer's connection (`PostgresConnection.afterStatement`): a
    /// test's hook between two statements of a batch.
    var afterStatement: (@Sendable (String) -> Void)?

    /// Connects, and brings the schema up to date (one node at a time, under an
    /// advisory lock). Throws a `StoreError` a person can act on.
    /// `chatBytes`: the text a room's chat may hold (`chat-history-bytes`); the
    /// store keeps twice that of JSON, which wraps each line in its name, id and time.
    public init(url: String, node: String, fencing: Bool, chatLimit: Int = 200, chatBytes: Int = 32 * 1024,
                maximumQueued: Int = 100_000, logger: Logger = Logger(label: "cowatch.store"),
                time: any TimeSource = SystemTime()) throws {
        self.url = url
        self.time = time
        self.node = node
        self.fencing = fencing
        self.chatLimit = chatLimit
        self.chatBytes = 2 * chatBytes
        self.maximumQueued = maximumQueued
        self.logger = logger
        do {
            connection = try PostgresConnection(url: url)
        } catch {
            throw StoreError.unreadable(path: Self.redacted(url), reason: "\(error)")
        }
        try migrate()
        let thread = Thread { [self] in writeLoop() }
        thread.name = "cowatch-postgres"
        thread.start()
    }

    /// The URL without its password, for messages.
    public static func redacted(_ url: String) -> String {
        guard let at = url.firstIndex(of: "@"), let scheme = url.range(of: "://"),
              let colon = url[scheme.upperBound..<at].firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    // MARK: - Ownership, for fencing

    /// This node owns `room` under `epoch`: its writes go through while the lease
    /// row still says so.
    public func own(_ room: RoomName, epoch: Int64) {
        condition.withLock { epochs[room] = epoch }
    }

    /// This node no longer owns `room`: its queued and future writes are dropped.
    public func disown(_ room: RoomName) {
        condition.withLock { epochs[room] = nil }
    }
}
