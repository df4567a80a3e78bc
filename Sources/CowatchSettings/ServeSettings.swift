import CowatchCore
import CowatchGateway
import CowatchSyncplay
import CowatchConfig
import Foundation

/// Everything `cowatch serve` can be told, from flags, `COWATCH_*` environment
/// variables and an optional config file, with one precedence:
/// flags, then environment, then file, then defaults.
public struct ServeSettings: Sendable {
    public enum StoreKind: String, Sendable {
        case sqlite, memory
        /// A cluster node (docs/cluster.md).
        case postgres
    }

    public var gateway = GatewayConfiguration()
    public var store: StoreKind = .sqlite
    public var dataDirectory = "./data"
    public var logLevel = "info"
    /// For `store postgres`: the database, this node's name, where other nodes
    /// reach it, and its leases' length.
    public var databaseURL: String?
    public var nodeID: String?
    public var advertiseURL: String?
    public var lease: Duration = .milliseconds(1500)
    /// How long an owner holds its rooms unchanged while the database is out of
    /// its reach (docs/cluster.md, "Riding out the database's absence").
    public var databaseHold: Duration = .seconds(90)
    /// This node's name in a cluster: `node-id`, or this machine's name (its
    /// letters, digits, `-`, `_` and `.`, 40 at most) and the port.
    public func node(hostName: String = ProcessInfo.processInfo.hostName) -> String {
        nodeID ?? "\(hostName.prefix(40).filter { $0.isLetter || $0.isNumber || "-_.".contains($0) })-\(gateway.port)"
    }

    /// Where the other nodes reach this one: `advertise-url`, or this machine's loopback and the port.
    public var advertise: String { advertiseURL ?? "ws://127.0.0.1:\(gateway.port)" }

    /// How often a node renews its leases: a quarter of their length, so that a
    /// late or lost renewal leaves three more before a lease lapses.
    public var leaseRenewal: Duration { lease / 4 }

    /// Syncplay's port (`docs/syncplay.md`): nil, none.
    public var syncplayPort: Int?
    /// Where it listens: nil, where the server does.
    public var syncplayHost: String?
    public var syncplay = SyncplayFront.Settings()

    /// Where each value came from (`--port`, `COWATCH_PORT`, `cowatch.conf:3`), for messages.
    public var origins: [String: String] = [:]

    public init() {
        // A server for people looks at shared links; the library default (tests) does not.
        gateway.mediaCheck.enabled = true
    }

    /// Every setting, declared once (`Setting.swift`): the command line's
    /// options, the config file's keys and the environment's variables.
    public static var declarations: [Setting] { Setting.all }

    /// The keys, as long flags without dashes, as config-file keys, and as
    /// `COWATCH_` + upper case with `_` for `-`.
    public static let keys: [String] = Setting.all.map(\.name)

    /// What a key means, with its default, for `cowatch serve --help`.
    public static func help(for name: String) -> String {
        Setting.all.first { $0.name == name }?.help(defaults: ServeSettings()) ?? ""
    }

    /// Merges the three sources and validates every value.
    /// - Parameters:
    ///   - flags: key to value, from the command line (booleans as "true").
    ///   - environment: the process environment (only `COWATCH_*` is read).
    public static func resolve(flags: [String: String], environment: [String: String]) throws(SettingsError) -> ServeSettings {
        var lines: [SettingLine] = []
        if let configPath = flags["config"] ?? environment["COWATCH_CONFIG"] {
            // A file's line is told with its key (`cowatch.conf:3 (port)`).
            lines += try ConfigFile.read(path: configPath).top.map {
                SettingLine(key: $0.key, value: $0.value, origin: "\($0.origin) (\($0.key))")
            }
        }
        lines += SettingSources.environment(environment, keys: keys, prefix: environmentPrefix)
        lines += SettingSources.flags(flags)
        var settings = ServeSettings()
        var origins: [String: String] = [:]
        try SettingSources.apply(lines.filter { $0.key != "config" }, keys: Setting.all, to: &settings) { origins[$0.key] = $0.origin }
        settings.origins = origins
        try SettingSources.check(settings, rules: Setting.rules)
        return settings
    }

    static let environmentPrefix = "COWATCH_"

    public static func environmentName(_ key: String) -> String {
        SettingSources.environmentName(key, prefix: environmentPrefix)
    }
}
