import CowatchClient
import CowatchTime
import Logging

/// What the settings make: one IRC connection per server and nick (its pairs'
/// channels joined on it), one Matrix connection per homeserver and bot user
/// (its pairs' rooms joined on it), and each pair on its connection.
public struct BridgePlan {
    public let pairs: [BridgeRunner.Pair]
    public let networks: [any ChatNetwork]
    /// The longest connect timeout asked for, for the room side's connections.
    public let connectTimeout: MonotonicDuration
    /// Whom the room side's connections trust: the system's store and every
    /// pair's `server-ca-file` (they share one client context).
    public let trust: ClientTrust

    public init(_ settings: BridgeSettings) {
        let irc = Self.grouped(settings.pairs, by: \.connection)
        let channels = irc.members.map { $0.map { IRCSession.Channel(name: $0.irc.channel, key: $0.channelKey) } }
        let groups = irc.keys
        // `roomAddress` is nil only for a server address the settings already refused.
        let pairs = zip(settings.pairs, irc.group).compactMap { pair, index in
            pair.roomAddress.map { BridgeRunner.Pair(relay: pair.relay, network: index, room: $0, password: pair.roomPassword,
                                                     token: pair.token, ownerKeyDirectory: pair.ownerKeyDirectory) }
        }
        var networks: [any ChatNetwork] = zip(groups, channels).map { connection, channels in
            let session = IRCSession.Settings(
                nick: connection.nick, alternateNicks: connection.alternateNicks, user: connection.user,
                realName: connection.realName, password: connection.password, channels: channels, pacing: connection.pacing,
                maximumLineBytes: connection.maximumLineBytes, maximumPiecesPerMessage: connection.maximumPieces,
                keepaliveInterval: connection.keepalive, keepaliveTimeout: connection.keepalive,
                registrationTimeout: max(.seconds(30), connection.connectTimeout),
                reconnect: Backoff.Settings(first: .seconds(1), maximum: connection.reconnectMaximum))
            return IRCNetwork(identity: connection.network, host: connection.host, port: connection.port,
                              tls: connection.tls ? (connection.tlsVerify, connection.tlsCAFile) : nil,
                              connectTimeout: connection.connectTimeout, session: session,
                              logger: Logger(label: "cowatch.irc"))
        }
        // One connection per bot user on a homeserver (the settings made sure
        // its pairs agree), after the IRC ones.
        let matrix = Self.grouped(settings.matrixPairs, by: \.connection)
        let matrixRooms = matrix.members.map { $0.map(\.matrixRoom) }
        let matrixGroups = matrix.keys
        let matrixPairs = zip(settings.matrixPairs, matrix.group).compactMap { pair, index in
            pair.roomAddress.map { BridgeRunner.Pair(relay: pair.relay, network: networks.count + index, room: $0,
                                                     password: pair.roomPassword, token: pair.token,
                                                     ownerKeyDirectory: pair.ownerKeyDirectory) }
        }
        for (connection, rooms) in zip(matrixGroups, matrixRooms) {
            let session = MatrixSession.Settings(
                homeserver: connection.homeserver, user: connection.user, accessToken: connection.accessToken, password: connection.password,
                rooms: rooms, syncTimeout: connection.syncTimeout, requestTimeout: connection.requestTimeout, pacing: connection.pacing,
                reconnect: Backoff.Settings(first: .seconds(1), maximum: connection.reconnectMaximum),
                joinRetry: Backoff.Settings(first: .seconds(30), maximum: max(.seconds(30), connection.reconnectMaximum)),
                maximumMessageLines: connection.maximumMessageLines)
            networks.append(MatrixNetwork(identity: connection.network, settings: session, stateFile: connection.stateFile,
                                          logger: Logger(label: "cowatch.matrix")))
        }
        self.networks = networks
        self.pairs = pairs + matrixPairs
        connectTimeout = (settings.pairs.map(\.connection.connectTimeout) + settings.matrixPairs.map(\.connection.requestTimeout)).max() ?? .seconds(20)
        var caFiles: [String] = []
        for file in settings.pairs.compactMap(\.serverCAFile) + settings.matrixPairs.compactMap(\.serverCAFile) where !caFiles.contains(file) {
            caFiles.append(file)
        }
        trust = ClientTrust(caFiles: caFiles)
    }

    /// `items` grouped by `key`, groups in the order their key first appears: the
    /// keys, each group's items, and each item's group (pairs with the same
    /// connection settings share one connection).
    static func grouped<Item, Key: Equatable>(_ items: [Item], by key: (Item) -> Key)
        -> (keys: [Key], members: [[Item]], group: [Int]) {
        var keys: [Key] = []
        var members: [[Item]] = []
        var group: [Int] = []
        for item in items {
            let itemKey = key(item)
            let index = keys.firstIndex(of: itemKey) ?? keys.count
            if index == keys.count {
                keys.append(itemKey)
                members.append([])
            }
            members[index].append(item)
            group.append(index)
        }
        return (keys, members, group)
    }
}
