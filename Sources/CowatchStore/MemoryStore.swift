import CowatchCore
import Foundation

/// Keeps everything in memory: for `--store memory` (throwaway) and as the
/// reference the SQLite store is checked against.
public final class MemoryStore: RoomStore, @unchecked Sendable {
    private let lock = NSLock()
    private var data = StoredRooms()
    private let chatLimit: Int

    /// Bytes of chat text a room keeps, besides `chatLimit` lines.
    private let chatBytes: Int

    public init(chatLimit: Int = 200, chatBytes: Int = 32 * 1024) {
        self.chatLimit = chatLimit
        self.chatBytes = chatBytes
    }

    public func load() throws -> StoredRooms {
        lock.withLock { data }
    }

    public func write(_ changes: [StoreChange]) {
        lock.withLock {
            for change in changes { apply(change) }
        }
    }

    public func flush() {}
    public func close() {}
    public var failedWrites: Int { 0 }
    public var pendingChanges: Int { 0 }

    private func apply(_ change: StoreChange) {
        switch change {
        case .room(let snapshot):
            if let index = data.rooms.firstIndex(where: { $0.snapshot.room == snapshot.room }) {
                data.rooms[index].snapshot = snapshot
            } else {
                data.rooms.append(StoredRooms.Room(snapshot: snapshot, members: [], chat: []))
            }
        case .member(let room, let record):
            guard let index = data.rooms.firstIndex(where: { $0.snapshot.room == room }) else { return }
            data.rooms[index].members.removeAll { $0.id == record.id }
            data.rooms[index].members.append(record)
        case .forgetMember(let room, let id):
            guard let index = data.rooms.firstIndex(where: { $0.snapshot.room == room }) else { return }
            data.rooms[index].members.removeAll { $0.id == id }
        case .chat(let room, let line):
            guard let index = data.rooms.firstIndex(where: { $0.snapshot.room == room }) else { return }
            data.rooms[index].chat.append(line)
            if data.rooms[index].chat.count > chatLimit { data.rooms[index].chat.removeFirst() }
            var bytes = data.rooms[index].chat.reduce(0) { $0 + $1.text.utf8.count }
            while bytes > chatBytes, data.rooms[index].chat.count > 1 {
                bytes -= data.rooms[index].chat.removeFirst().text.utf8.count
            }
        case .forgetRoom(let room):
            data.rooms.removeAll { $0.snapshot.room == room }
        case .alive(let instant):
            data.lastAlive = instant
        case .serverState(let name, let json):
            data.serverState[name] = json
        }
    }
}
