import ArgumentParser
import CowatchConfig
import CowatchCore
import CowatchGateway
import CowatchSettings
import CowatchStore
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
        """
    )

    @Option(help: ArgumentHelp(ServeSettings.help(for: "config")))
    var config: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "host")))
    var host: String?

    @Flag(help: ArgumentHelp(ServeSettings.help(for: "all-interfaces")))
    var allInterfaces = false

    @Option(help: ArgumentHelp(ServeSettings.help(for: "port")))
    var port: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "data-dir")))
    var dataDir: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "store")))
    var store: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-downtime")))
    var maxDowntime: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-message-bytes")))
    var maxMessageBytes: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-line-bytes")))
    var maxLineBytes: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-rooms")))
    var maxRooms: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-members")))
    var maxMembers: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-held-lines")))
    var maxHeldLines: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "relay-outbox-limit")))
    var relayOutboxLimit: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "relay-timeout")))
    var relayTimeout: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-queue")))
    var maxQueue: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-subtitles")))
    var maxSubtitles: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-connections-per-address")))
    var maxConnectionsPerAddress: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-connections")))
    var maxConnections: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "http-request-timeout")))
    var httpRequestTimeout: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "allowed-hosts")))
    var allowedHosts: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "commands-per-second")))
    var commandsPerSecond: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "command-burst")))
    var commandBurst: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "rate-limit-grace")))
    var rateLimitGrace: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "outbox-limit")))
    var outboxLimit: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "send-threads")))
    var sendThreads: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "send-threads-from")))
    var sendThreadsFrom: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "flush-delay")))
    var flushDelay: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "read-pause-backlog")))
    var readPauseBacklog: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "close-timeout")))
    var closeTimeout: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "closing-read-limit")))
    var closingReadLimit: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "stuck-timeout")))
    var stuckTimeout: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "ping-interval")))
    var pingInterval: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "idle-timeout")))
    var idleTimeout: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "resume-grace")))
    var resumeGrace: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "away-grace")))
    var awayGrace: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "kick-cooldown")))
    var kickCooldown: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "room-expiry")))
    var roomExpiry: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "unused-room-expiry")))
    var unusedRoomExpiry: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "room-creation-rate")))
    var roomCreationRate: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "chat-history-bytes")))
    var chatHistoryBytes: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "chat-total-bytes")))
    var chatTotalBytes: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-state-bytes")))
    var maxStateBytes: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "address-bans")))
    var addressBans: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "announce-ready-up-to")))
    var announceReadyUpTo: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-bans")))
    var maxBans: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "password-hash-cost")))
    var passwordHashCost: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "password-hash-block-size")))
    var passwordHashBlockSize: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "password-hash-parallelism")))
    var passwordHashParallelism: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "default-control")))
    var defaultControl: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "allowed-origins")))
    var allowedOrigins: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "trusted-proxies")))
    var trustedProxies: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "media-hosts")))
    var mediaHosts: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "media-check")))
    var mediaCheck: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "media-check-private")))
    var mediaCheckPrivate: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "media-check-timeout")))
    var mediaCheckTimeout: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-media-checks")))
    var maxMediaChecks: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-media-checks-per-address")))
    var maxMediaChecksPerAddress: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "max-subtitle-bytes")))
    var maxSubtitleBytes: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "youtube-api-url")))
    var youtubeApiUrl: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "vimeo-api-url")))
    var vimeoApiUrl: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "database-url")))
    var databaseUrl: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "node-id")))
    var nodeId: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "advertise-url")))
    var advertiseUrl: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "lease-seconds")))
    var leaseSeconds: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "database-hold-seconds")))
    var databaseHoldSeconds: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "admin-token-file")))
    var adminTokenFile: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "cluster-secret-file")))
    var clusterSecretFile: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "room-creation")))
    var roomCreation: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "shutdown-grace")))
    var shutdownGrace: String?

    @Option(help: ArgumentHelp(ServeSettings.help(for: "log-level")))
    var logLevel: String?

    @Flag(help: ArgumentHelp(ServeSettings.help(for: "echo")))
    var echo = false

    @Flag(help: ArgumentHelp(ServeSettings.help(for: "permessage-deflate")))
    var permessageDeflate = false

    /// The settings given on the command line, by key.
    var flags: [String: String] { SettingOptions.values(of: self) }

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
            let port = settings.gateway.port
            let hostName = ProcessInfo.processInfo.hostName.prefix(40).filter { $0.isLetter || $0.isNumber || "-_.".contains($0) }
            let node = settings.nodeID ?? "\(hostName)-\(port)"
            let advertise = settings.advertiseURL ?? "ws://127.0.0.1:\(port)"
            do {
                let store = try PostgresStore(url: url, node: node, fencing: true, chatLimit: settings.gateway.room.chatHistory,
                                              chatBytes: settings.gateway.room.chatHistoryBytes,
                                              logger: Logger(label: "cowatch.store"))
                let leases = PostgresLeases(url: url, settings: PostgresLeases.Settings(
                    node: node, advertiseURL: advertise, lease: MonotonicDuration(settings.lease),
                    renew: MonotonicDuration(settings.lease / 4), hold: MonotonicDuration(settings.databaseHold)), store: store, logger: Logger(label: "cowatch.cluster"), time: time)
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
        let gateway = Gateway(configuration: configuration, store: roomStore, cluster: cluster,
                              logger: Logger(label: "cowatch.gateway"), time: time)
        // Watching before anything is announced: a SIGTERM right after the banner
        // must still shut down gracefully.
        let signals = SignalWatcher { signal in
            logger.info("signal received, shutting down", metadata: ["signal": "\(signal)"])
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

        gateway.waitUntilStopped()
        roomStore.close()
        withExtendedLifetime(signals) {}
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
