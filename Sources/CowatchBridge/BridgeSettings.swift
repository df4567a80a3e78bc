import CowatchClient
import CowatchConfig
import CowatchTime
import Foundation
import SlashCommands

/// Everything `cowatch bridge` can be told: one or more channel-room pairs, each
/// with its IRC connection, its room and its limits.
///
/// Sources, in this order of precedence: command-line flags, then
/// `COWATCH_BRIDGE_*` environment variables, then the config file's lines
/// before its first section, then the defaults; each `[pair]` section of the
/// file is one pair, its lines over all of those. The command line's
/// `irc://...` (or `--matrix`) and `--room` make one more pair.
public struct BridgeSettings: Sendable {
    /// The IRC pairs.
    public var pairs: [Pair]
    public var logLevel: String
    /// The Matrix pairs (`matrix =` in their section).
    public var matrixPairs: [MatrixPair] = []

    /// One Matrix room and one Cowatch room, resolved and checked.
    public struct MatrixPair: Sendable, Hashable {
        /// As configured: `#alias:server` or `!id:server`.
        public var matrixRoom: String
        public var room: String
        public var server: String
        public var serverCAFile: String?
        public var roomPassword: String?
        public var token: String?
        public var connection: MatrixConnectionSettings
        public var relay: RoomRelay.Settings
        public var ownerKeyDirectory: String
        public var origin: String

        public var roomAddress: WebSocketAddress? { WebSocketAddress(server + "/rooms/" + room) }
    }

    /// What one homeserver connection needs; the pairs of one bot user share
    /// one connection, and so must agree on these.
    public struct MatrixConnectionSettings: Sendable, Hashable {
        public var homeserver: String
        public var user: String
        public var accessToken: String?
        public var password: String?
        /// Where the login and the sync position are kept (`MatrixStateFile`).
        public var stateFile: String
        public var network: String
        public var pacing: PacerSettings
        public var syncTimeout: MonotonicDuration
        public var reconnectMaximum: MonotonicDuration
        public var requestTimeout: MonotonicDuration
        public var maximumMessageLines: Int
    }

    /// One channel and one room, resolved and checked.
    public struct Pair: Sendable, Hashable {
        public var irc: IRCAddress
        public var room: String
        /// `ws://HOST:PORT` (or `wss://`) of the Cowatch server.
        public var server: String
        /// A private CA's certificates for a `wss://` server.
        public var serverCAFile: String?
        public var roomPassword: String?
        public var token: String?
        public var channelKey: String?
        public var connection: IRCConnectionSettings
        public var relay: RoomRelay.Settings
        /// Where the owner key of a room the bridge founds is kept (`OwnerKeyFile`).
        public var ownerKeyDirectory: String
        /// Where this pair was defined, for messages.
        public var origin: String

        /// The room's WebSocket address.
        public var roomAddress: WebSocketAddress? { WebSocketAddress(server + "/rooms/" + room) }
    }

    /// What one IRC connection needs; pairs whose settings are equal share one
    /// connection (and join their channels on it).
    public struct IRCConnectionSettings: Sendable, Hashable {
        public var host: String
        public var port: Int
        public var tls: Bool
        public var tlsVerify: Bool
        public var tlsCAFile: String?
        /// Names the network in people's identities.
        public var network: String
        public var nick: String
        public var alternateNicks: [String]
        public var user: String
        public var realName: String
        public var password: String?
        public var pacing: PacerSettings
        public var maximumLineBytes: Int
        public var maximumPieces: Int
        /// Silence before the server is pinged, and as long again for its answer.
        public var keepalive: MonotonicDuration
        /// The longest wait between tries, in seconds as `Backoff` counts them.
        public var reconnectMaximum: MonotonicDuration
        public var connectTimeout: MonotonicDuration
    }

    /// The value of a key, checked and applied to a pair's draft (the engine,
    /// shared with `cowatch serve`, is `Sources/CowatchConfig/`).
    typealias Key = SettingKey<Draft>

