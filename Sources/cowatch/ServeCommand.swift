import ArgumentParser
import CowatchConfig
import CowatchCore
import CowatchGateway
import CowatchSettings
import CowatchStore
import CowatchSyncplay
import CowatchClient
import CowatchTime
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging

/// `cowatch serve`: the server. Settings come from flags, then `COWATCH_*`
/// environment variables, then the config file, then defaults. Stops gracefully
/// on SIGTERM and SIGINT.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Cowatch server: rooms over WebSocket, the browser client, /healthz and /metrics.",
        discussion: """
        Every option can also be set as an environment variable (COWATCH_PORT, COWATCH_DATA_DIR, ...) \
        or as `key = value` in the config file (port = 7480). Flags win over the environment, \
        which wins over the file.

        SETTINGS:
        """ + "\n" + options.help(defaults: ServeSettings())
    )

    /// Every option is a setting's declaration (`ServeSettings.declarations`).
    static let options = SettingOptions(keys: ServeSettings.declarations)

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Settings, as --KEY VALUE: every one is listed below.",
                                                                  valueName: "settings"))
    var arguments: [String] = []

    /// The settings given on the command line, by key.
    var flags: [String: String] { (try? Self.options.parse(arguments)) ?? [:] }

    func validate() throws {
        _ = try Self.options.parse(arguments)
    }

    func run() throws {
        // What it writes holds secrets (resume tokens in the store and its WAL,
        // access tokens in the bridge's state): readable by its own user only,
        // however it is started (the systemd units say UMask=0077 too).
        umask(0o077)
        let settings: ServeSettings
        do {
            settings = try ServeSettings.resolve(flags: flags, environment: ProcessInfo.processInfo.environment)
        } catch {
            Output.error("cowatch serve: \(error)")
            throw ExitCode.validationFailure
        }
        let level = Logger.Level(rawValue: settings.logLevel) ?? .info
        LoggingSystem.bootstrap { LogfmtHandler(label: $0, level: level) }
        let logger = Logger(label: "cowatch.serve")

        let roomStore: any RoomStore
        var cluster: ClusterLink?
        // One clock for the gateway and its leases: a lease's trusted time is read
        // on the one and compared on the other.
        let time: any TimeSource = SystemTime()
        switch settings.store {
        case .postgres:
            // `ServeSettings.resolve` has refused a cluster node without these.
            guard let url = settings.databaseURL else { throw ExitCode.validationFailure }
            let node = settings.node()
            let advertise = settings.advertise
            do {
                let store = try PostgresStore(url: url, node: node, fencing: true, chatLimit: settings.gateway.room.chatHistory,
                                              chatBytes: settings.gateway.room.chatHistoryBytes,
                                              logger: Logger(label: "cowatch.store"))
                let leases = PostgresLeases(url: url, settings: PostgresLeases.Settings(
                    node: node, advertiseURL: advertise, lease: MonotonicDuration(settings.lease),
                    renew: MonotonicDuration(settings.leaseRenewal), hold: MonotonicDuration(settings.databaseHold)), store: store, logger: Logger(label: "cowatch.cluster"), time: time)
                roomStore = store
                cluster = ClusterLink(store: store, leases: leases)
            } catch {
                Output.error("cowatch serve: \(error)")
                throw ExitCode.failure
            }
            logger.notice("store: postgres, cluster node", metadata: [
                "database": "\(PostgresStore.redacted(url))", "node": "\(node)", "advertise": "\(advertise)",
                "lease": "\(SettingValue.written(settings.lease))s", "hold": "\(SettingValue.written(settings.databaseHold))s"])
        case .memory:
            roomStore = MemoryStore(chatLimit: settings.gateway.room.chatHistory, chatBytes: settings.gateway.room.chatHistoryBytes)
            logger.notice("store: memory; rooms are lost when the server stops")
        case .sqlite:
            do {
                roomStore = try SQLiteStore(directory: settings.dataDirectory, chatLimit: settings.gateway.room.chatHistory,
                                            chatBytes: settings.gateway.room.chatHistoryBytes,
                                            logger: Logger(label: "cowatch.store"))
            } catch {
                Output.error("cowatch serve: \(error)")
                throw ExitCode.failure
            }
            logger.notice("store: sqlite", metadata: ["path": "\(settings.dataDirectory)/cowatch.sqlite"])
        }

        // The server's own names: this machine's, and the address other nodes reach it by.
        var configuration = settings.gateway
        configuration.allowedHosts += [ProcessInfo.processInfo.hostName.lowercased()]
        if let advertise = settings.advertiseURL, let host = HostAllowlist.hostPart(String(advertise.dropFirst("ws://".count))) {
            configuration.allowedHosts.append(host)
        }
        let syncplayMetrics = SyncplayMetrics()
        if settings.syncplayPort != nil {
            // The front's member connections prove they are its own with this, kept in memory alone.
            configuration.frontSecret = Self.randomSecret()
            configuration.moreMetrics = { syncplayMetrics.render() }
        }
        let gateway = Gateway(configuration: configuration, store: roomStore, cluster: cluster,
                              logger: Logger(label: "cowatch.gateway"), time: time)
        // Watching before anything is announced: a SIGTERM right after the banner
        // must still shut down gracefully.
        let fronts = Fronts()
        let signals = SignalWatcher { signal in
            logger.info("signal received, shutting down", metadata: ["signal": "\(signal)"])
            // Syncplay's members leave their rooms before the server stops (SyncplayFront.stop).
            fronts.stop()
            gateway.stop()
        }
        let boundPort: Int
        do {
            boundPort = try gateway.start()
        } catch {
            Output.error("cowatch serve: \(error)")
            roomStore.close()
            throw ExitCode.failure
        }
        let host = settings.gateway.host
        // On standard output whatever the log level: scripts and people read the
        // port from it ("serving on http://HOST:PORT/").
        Output.line(LogfmtHandler.line(level: "notice", label: "cowatch.serve", message: "serving on http://\(host):\(boundPort)/",
                                       metadata: ["websocket": "ws://\(host):\(boundPort)/rooms/<room>", "version": "\(CowatchVersion.current)",
                                                  "stop": "Ctrl-C or SIGTERM"]))

        var syncplay: SyncplayFront?
        if let port = settings.syncplayPort {
            do {
                syncplay = try startSyncplay(settings, port: port, gatewayPort: boundPort, secret: configuration.frontSecret ?? "",
                                             metrics: syncplayMetrics)
                fronts.set(syncplay)
            } catch {
                Output.error("cowatch serve: \(error)")
                gateway.stop()
                gateway.waitUntilStopped()
                roomStore.close()
                throw ExitCode.failure
            }
        }

        gateway.waitUntilStopped()
        fronts.stop()
        roomStore.close()
        withExtendedLifetime(signals) {}
    }
}

