import CowatchClient
import CowatchConfig
import CowatchTime
import Foundation

/// A `[pair]` with `matrix =`: one Matrix room and one Cowatch room.
extension BridgeSettings {
    static func finishMatrix(_ draft: Draft, origin: String) throws(SettingsError) -> MatrixPair {
        guard let matrixRoom = draft.matrix else { throw SettingsError("\(origin): no matrix = #alias:server") }
        guard draft.irc == nil else { throw SettingsError("\(origin): a pair is an IRC channel (irc =) or a Matrix room (matrix =), not both") }
        guard let room = draft.room else { throw SettingsError("\(origin): no room = ROOM") }
        guard let homeserver = draft.homeserver else { throw SettingsError("\(origin): no homeserver = https://HOST for the Matrix room \(matrixRoom)") }
        guard let user = draft.matrixUser else { throw SettingsError("\(origin): no matrix-user = @bot:server for the Matrix room \(matrixRoom)") }
        guard draft.matrixToken != nil || draft.matrixPassword != nil else {
            throw SettingsError("\(origin): the Matrix bot needs matrix-token (an access token) or matrix-password (to log in)")
        }
        if let caFile = draft.serverCAFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw SettingsError("\(origin): server-ca-file: cannot read \(caFile)")
        }
        let link = try link(draft, room: room, origin: origin)
        let network = draft.network ?? "matrix"
        let directory = draft.ownerKeyDirectory ?? "data/bridge"
        let connection = MatrixConnectionSettings(
            homeserver: homeserver, user: user, accessToken: draft.matrixToken, password: draft.matrixPassword,
            stateFile: draft.matrixStateFile ?? (directory.hasSuffix("/") ? directory : directory + "/") + "matrix-state.json",
            network: network, pacing: draft.matrixPacing, syncTimeout: MonotonicDuration(draft.matrixSyncTimeout),
            reconnectMaximum: MonotonicDuration(draft.matrixReconnectMaximum), requestTimeout: MonotonicDuration(draft.connectTimeout),
            maximumMessageLines: draft.matrixMessageLines)
        let relay = RoomRelay.Settings(
            network: network, channel: matrixRoom, room: room, link: link, prefix: draft.prefix, botName: draft.botName ?? "Matrix",
            maximumSpeakers: draft.maximumSpeakers, speakerIdle: MonotonicDuration(draft.speakerIdle), speakerPacing: draft.roomPacing,
            maximumReplyLines: draft.replyLines, reconnect: Backoff.Settings(first: .seconds(1), maximum: MonotonicDuration(draft.roomReconnectMaximum)),
            keptOutRetry: MonotonicDuration(draft.keptOutRetry), announce: draft.announce, maximumLineBytes: draft.roomLineBytes,
            resumeGrace: MonotonicDuration(draft.resumeGrace), slashCommands: true)
        return MatrixPair(matrixRoom: matrixRoom, room: room, server: draft.server, serverCAFile: draft.serverCAFile,
                          roomPassword: draft.roomPassword, token: draft.token, connection: connection, relay: relay,
                          ownerKeyDirectory: directory, origin: origin)
    }

    /// One bot user on one homeserver is one connection: its pairs agree on
    /// its settings, and no Matrix room is bridged twice by it.
    static func checkMatrix(_ pairs: [MatrixPair]) throws(SettingsError) {
        var connections: [String: MatrixConnectionSettings] = [:]
        var seen: Set<String> = []
        for pair in pairs {
            let key = "\(pair.connection.homeserver) \(pair.connection.user)"
            if let earlier = connections[key], earlier != pair.connection {
                throw SettingsError("\(pair.origin): the Matrix bot \(pair.connection.user) is one connection to \(pair.connection.homeserver): its pairs must agree on its matrix- settings and network")
            }
            connections[key] = pair.connection
            guard seen.insert(key + " " + pair.matrixRoom.lowercased()).inserted else {
                throw SettingsError("\(pair.origin): \(pair.matrixRoom) on \(pair.connection.homeserver) is bridged twice")
            }
        }
    }

    /// `#alias:server` or `!id:server`.
    static func matrixRoom(_ value: String) throws(SettingsError) -> String {
        guard let first = value.first, first == "#" || first == "!", value.count <= 255, value.dropFirst().contains(":"),
              !value.contains(where: { $0.isWhitespace }), !value.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw SettingsError("expected a Matrix room: #alias:server or !id:server")
        }
        return value
    }

    /// `@name:server`.
    static func matrixUser(_ value: String) throws(SettingsError) -> String {
        guard value.hasPrefix("@"), value.count <= 255, value.dropFirst().contains(":"), !value.contains(where: { $0.isWhitespace }),
              !value.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw SettingsError("expected a Matrix user id: @name:server")
        }
        return value
    }

    /// The homeserver's client-server API: http(s)://HOST[:PORT], no path.
    static func homeserver(_ value: String) throws(SettingsError) -> String {
        let trimmed = value.hasSuffix("/") ? String(value.dropLast()) : value
        guard let url = URL(string: trimmed), let scheme = url.scheme, scheme == "https" || scheme == "http", url.host != nil,
              url.path.isEmpty, url.query == nil, trimmed.count <= 200 else {
            throw SettingsError("expected https://HOST[:PORT] (or http:// on loopback), the homeserver's client address, no path")
        }
        return trimmed
    }
}