    /// Every setting, with its default: the flags, the config file's keys and the
    /// environment. Times are `Duration`s; `finish` makes them what the sessions
    /// count in (`MonotonicDuration`, `Backoff`'s seconds).
    public struct Draft: Sendable {
        var irc: IRCAddress?
        var matrix: String?
        var homeserver: String?
        var matrixUser: String?
        var matrixToken: String?
        var matrixPassword: String?
        var matrixStateFile: String?
        var matrixPacing = PacerSettings(perSecond: 1, burst: 10, maximumQueued: 100)
        var matrixSyncTimeout: Duration = .seconds(30)
        var matrixReconnectMaximum: Duration = .seconds(120)
        var matrixMessageLines = 10
        var room: String?
        var server = "ws://127.0.0.1:7480"
        var serverCAFile: String?
        var publicURL: String?
        var roomPassword: String?
        var token: String?
        var channelKey: String?
        var network: String?
        var nick = "cowatch"
        var alternateNicks: [String] = []
        var user = "cowatch"
        var realName = "Cowatch bridge"
        var ircPassword: String?
        var tlsVerify = true
        var tlsCAFile: String?
        var prefix = "!"
        /// Nil: IRC, or Matrix for a Matrix pair.
        var botName: String?
        var ircPacing = PacerSettings(perSecond: 0.5, burst: 5, maximumQueued: 100)
        var ircLineBytes = IRCMessage.standardMaximumBytes
        var ircPieces = 4
        var ircKeepalive: Duration = .seconds(90)
        var ircReconnectMaximum: Duration = .seconds(120)
        var roomPacing = PacerSettings(perSecond: 10, burst: 20, maximumQueued: 250)
        var roomLineBytes = 4096
        var maximumSpeakers = 25
        var speakerIdle: Duration = .seconds(3600)
        var replyLines = 8
        var keptOutRetry: Duration = .seconds(600)
        var resumeGrace: Duration = .seconds(60)
        var roomReconnectMaximum: Duration = .seconds(60)
        var connectTimeout: Duration = .seconds(20)
        var announce = true
        /// Nil: systemd's `$STATE_DIRECTORY` when set, else `data/bridge`.
        var ownerKeyDirectory: String?
        var logLevel = "info"
    }

    public static var keyNames: [String] { keys.map(\.name) }

    /// Every key as declared, for the tests that hold the command line, the
    /// example file and docs/settings.md to them.
    public static var declarations: [SettingKey<Draft>] { keys }

    /// The defaults every declaration shows its own from.
    public static var defaults: Draft { Draft() }

    /// What a key means, with its default, for `cowatch bridge --help`: the same
    /// words as the example config file's.
    public static func help(for name: String) -> String {
        keys.first { $0.name == name }?.help(defaults: Draft()) ?? ""
    }

    // MARK: - Resolving

    /// - Parameters:
    ///   - file: the config file's path and text, when there is one.
    ///   - environment: the process environment (only `COWATCH_BRIDGE_*` is read).
    ///   - flags: key to value from the command line; `irc` and `room` among them make a pair.
    public static func resolve(file: (path: String, text: String)?, environment: [String: String],
                               flags: [String: String]) throws(SettingsError) -> BridgeSettings {
        var base = Draft()
        var sections: [ConfigFile.Section] = []
        if let file {
            let parsed = try ConfigFile.parse(file.text, path: file.path, sections: ["pair"])
            for line in parsed.top where pairKeys.contains(line.key) {
                throw SettingsError("\(line.origin): \(line.key) belongs in a [pair] section")
            }
            try SettingSources.apply(parsed.top, keys: keys, to: &base)
            sections = parsed.sections
        }
        let shared = keys.map(\.name).filter { !pairKeys.contains($0) }
        try SettingSources.apply(SettingSources.environment(environment, keys: shared, prefix: environmentPrefix), keys: keys, to: &base)
        try SettingSources.apply(SettingSources.flags(flags.filter { !pairKeys.contains($0.key) }), keys: keys, to: &base)
        if base.ownerKeyDirectory == nil {
            // systemd's StateDirectory= (deploy/systemd/cowatch-bridge.service) names it;
            // it may list several, separated by colons.
            let state = environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
            base.ownerKeyDirectory = state ?? "data/bridge"
        }

        var pairs: [Pair] = []
        var matrixPairs: [MatrixPair] = []
        var drafts: [(Draft, String)] = []
        for section in sections {
            var draft = base
            try SettingSources.apply(section.lines, keys: keys, to: &draft)
            drafts.append((draft, section.origin))
        }
        if pairKeys.contains(where: { flags[$0] != nil }) {
            var draft = base
            try SettingSources.apply(SettingSources.flags(flags.filter { pairKeys.contains($0.key) }), keys: keys, to: &draft)
            drafts.append((draft, "the command line"))
        }
        for (draft, origin) in drafts {
            if draft.matrix != nil {
                matrixPairs.append(try finishMatrix(draft, origin: origin))
            } else {
                pairs.append(try finish(draft, origin: origin))
            }
        }
        guard !pairs.isEmpty || !matrixPairs.isEmpty else {
            throw SettingsError("nothing to bridge: give irc://HOST/#channel --room ROOM, or a --config file with [pair] sections")
        }
        try checkMatrix(matrixPairs)
        var seen: Set<String> = []
        for pair in pairs {
            let key = "\(pair.connection.host):\(pair.connection.port) \(pair.connection.nick) \(IRCCaseMapping.rfc1459.fold(pair.irc.channel))"
            guard seen.insert(key).inserted else {
                throw SettingsError("\(pair.origin): \(pair.irc.channel) on \(pair.connection.host) is bridged twice")
            }
        }
        return BridgeSettings(pairs: pairs, logLevel: base.logLevel, matrixPairs: matrixPairs)
    }

