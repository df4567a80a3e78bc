import CowatchCore

/// A room and the connections of its connected members.
final class RoomEntry {
    var room: Room
    var connections: [MemberID: Connection] = [:]
    /// How many connections use each encoding, so a broadcast encodes only what
    /// somebody will read.
    var jsonConnections = 0
    var textConnections = 0
    /// Other nodes' shared links for this room (connections of encoding `relay`).
    var links: [UInt64: Connection] = [:]

    init(room: Room) {
        self.room = room
    }

    func bind(_ connection: Connection, as member: MemberID) {
        if let previous = connections[member] { count(previous, -1) }
        connections[member] = connection
        count(connection, 1)
    }

    func unbind(_ member: MemberID) {
        guard let connection = connections.removeValue(forKey: member) else { return }
        count(connection, -1)
    }

    private func count(_ connection: Connection, _ sign: Int) {
        switch connection.encoding {
        case .json: jsonConnections += sign
        case .text: textConnections += sign
        case .echo, .relay: break
        }
    }
}
