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
        var groups: [BridgeSettings.IRCConnectionSettings] = []
        var channels: [[IRCSession.Channel]] = []
        var pairs: [BridgeRunner.Pair] = []
        for pair in settings.pairs {
            let index: Int
            if let found = groups.firstIndex(of: pair.connection) {
                index = found
            } else {
                index = groups.count
                groups.append(pair.connection)
                channels.append([])
            }
            channels[index].append(IRCSession.Channel(name: pair.irc.channel, key: pair.channelKey))
            // `roomAddress` is nil only for a server address the settings already refused.
            guard let room = pair.roomAddress else { continue }
            pairs.append(BridgeRunner.Pair(relay: pair.relay, network: index, room: room, password: pair.roomPassword, token: pair.token,
                                           ownerKeyDirectory: pair.ownerKeyDirectory))
        }
        var networks: [any ChatNetwork] = zip(groups, channels).map { connection, channels in
            let session = IRCSession.Settings(
                nick: connection.nick, alternateNicks: connection.alternateNicks, user: connection.user,
                realName: connection.realName, password: connection.password, channels: channels, pacing: connection.pacing,
                maximumLineBytes: connection.maximumLineBytes, maximumPiecesPerMessage: connection.maximumPieces,
                keepaliveInterval: connection.keepalive, keepaliveTimeout: connection.keepalive,
                registrationTimeout: max(.seconds(30), connection.connectTimeout),
                reconnect: Backoff.Settings(first: 1, maximum: connection.reconnectMaximum))
            return IRCNetwork(identity: connection.network, host: connection.host, port: connection.port,
                              tls: connection.tls ? (connection.tlsVerify, connection.tlsCAFile) : nil,
                              connectTimeout: connection.connectTimeout, session: session,
                              logger: Logger(label: "cowatch.irc"))
        }
        // One connection per bot user on a homeserver (the settings made sure
        // its pairs agree), after the IRC ones.
        var matrixGroups: [BridgeSettings.MatrixConnectionSettings] = []
        var matrixRooms: [[String]] = []
        var matrixPairs: [BridgeRunner.Pair] = []
        for pair in settings.matrixPairs {
            let index: Int
            if let found = matrixGroups.firstIndex(of: pair.connection) {
                index = found
            } else {
                index = matrixGroups.count
                matrixGroups.append(pair.connection)
                matrixRooms.append([])
            }
            matrixRooms[index].append(pair.matrixRoom)
            guard let room = pair.roomAddress else { continue }
            matrixPairs.append(BridgeRunner.Pair(relay: pair.relay, network: networks.count + index, room: room, password: pair.roomPassword,
                                                 token: pair.token, ownerKeyDirectory: pair.ownerKeyDirectory))
        }
        for (connection, rooms) in zip(matrixGroups, matrixRooms) {
            let session = MatrixSession.Settings(
                homeserver: connection.homeserver, user: connection.user, accessToken: connection.accessToken, password: connection.password,
                rooms: rooms, syncTimeout: connection.syncTimeout, requestTimeout: connection.requestTimeout, pacing: connection.pacing,
                reconnect: Backoff.Settings(first: 1, maximum: connection.reconnectMaximum),
                joinRetry: Backoff.Settings(first: 30, maximum: max(30, connection.reconnectMaximum)),
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
}
