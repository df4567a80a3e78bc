import CowatchTime
import Foundation
import CowatchCore
import CowatchStore

extension Gateway {
    /// Rooms from the store, each as it was: playing rooms go on from their anchor
    /// (or come back paused after a long downtime), members wait for their resume
    /// tokens.
    func restore(_ stored: StoredRooms) {
        // A cluster node: its own drain under its own name, the cluster's bans and
        // creation tokens from their tables.
        let ownName = cluster.map { PostgresStore.nodeOperatorName($0.settings.node) } ?? OperatorState.storeName
        if let json = stored.serverState[ownName] {
            do {
                state.operatorStateRestored(try JSONDecoder().decode(OperatorState.self, from: Data(json.utf8)))
            } catch {
                // The server starts all the same; the operator learns that the
                // address bans, creation tokens and drain they set are gone.
                logger.error("the operator's saved state cannot be read; starting without its address bans, creation tokens and drain",
                             metadata: ["error": "\(error)"])
            }
        }
        if let shared = stored.sharedOperator {
            // Nobody is connected yet: there is no one of a banned address to close.
            for address in state.operatorStateShared(shared, at: eventTime.server) { closeOperatorBanned(address) }
        }
        let now = eventTime.server
        var members = 0
        for saved in stored.rooms {
            let (room, actions) = Room.restore(
                saved.snapshot, members: saved.members, chat: saved.chat, configuration: configuration.room,
                downSince: stored.lastAlive ?? saved.snapshot.savedAt,
                maximumDowntime: ServerInterval(seconds: configuration.maximumDowntime.asSeconds), now: now)
            guard rooms[room.name] == nil else {
                // Saved before names were case-insensitive, under a name that now
                // means the same room as one already restored.
                logger.warning("a stored room differs from another only in case; it is not restored",
                               metadata: ["room": "\(saved.snapshot.room)"])
                continue
            }
            let entry = RoomEntry(room: room)
            tables.kept(entry)
            members += saved.members.count
            run(actions, in: entry)
        }
        if !stored.rooms.isEmpty {
            logger.info("rooms restored", metadata: ["rooms": "\(stored.rooms.count)", "members": "\(members)"])
        }
    }
}
