import CowatchCore
import CowatchGateway
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
    public var leaseSeconds = 1.5
    /// Where each value came from (`--port`, `COWATCH_PORT`, `cowatch.conf:3`), for messages.
    public var origins: [String: String] = [:]

    public init() {
        // A server for people looks at shared links; the library default (tests) does not.
        gateway.mediaCheck.enabled = true
    }

    /// The keys, as long flags without dashes, as config-file keys, and as
    /// `COWATCH_` + upper case with `_` for `-`.
    public static let keys: [String] = Setting.all.map(\.key)

    /// Merges the three sources and validates every value.
    /// - Parameters:
    ///   - flags: key to value, from the command line (booleans as "true").
    ///   - environment: the process environment (only `COWATCH_*` is read).
    public static func resolve(flags: [String: String], environment: [String: String]) throws -> ServeSettings {
        var sources: [(origin: (String) -> String, values: [String: String])] = []
        let configPath = flags["config"] ?? environment["COWATCH_CONFIG"]
        if let configPath {
            let lines = try ConfigFile.read(path: configPath)
            sources.append(({ key in "\(configPath):\(lines.lineNumbers[key] ?? 0) (\(key))" }, lines.values))
        }
        var fromEnvironment: [String: String] = [:]
        for key in keys {
            if let value = environment[environmentName(key)] { fromEnvironment[key] = value }
        }
        sources.append(({ environmentName($0) }, fromEnvironment))
        sources.append(({ "--\($0)" }, flags))

        var settings = ServeSettings()
        for (origin, values) in sources {
            for (key, value) in values where key != "config" {
                guard let setting = Setting.named(key) else {
                    throw SettingsError("\(origin(key)): unknown setting \"\(key)\" (known: \(keys.joined(separator: ", ")))")
                }
                do {
                    try setting.apply(value, &settings)
                } catch let problem as SettingsError {
                    throw SettingsError("\(origin(key)): \(problem.message), got \"\(value)\"")
                }
                settings.origins[key] = origin(key)
            }
        }
        return settings
    }

    public static func environmentName(_ key: String) -> String {
        "COWATCH_" + key.uppercased().replacingOccurrences(of: "-", with: "_")
    }
}

public struct SettingsError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