extension ServeCommand {
    /// Syncplay's port, its members connecting to this server on loopback.
    func startSyncplay(_ settings: ServeSettings, port: Int, gatewayPort: Int, secret: String,
                       metrics: SyncplayMetrics) throws -> SyncplayFront {
        var front = settings.syncplay
        front.port = port
        front.host = settings.syncplayHost ?? settings.gateway.host
        front.frontSecret = secret
        let host = settings.gateway.host
        // A server listening on every address is reached on loopback; one on a given address, there.
        let reach = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "[::1]" : host.contains(":") ? "[\(host)]" : host
        front.gateway = WebSocketAddress("ws://\(reach):\(gatewayPort)/")
        let syncplay = try SyncplayFront(settings: front, metrics: metrics, logger: Logger(label: "cowatch.syncplay"))
        let bound = try syncplay.start()
        Output.line(LogfmtHandler.line(level: "notice", label: "cowatch.syncplay", message: "syncplay on \(front.host):\(bound)",
                                       metadata: ["tls": front.certificate == nil ? "off" : "on"]))
        return syncplay
    }

    static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined(separator: "-")
    }
}

/// The fronts beside the gateway, for the signal handler to stop first (once).
final class Fronts: @unchecked Sendable {
    private let lock = NSLock()
    private var syncplay: SyncplayFront?

    func set(_ front: SyncplayFront?) {
        lock.withLock { syncplay = front }
    }

    func stop() {
        let front = lock.withLock { () -> SyncplayFront? in
            defer { syncplay = nil }
            return syncplay
        }
        front?.stop()
    }
}

/// Turns SIGTERM and SIGINT into a callback on a queue instead of killing the process.
final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "cowatch.signals")
        sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }
}