    /// The keys that make a pair, never shared by every pair.
    static let pairKeys: Set<String> = ["irc", "matrix", "room"]

    static let environmentPrefix = "COWATCH_BRIDGE_"

    public static func environmentName(_ key: String) -> String {
        SettingSources.environmentName(key, prefix: environmentPrefix)
    }

    /// The room's page, as posted in the channel.
    static func link(_ draft: Draft, room: String, origin: String) throws(SettingsError) -> String {
        guard let server = WebSocketAddress(draft.server) else { throw SettingsError("\(origin): the server address is not valid") }
        let host = server.host.contains(":") ? "[\(server.host)]" : server.host
        let serverOrigin = server.secure ? "https://" + host + (server.port == 443 ? "" : ":\(server.port)")
            : "http://\(host):\(server.port)"
        return (draft.publicURL ?? serverOrigin) + "/rooms/" + room
    }

    private static func finish(_ draft: Draft, origin: String) throws(SettingsError) -> Pair {
        guard let irc = draft.irc else { throw SettingsError("\(origin): no irc = irc://HOST/#channel") }
        guard let room = draft.room else { throw SettingsError("\(origin): no room = ROOM") }
        let link = try link(draft, room: room, origin: origin)
        let network = draft.network ?? irc.host.lowercased()
        let connection = IRCConnectionSettings(
            host: irc.host, port: irc.port, tls: irc.tls, tlsVerify: draft.tlsVerify, tlsCAFile: draft.tlsCAFile, network: network,
            nick: draft.nick, alternateNicks: draft.alternateNicks, user: draft.user, realName: draft.realName,
            password: draft.ircPassword, pacing: draft.ircPacing, maximumLineBytes: draft.ircLineBytes, maximumPieces: draft.ircPieces,
            keepalive: MonotonicDuration(draft.ircKeepalive), reconnectMaximum: MonotonicDuration(draft.ircReconnectMaximum),
            connectTimeout: MonotonicDuration(draft.connectTimeout))
        let relay = RoomRelay.Settings(
            network: network, channel: irc.channel, room: room, link: link, prefix: draft.prefix, botName: draft.botName ?? "IRC",
            maximumSpeakers: draft.maximumSpeakers, speakerIdle: MonotonicDuration(draft.speakerIdle), speakerPacing: draft.roomPacing,
            maximumReplyLines: draft.replyLines, reconnect: Backoff.Settings(first: .seconds(1), maximum: MonotonicDuration(draft.roomReconnectMaximum)),
            keptOutRetry: MonotonicDuration(draft.keptOutRetry), announce: draft.announce, maximumLineBytes: draft.roomLineBytes,
            resumeGrace: MonotonicDuration(draft.resumeGrace))
        if let caFile = draft.serverCAFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw SettingsError("\(origin): server-ca-file: cannot read \(caFile)")
        }
        return Pair(irc: irc, room: room, server: draft.server, serverCAFile: draft.serverCAFile, roomPassword: draft.roomPassword, token: draft.token,
                    channelKey: draft.channelKey, connection: connection, relay: relay,
                    ownerKeyDirectory: draft.ownerKeyDirectory ?? "data/bridge", origin: origin)
    }
}
