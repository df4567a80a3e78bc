import ArgumentParser
import CowatchCore
import CowatchGateway
import CowatchSettings
import CowatchStore
import CowatchTime
import Dispatch
import Foundation
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

    @Option(help: "A config file of `key = value` lines.")
    var config: String?

    @Option(help: "Address to listen on (default 127.0.0.1).")
    var host: String?

    @Flag(help: "Listen on every address of this machine (same as --host 0.0.0.0).")
    var allInterfaces = false

    @Option(help: "TCP port for HTTP and WebSocket; 0 picks a free one (default 7480).")
    var port: String?

    @Option(help: "Where the store keeps cowatch.sqlite (default ./data).")
    var dataDir: String?

    @Option(help: "sqlite (kept across restarts, the default), memory (throwaway), or postgres (one database shared by a cluster's nodes: --database-url).")
    var store: String?

    @Option(help: "Seconds of downtime after which a playing room comes back paused (default 600).")
    var maxDowntime: String?

    @Option(help: "Largest client message in bytes; larger closes with 1009 (default 8192).")
    var maxMessageBytes: String?

    @Option(help: "Longest line in bytes; longer gets too-long (default 4096).")
    var maxLineBytes: String?

    @Option(help: "Rooms the server holds at once (default 10000).")
    var maxRooms: String?

    @Option(help: "Members per room (default 1000).")
    var maxMembers: String?

    @Option(help: "Lines one connection may have waiting behind a link being checked or a room being placed; more are refused (default 32).")
    var maxHeldLines: String?

    @Option(help: "In a cluster, frames waiting for another node's shared link to a room this node owns; past it the link is closed and its members reconnect (default 65536).")
    var relayOutboxLimit: String?

    @Option(help: "In a cluster, seconds without a word from a room's owner on a shared link before the link is given up and its members told to reconnect (default 10).")
    var relayTimeout: String?

    @Option(help: "Items in a room's queue (default 100).")
    var maxQueue: String?

    @Option(help: "Subtitle tracks one shared video may have (default 8).")
    var maxSubtitles: String?

    @Option(help: "Open connections per client IP address, plain HTTP and WebSocket alike (default 64).")
    var maxConnectionsPerAddress: String?

    @Option(help: "Open connections in all, plain HTTP included (default 50000; kept under the descriptor limit less 256).")
    var maxConnections: String?

    @Option(help: "Seconds a request may take to arrive, or a plain HTTP connection sit idle, before it is closed (default 10).")
    var httpRequestTimeout: String?

    @Option(help: "Names this server answers for in Host, besides addresses, localhost, this machine's name and the allowed origins' hosts, comma-separated (watch.example.org, *.example.org).")
    var allowedHosts: String?

    @Option(help: "Commands each connection may send per second (default 20).")
    var commandsPerSecond: String?

    @Option(help: "Commands a connection may send in a burst (default 40).")
    var commandBurst: String?

    @Option(help: "Lines a connection may send over the rate after its rate-limited error before it is closed with 1008 (default 20).")
    var rateLimitGrace: String?

    @Option(help: "Frames queued for one connection before it gets the latest state instead (default 256).")
    var outboxLimit: String?

    @Option(help: "Frames queued for one connection at which the server stops reading from it until it catches up (default 64).")
    var readPauseBacklog: String?

    @Option(help: "Seconds the server waits for a peer to answer its close frame (default 5).")
    var closeTimeout: String?

    @Option(help: "Bytes a closing peer may still send, read and discarded, before its socket is closed (default 1048576).")
    var closingReadLimit: String?

    @Option(help: "Seconds a connection may stay too slow before it is closed with 1008, and a closing one has to take what was queued (default 10).")
    var stuckTimeout: String?

    @Option(help: "Seconds between pings to each connection (default 10).")
    var pingInterval: String?

    @Option(help: "Seconds of silence after which a connection is dropped (default 35).")
    var idleTimeout: String?

    @Option(help: "Seconds a disconnected member can come back with its resume token (default 60).")
    var resumeGrace: String?

    @Option(help: "Seconds a /kick keeps the member out (default 600).")
    var kickCooldown: String?

    @Option(help: "Seconds an empty room, with its owner, policy and bans, is kept (default 2592000, 30 days).")
    var roomExpiry: String?

    @Option(help: "Seconds an empty room nobody ever used (nothing shared, said or set) is kept (default 86400, a day).")
    var unusedRoomExpiry: String?

    @Option(help: "Rooms one address may create in a minute, 0 for no limit; operators' creation tokens are not counted (default 20).")
    var roomCreationRate: String?

    @Option(help: "Bytes of chat text each room keeps for newcomers and restarts, within its 200 lines (default 32768).")
    var chatHistoryBytes: String?

    @Option(help: "Bytes of chat all rooms together keep in memory for newcomers; past it the oldest go (default 67108864).")
    var chatTotalBytes: String?

    @Option(help: "Bytes the queue's and subtitle tracks' links and titles may take, sent in every state (default 32768).")
    var maxStateBytes: String?

    @Option(help: "Whether bans and kicks also keep out the member's address: true or false (default true).")
    var addressBans: String?

    @Option(help: "Bans and kick cooldowns a room keeps, the oldest going first (default 1000).")
    var maxBans: String?

    @Option(help: "scrypt's cost N for room passwords set from now on, a power of two; each check at the door costs 128 x N x block size bytes and their time (default 1024).")
    var passwordHashCost: String?

    @Option(help: "scrypt's block size r for room passwords, 1 to 16 (default 8).")
    var passwordHashBlockSize: String?

    @Option(help: "scrypt's parallelism p for room passwords, 1 to 16; each counts as one more check (default 1).")
    var passwordHashParallelism: String?

    @Option(help: "Who controls playback in a new room: everyone or hosts (default everyone).")
    var defaultControl: String?

    @Option(help: "Web origins whose pages may connect besides the server's own, comma-separated (https://watch.example.org).")
    var allowedOrigins: String?

    @Option(help: "Addresses of proxies whose X-Forwarded-For names the client, comma-separated (127.0.0.1 behind nginx).")
    var trustedProxies: String?

    @Option(help: "The only hosts /watch and /queue may share media from, comma-separated (default: any).")
    var mediaHosts: String?

    @Option(help: "Whether /watch and /queue links are checked for media before sharing: true or false (default true).")
    var mediaCheck: String?

    @Option(help: "Whether that check may visit private, loopback and link-local addresses: true or false (default false).")
    var mediaCheckPrivate: String?

    @Option(help: "Seconds the check of a link may take, redirects included (default 4).")
    var mediaCheckTimeout: String?

    @Option(help: "Link checks in flight at once; beyond them links are shared unchecked (default 16).")
    var maxMediaChecks: String?

    @Option(help: "Links from one client address checked at once (default 2); more are refused until one is done.")
    var maxMediaChecksPerAddress: String?

    @Option(help: "The largest subtitle file the server fetches for a page, in bytes (default 1048576).")
    var maxSubtitleBytes: String?

    @Option(help: "Where the room page loads YouTube's player API (default https://www.youtube.com/iframe_api); the page's policy allows its origin.")
    var youtubeApiUrl: String?

    @Option(help: "Where the room page loads Vimeo's player API (default https://player.vimeo.com/api/player.js); the page's policy allows its origin.")
    var vimeoApiUrl: String?

    @Option(help: "For --store postgres: the database, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.")
    var databaseUrl: String?

    @Option(help: "For --store postgres: this node's name in the cluster (default: host name and port).")
    var nodeId: String?

    @Option(help: "For --store postgres: where the other nodes reach this one, ws://HOST:PORT (default ws://127.0.0.1:PORT).")
    var advertiseUrl: String?

    @Option(help: "For --store postgres: seconds a room's lease lasts unrenewed; a dead node's rooms move after it (default 1.5).")
    var leaseSeconds: String?

    @Option(help: "For --store postgres: seconds an owner holds its rooms, unchanged, while it cannot reach the database, before giving them up; 0 gives them up when their lease lapses (default 90).")
    var databaseHoldSeconds: String?

    @Option(help: "A file holding the operator's token for the admin API (/admin/...; off without it). See cowatch admin.")
    var adminTokenFile: String?

    @Option(help: "For --store postgres: a file holding the cluster's shared secret, the same on every node (at least 32 characters; openssl rand -hex 32): nodes prove it to each other on their relay links.")
    var clusterSecretFile: String?

    @Option(help: "Who may create rooms: open (anyone, the default) or token (holders of a creation token from cowatch admin).")
    var roomCreation: String?

    @Option(help: "Seconds shutdown waits for members to take their close frames (default 3).")
    var shutdownGrace: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical (default info).")
    var logLevel: String?

    @Flag(help: "Serve /echo, a plain WebSocket echo for the conformance suite.")
    var echo = false

    @Flag(help: "Offer permessage-deflate compression (costs CPU and memory per connection).")
    var permessageDeflate = false

    var flags: [String: String] {
        var flags: [String: String] = [:]
        let options: [(String, String?)] = [
            ("config", config), ("host", host), ("port", port), ("data-dir", dataDir), ("store", store),
            ("max-downtime", maxDowntime), ("max-message-bytes", maxMessageBytes), ("max-line-bytes", maxLineBytes),
            ("max-rooms", maxRooms), ("max-members", maxMembers), ("max-queue", maxQueue), ("max-held-lines", maxHeldLines), ("relay-outbox-limit", relayOutboxLimit), ("relay-timeout", relayTimeout), ("max-subtitles", maxSubtitles),
            ("max-connections-per-address", maxConnectionsPerAddress), ("commands-per-second", commandsPerSecond),
            ("command-burst", commandBurst), ("rate-limit-grace", rateLimitGrace), ("outbox-limit", outboxLimit),
            ("read-pause-backlog", readPauseBacklog), ("close-timeout", closeTimeout), ("closing-read-limit", closingReadLimit), ("stuck-timeout", stuckTimeout),
            ("ping-interval", pingInterval), ("idle-timeout", idleTimeout), ("resume-grace", resumeGrace),
            ("kick-cooldown", kickCooldown), ("room-expiry", roomExpiry), ("address-bans", addressBans),
            ("unused-room-expiry", unusedRoomExpiry), ("room-creation-rate", roomCreationRate),
            ("chat-history-bytes", chatHistoryBytes), ("chat-total-bytes", chatTotalBytes), ("max-state-bytes", maxStateBytes),
            ("max-bans", maxBans), ("password-hash-cost", passwordHashCost),
            ("password-hash-block-size", passwordHashBlockSize), ("password-hash-parallelism", passwordHashParallelism),
            ("default-control", defaultControl), ("allowed-origins", allowedOrigins),
            ("trusted-proxies", trustedProxies), ("max-connections", maxConnections),
            ("http-request-timeout", httpRequestTimeout), ("allowed-hosts", allowedHosts), ("media-hosts", mediaHosts), ("admin-token-file", adminTokenFile),
            ("cluster-secret-file", clusterSecretFile),
            ("room-creation", roomCreation), ("media-check", mediaCheck), ("media-check-private", mediaCheckPrivate),
            ("media-check-timeout", mediaCheckTimeout), ("max-media-checks", maxMediaChecks),
            ("max-media-checks-per-address", maxMediaChecksPerAddress), ("max-subtitle-bytes", maxSubtitleBytes),
            ("youtube-api-url", youtubeApiUrl), ("vimeo-api-url", vimeoApiUrl),
            ("database-url", databaseUrl), ("node-id", nodeId), ("advertise-url", advertiseUrl), ("lease-seconds", leaseSeconds),
            ("database-hold-seconds", databaseHoldSeconds),
            ("shutdown-grace", shutdownGrace), ("log-level", logLevel),
        ]
        for (key, value) in options { if let value { flags[key] = value } }
        if allInterfaces { flags["all-interfaces"] = "true" }
        if echo { flags["echo"] = "true" }
        if permessageDeflate { flags["permessage-deflate"] = "true" }
        return flags
    }

    func run() throws {
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
            guard let url = settings.databaseURL else {
                Output.error("cowatch serve: --store postgres needs --database-url postgres://USER@HOST/DATABASE")
                throw ExitCode.validationFailure
            }
            let port = settings.gateway.port
            guard settings.advertiseURL != nil || port != 0 else {
                Output.error("cowatch serve: --store postgres needs --advertise-url, or a --port other than 0")
                throw ExitCode.validationFailure
            }
            let hostName = ProcessInfo.processInfo.hostName.prefix(40).filter { $0.isLetter || $0.isNumber || "-_.".contains($0) }
            let node = settings.nodeID ?? "\(hostName)-\(port)"
            let advertise = settings.advertiseURL ?? "ws://127.0.0.1:\(port)"
            do {
                let store = try PostgresStore(url: url, node: node, fencing: true, chatLimit: settings.gateway.room.chatHistory,
                                              chatBytes: settings.gateway.room.chatHistoryBytes,
                                              logger: Logger(label: "cowatch.store"))
                let leases = PostgresLeases(url: url, settings: PostgresLeases.Settings(
                    node: node, advertiseURL: advertise, leaseSeconds: settings.leaseSeconds,
                    renewSeconds: settings.leaseSeconds / 4, holdSeconds: settings.databaseHoldSeconds), store: store, logger: Logger(label: "cowatch.cluster"), time: time)
                roomStore = store
                cluster = ClusterLink(store: store, leases: leases)
            } catch {
                Output.error("cowatch serve: \(error)")
                throw ExitCode.failure
            }
            logger.notice("store: postgres, cluster node", metadata: [
                "database": "\(PostgresStore.redacted(url))", "node": "\(node)", "advertise": "\(advertise)",
                "lease": "\(settings.leaseSeconds)s", "hold": "\(settings.databaseHoldSeconds)s"])
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
        Output.line("cowatch: serving on http://\(host):\(boundPort)/ (WebSocket ws://\(host):\(boundPort)/rooms/<room>); Ctrl-C stops")

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
