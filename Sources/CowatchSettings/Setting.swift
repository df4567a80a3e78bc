import CowatchCore
import CowatchGateway
import CowatchSyncplay
import CowatchTime
import SlashCommands
import CowatchConfig
import Foundation

/// One of `cowatch serve`'s settings, declared once: key, meaning, form, default
/// (read from a fresh `ServeSettings`) and how a text value is checked and
/// applied (the engine, shared with `cowatch bridge`, is `Sources/CowatchConfig/`).
public typealias Setting = SettingKey<ServeSettings>

extension SettingKey where Target == ServeSettings {
    static let sendThreadRange = 0...64

    // swiftlint:disable:next function_body_length
    static let all: [Setting] = [
        Setting("config", help: "a config file of `key = value` lines", form: "FILE") { _, _ in },
        Setting("host", help: "address to listen on", form: "ADDRESS", shown: { $0.gateway.host }) { value, settings in
            guard !value.isEmpty, value.count <= 255, !value.contains(" ") else { throw SettingsError("expected an address") }
            settings.gateway.host = value
        },
        Setting("all-interfaces", help: "listen on every address of this machine (same as host = 0.0.0.0)", form: "true|false",
                isSwitch: true, shown: { _ in "false" }) { value, settings in
            if try SettingValue.boolean(value) { settings.gateway.host = "0.0.0.0" }
        },
        .integer("port", 0...65535, \.gateway.port, help: "TCP port for HTTP and WebSocket; 0 picks a free one", form: "PORT"),
        Setting("data-dir", help: "where the store keeps cowatch.sqlite", form: "DIRECTORY", shown: { $0.dataDirectory }) { value, settings in
            guard !value.isEmpty else { throw SettingsError("expected a directory") }
            settings.dataDirectory = value
        },
        Setting("store", help: "where rooms are kept: sqlite (across restarts), memory (thrown away when the server stops), or postgres (one database shared by a cluster's nodes: --database-url)",
                form: "sqlite|memory|postgres", shown: { $0.store.rawValue }) { value, settings in
            guard let kind = ServeSettings.StoreKind(rawValue: value) else { throw SettingsError("expected sqlite, memory or postgres") }
            settings.store = kind
        },
        Setting("database-url", help: "for --store postgres: the database, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE", form: "URL") { value, settings in
            guard value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") else {
                throw SettingsError("expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
            }
            settings.databaseURL = value
        },
        Setting("node-id", help: "for --store postgres: this node's name in the cluster (default: host name and port)", form: "NAME") { value, settings in
            guard (1...64).contains(value.count), value.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw SettingsError("expected 1 to 64 letters, digits, '-', '_' or '.'")
            }
            settings.nodeID = value
        },
        Setting("advertise-url", help: "for --store postgres: where the other nodes reach this one, ws://HOST:PORT (default ws://127.0.0.1:PORT)",
                form: "URL") { value, settings in
            guard value.hasPrefix("ws://"), !value.hasSuffix("/"), value.count <= 200 else {
                throw SettingsError("expected ws://HOST:PORT, where the other nodes reach this one")
            }
            settings.advertiseURL = value
        },
        .duration("lease-seconds", .milliseconds(300)...(.seconds(60)), \.lease,
                  help: "for --store postgres: seconds a room's lease lasts unrenewed; a dead node's rooms move after it"),
        .duration("database-hold-seconds", .zero...(.seconds(3600)), \.databaseHold,
                  help: "for --store postgres: seconds an owner holds its rooms, unchanged, while it cannot reach the database, before giving them up; 0 gives them up when their lease lapses"),
        .duration("max-downtime", .zero...(.seconds(31_536_000)), \.gateway.maximumDowntime,
                  help: "seconds of downtime after which a playing room comes back paused"),
        .integer("max-message-bytes", 128...(16 << 20), \.gateway.maximumMessageBytes,
                 help: "largest client message in bytes; larger closes with 1009"),
        .integer("max-line-bytes", 64...(16 << 20), \.gateway.maximumLineBytes, help: "longest line in bytes; longer gets too-long"),
        .integer("max-rooms", 1...10_000_000, \.gateway.maximumRooms, help: "rooms the server holds at once"),
        .integer("room-creation-rate", 0...1_000_000, \.gateway.roomCreationRate,
                 help: "rooms one address may create in a minute, 0 for no limit; operators' creation tokens are not counted"),
        .duration("unused-room-expiry", .seconds(1)...(.seconds(31_536_000)), \.unusedRoomExpiry,
                  help: "seconds an empty room nobody ever used (nothing shared, said or set) is kept"),
        .integer("chat-history-bytes", 0...(64 << 20), \.gateway.room.chatHistoryBytes,
                 help: "bytes of chat text each room keeps for newcomers and restarts, within its 200 lines"),
        .integer("chat-total-bytes", 0...(1 << 40), \.gateway.chatTotalBytes,
                 help: "bytes of chat all rooms together keep in memory for newcomers; past it the oldest go"),
        .integer("max-state-bytes", 1024...(16 << 20), \.gateway.room.maximumStateBytes,
                 help: "bytes the queue's and subtitle tracks' links and titles may take, sent in every state"),
        .integer("max-members", 1...1_000_000, \.gateway.room.maximumMembers, help: "members per room"),
        .integer("max-connections-per-address", 1...10_000_000, \.gateway.maximumConnectionsPerAddress,
                 help: "open connections per client IP address, plain HTTP and WebSocket alike"),
        .integer("max-connections", 16...10_000_000, \.gateway.maximumConnections,
                 help: "open connections in all, plain HTTP included; kept under the descriptor limit less 256"),
        wholeSeconds("http-request-timeout", 1...3600, \.gateway.httpRequestTimeout,
                             help: "seconds a request may take to arrive, or a plain HTTP connection sit idle, before it is closed"),
        Setting("allowed-hosts", help: "names this server answers for in Host, besides addresses, localhost, this machine's name and the allowed origins' hosts, comma-separated (watch.example.org, *.example.org)",
                form: "HOSTS", shown: { shownList($0.gateway.allowedHosts) }) { value, settings in
            let hosts = SettingValue.list(value).map { $0.lowercased() }
            for host in hosts {
                let name = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
                guard host == "*" || HostAllowlist.hostPart(name) == name else {
                    throw SettingsError("expected host names such as watch.example.org or *.example.org (no scheme, port or path), separated by commas")
                }
            }
            settings.gateway.allowedHosts = hosts
        },
        .integer("max-held-lines", 1...10_000, \.gateway.maximumHeldLines,
                 help: "lines one connection may have waiting behind a link being checked or a room being placed; more are refused"),
        .integer("relay-outbox-limit", 16...10_000_000, \.gateway.relayOutboxLimit,
                 help: "in a cluster, frames waiting for another node's shared link to a room this node owns; past it the link is closed and its members reconnect"),
        .duration("relay-timeout", .milliseconds(500)...(.seconds(3600)), \.gateway.relayTimeout,
                  help: "in a cluster, seconds without a word from a room's owner on a shared link before the link is given up and its members told to reconnect"),
        .integer("max-queue", 1...100_000, \.gateway.room.maximumQueueLength, help: "items in a room's queue"),
        .integer("max-subtitles", 1...100, \.gateway.room.maximumSubtitleTracks, help: "subtitle tracks one shared video may have"),
        .number("commands-per-second", 0.1...1_000_000, \.gateway.commandsPerSecond, help: "commands each connection may send per second"),
        .number("command-burst", 1...1_000_000, \.gateway.commandBurst, help: "commands a connection may send in a burst"),
        .integer("rate-limit-grace", 0...1_000_000, \.gateway.rateLimitGrace,
                 help: "lines a connection may send over the rate after its rate-limited error before it is closed with 1008"),
        .integer("read-pause-backlog", 1...1_000_000, \.gateway.readPauseBacklog,
                 help: "frames queued for one connection at which the server stops reading from it until it catches up"),
        .duration("close-timeout", .milliseconds(100)...(.seconds(600)), \.gateway.closeReplyTimeout,
                  help: "seconds the server waits for a peer to answer its close frame"),
        .integer("closing-read-limit", 0...(1 << 30), \.gateway.closingReadLimitBytes,
                 help: "bytes a closing peer may still send, read and discarded, before its socket is closed"),
        .integer("outbox-limit", 2...1_000_000, \.gateway.outboxLimit,
                 help: "frames queued for one connection before it gets the latest state instead"),
        Setting("send-threads", help: "threads besides the service thread that make a big broadcast's socket writes, 0 for none; auto: one less than the cores, at most 4",
                form: "N|auto", bounds: "auto, or \(SettingValue.bounds(sendThreadRange))",
                shown: { $0.gateway.sendThreads.map(String.init) ?? "auto" }) { value, settings in
            settings.gateway.sendThreads = value.lowercased() == "auto" ? nil : try SettingValue.integer(value, sendThreadRange)
        },
        .integer("send-threads-from", 2...1_000_000, \.gateway.sendThreadsFrom,
                 help: "socket writes in one go from which they are shared with the send threads"),
        .duration("flush-delay", .zero...(.milliseconds(100)), \.gateway.flushDelay,
                  help: "seconds an event's writes may wait for the other events ready at the same time, to leave with theirs; 0 writes each event's at once"),
        .duration("stuck-timeout", .milliseconds(100)...(.seconds(3600)), \.gateway.stuckTimeout,
                  help: "seconds a connection may stay too slow before it is closed with 1008, and a closing one has to take what was queued"),
        .duration("ping-interval", .milliseconds(100)...(.seconds(3600)), \.gateway.pingInterval, help: "seconds between pings to each connection"),
        .duration("idle-timeout", .milliseconds(500)...(.seconds(86_400)), \.gateway.idleTimeout,
                  help: "seconds of silence after which a connection is dropped"),
        .duration("resume-grace", .zero...(.seconds(86_400)), \.resumeGrace,
                  help: "seconds a disconnected member can come back with its resume token"),
        .duration("away-grace", .zero...(.seconds(86_400)), \.awayGrace,
                  help: "seconds a member whose connection closed while away (a page in the background, suspended as away) can come back; the longer of this and resume-grace"),
        .duration("kick-cooldown", .zero...(.seconds(31_536_000)), \.kickCooldown, help: "seconds a /kick keeps the member out"),
        .duration("room-expiry", .seconds(1)...(.seconds(31_536_000)), \.roomExpiry,
                  help: "seconds an empty room, with its owner, policy and bans, is kept"),
        .boolean("address-bans", \.gateway.room.addressBans, help: "whether bans and kicks also keep out the member's address"),
        .integer("announce-ready-up-to", 0...1_000_000, \.gateway.room.readinessAnnouncedUpTo,
                 help: "players a room may have for each one's /ready to be told to every member; in a bigger room it is not (a start would send players x players frames), and the state that starts the group says all are ready"),
        .integer("max-bans", 1...100_000, \.gateway.room.maximumBans, help: "bans and kick cooldowns a room keeps, the oldest going first"),
        Setting("password-hash-cost", help: "scrypt's cost N for room passwords set from now on, a power of two; each check at the door costs 128 x N x block size bytes and their time",
                form: "N", bounds: "a power of two, \(SettingValue.bounds(PasswordHashing.costs))", shown: { String($0.gateway.room.passwordHashing.cost) }) { value, settings in
            try passwordHashing(&settings) { $0.cost = try SettingValue.integer(value, PasswordHashing.costs) }
        },
        Setting("password-hash-block-size", help: "scrypt's block size r for room passwords",
                form: "N", bounds: SettingValue.bounds(PasswordHashing.blockSizes), shown: { String($0.gateway.room.passwordHashing.blockSize) }) { value, settings in
            try passwordHashing(&settings) { $0.blockSize = try SettingValue.integer(value, PasswordHashing.blockSizes) }
        },
        Setting("password-hash-parallelism", help: "scrypt's parallelism p for room passwords; each counts as one more check",
                form: "N", bounds: SettingValue.bounds(PasswordHashing.parallelisms), shown: { String($0.gateway.room.passwordHashing.parallelism) }) { value, settings in
            try passwordHashing(&settings) { $0.parallelism = try SettingValue.integer(value, PasswordHashing.parallelisms) }
        },
        Setting("default-control", help: "who controls playback in a new room: everyone or hosts", form: "everyone|hosts",
                shown: { $0.gateway.room.defaultPolicy.control.rawValue }) { value, settings in
            guard let control = ControlPolicy(rawValue: value.lowercased()) else {
                throw SettingsError("expected everyone or hosts")
            }
            settings.gateway.room.defaultPolicy.control = control
        },
        Setting("allowed-origins", help: "web origins whose pages may connect besides the server's own, comma-separated (https://watch.example.org)",
                form: "ORIGINS", shown: { shownList($0.gateway.allowedOrigins) }) { value, settings in
            let origins = SettingValue.list(value)
            for origin in origins where !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) || origin.hasSuffix("/") {
                throw SettingsError("expected origins such as https://watch.example.org (scheme and host, no path), separated by commas")
            }
            settings.gateway.allowedOrigins = origins
        },
        Setting("trusted-proxies", help: "addresses of proxies whose X-Forwarded-For names the client, comma-separated (127.0.0.1 behind nginx)",
                form: "ADDRESSES", shown: { shownList($0.gateway.trustedProxies) }) { value, settings in
            settings.gateway.trustedProxies = SettingValue.list(value)
        },
        Setting("media-hosts", help: "the only hosts /watch and /queue may share media from, comma-separated (default: any)",
                form: "HOSTS", shown: { shownList($0.gateway.room.mediaHosts) }) { value, settings in
            let hosts = SettingValue.list(value).map { $0.lowercased() }
            for host in hosts where host.contains("/") || host.contains(":") {
                throw SettingsError("expected host names such as media.example.org, separated by commas")
            }
            settings.gateway.room.mediaHosts = hosts
        },
        .boolean("media-check", \.gateway.mediaCheck.enabled, help: "whether /watch and /queue links are checked for media before sharing"),
        .boolean("media-check-private", \.gateway.mediaCheck.allowPrivateAddresses,
                 help: "whether that check may visit private, loopback and link-local addresses"),
        .duration("media-check-timeout", .milliseconds(500)...(.seconds(30)), \.mediaCheckTimeout,
                  help: "seconds the check of a link may take, redirects included"),
        .integer("max-media-checks", 1...1000, \.gateway.mediaCheck.maximumConcurrent,
                 help: "link checks in flight at once; beyond them links are shared unchecked"),
        .integer("max-media-checks-per-address", 1...1000, \.gateway.mediaCheck.maximumPerAddress,
                 help: "links from one client address checked at once; more are refused until one is done"),
        .integer("max-subtitle-bytes", 1024...67_108_864, \.gateway.mediaCheck.maximumSubtitleBytes,
                 help: "the largest subtitle file the server fetches for a page, in bytes"),
        Setting("youtube-api-url", help: "where the room page loads YouTube's player API; the page's policy allows its origin",
                form: "URL", shown: { $0.gateway.playerScripts.urls["youtube"] }) { value, settings in
            try playerScript("youtube", value, &settings)
        },
        Setting("vimeo-api-url", help: "where the room page loads Vimeo's player API; the page's policy allows its origin",
                form: "URL", shown: { $0.gateway.playerScripts.urls["vimeo"] }) { value, settings in
            try playerScript("vimeo", value, &settings)
        },
        Setting("admin-token-file", help: "a file holding the operator's token for the admin API (/admin/...; off without it); see cowatch admin",
                form: "FILE") { value, settings in
            settings.gateway.adminToken = try secretFile(value, "the admin token file", minimum: 16,
                                                         holds: "one token of at least 16 characters")
        },
        Setting("cluster-secret-file", help: "for --store postgres: a file holding the cluster's shared secret, the same on every node (at least 32 characters; openssl rand -hex 32): nodes prove it to each other on their relay links",
                form: "FILE") { value, settings in
            settings.gateway.clusterSecret = try secretFile(value, "the cluster secret file", minimum: 32,
                holds: "one secret of at least 32 characters (the same file on every node; openssl rand -hex 32 makes one)")
        },
        Setting("syncplay-port", help: "a TCP port for Syncplay's clients (docs/syncplay.md); 0 picks a free one; unset: none",
                form: "PORT", shown: { $0.syncplayPort.map(String.init) }) { value, settings in
            settings.syncplayPort = try SettingValue.integer(value, 0...65535)
        },
        Setting("syncplay-host", help: "the address Syncplay's port listens on (default: host)", form: "ADDRESS",
                shown: { $0.syncplayHost ?? $0.gateway.host }) { value, settings in
            guard !value.isEmpty, value.count <= 255, !value.contains(" ") else { throw SettingsError("expected an address") }
            settings.syncplayHost = value
        },
        Setting("syncplay-certificate", help: "a PEM certificate chain: with syncplay-key, Syncplay's clients may upgrade to TLS (its TLS message)",
                form: "FILE") { value, settings in
            guard FileManager.default.isReadableFile(atPath: value) else { throw SettingsError("cannot read \(value)") }
            settings.syncplay.certificate = value
        },
        Setting("syncplay-key", help: "the PEM private key of syncplay-certificate", form: "FILE") { value, settings in
            guard FileManager.default.isReadableFile(atPath: value) else { throw SettingsError("cannot read \(value)") }
            settings.syncplay.key = value
        },
        .integer("syncplay-connections", 1...1_000_000, \.syncplay.maximumConnections,
                 help: "Syncplay connections at most; one more is told so and closed"),
        .integer("syncplay-connections-per-address", 1...100_000, \.syncplay.maximumConnectionsPerAddress,
                 help: "Syncplay connections from one address at most"),
        .integer("syncplay-line-bytes", 1024...1_048_576, \.syncplay.maximumLineBytes,
                 help: "bytes of one line from a Syncplay client at most (a shared playlist is one line); longer is told and closed"),
        Setting("syncplay-motd", help: "the message Syncplay's clients show on joining", form: "TEXT",
                shown: { $0.syncplay.session.motd.isEmpty ? nil : $0.syncplay.session.motd }) { value, settings in
            guard value.count <= 2000 else { throw SettingsError("expected at most 2000 characters") }
            settings.syncplay.session.motd = value
        },
        Setting("voice-url", help: "the media server for voice: Janus's WebSocket API on this machine, ws://127.0.0.1:PORT (deploy/voice/janus-run starts it); unset: no voice",
                form: "URL", shown: { $0.gateway.voice.janusURL }) { value, settings in
            guard value.hasPrefix("ws://"), value.count <= 200, !value.contains(" ") else {
                throw SettingsError("expected ws://127.0.0.1:PORT, where Janus's WebSocket transport listens")
            }
            settings.gateway.voice.janusURL = value
        },
        Setting("voice-secret-file", help: "a file holding Janus's API secret (deploy/voice/janus-run makes it when missing)",
                form: "FILE") { value, settings in
            // Janus's configuration quotes it (deploy/voice/janus-run): letters, digits, - and _ alone.
            settings.gateway.voice.janusSecret = try secretFile(value, "the voice secret file", minimum: 16,
                holds: "one secret of at least 16 letters, digits, - or _") { secret in
                secret.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) }
            }
        },
        .integer("voice-rooms", 1...1_000_000, \.gateway.voice.maximumRooms, help: "rooms with voice at once on this server; a seat in one more is refused"),
        .integer("voice-seats", 1...10_000, \.gateway.room.voice.seats, help: "members of one room in its voice at once"),
        .integer("voice-speakers", 1...10_000, \.gateway.room.voice.speakers,
                 help: "members of one room who may have their microphone on at once; past it a newcomer joins muted"),
        Setting("voice-turn-urls", help: "TURN servers for members' pages, comma-separated (turn:turn.example.org:3478?transport=udp); with voice-turn-secret-file",
                form: "URLS", shown: { shownList($0.gateway.voice.turnURLs) }) { value, settings in
            let urls = SettingValue.list(value)
            guard urls.allSatisfy({ ($0.hasPrefix("turn:") || $0.hasPrefix("turns:")) && $0.count <= 200 && !$0.contains(" ") }) else {
                throw SettingsError("expected turn:HOST:PORT or turns:HOST:PORT addresses, separated by commas")
            }
            settings.gateway.voice.turnURLs = urls
        },
        Setting("voice-turn-secret-file", help: "a file holding the TURN server's shared secret (coturn's static-auth-secret): each ticket's credentials are made from it",
                form: "FILE") { value, settings in
            settings.gateway.voice.turnSecret = try secretFile(value, "the TURN secret file", minimum: 16,
                                                               holds: "one secret of at least 16 characters")
        },
        Setting("voice-stun-urls", help: "STUN servers for members' pages, comma-separated (stun:HOST:PORT)",
                form: "URLS", shown: { shownList($0.gateway.voice.stunURLs) }) { value, settings in
            let urls = SettingValue.list(value)
            guard urls.allSatisfy({ $0.hasPrefix("stun:") && $0.count <= 200 && !$0.contains(" ") }) else {
                throw SettingsError("expected stun:HOST:PORT addresses, separated by commas")
            }
            settings.gateway.voice.stunURLs = urls
        },
        .integer("voice-jitter-packets", 0...50, \.gateway.voice.jitterPackets,
                 help: "packets (20 ms each) the media server holds of each speaker before mixing: more rides out a jittery network, each adds 20 ms of delay"),
        .duration("voice-credential-lifetime", .seconds(60)...(.seconds(86_400)), \.gateway.voice.credentialLifetime,
                  help: "seconds a voice ticket's TURN credentials work"),
        Setting("room-creation", help: "who may create rooms: open (anyone) or token (holders of a creation token from cowatch admin)",
                form: "open|token", shown: { $0.gateway.roomCreation.rawValue }) { value, settings in
            guard let creation = GatewayConfiguration.RoomCreation(rawValue: value.lowercased()) else {
                throw SettingsError("expected open or token")
            }
            settings.gateway.roomCreation = creation
        },
        .duration("shutdown-grace", .zero...(.seconds(600)), \.gateway.shutdownGrace,
                  help: "seconds shutdown waits for members to take their close frames"),
        Setting("log-level", help: "how much is logged: trace, debug, info, notice, warning, error or critical", form: "LEVEL", shown: { $0.logLevel }) { value, settings in
            let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
            guard levels.contains(value) else { throw SettingsError("expected one of \(levels.joined(separator: ", "))") }
            settings.logLevel = value
        },
        .boolean("echo", \.gateway.echoEndpoint, help: "serve /echo, a plain WebSocket echo for the conformance suite", isSwitch: true),
        .boolean("permessage-deflate", \.gateway.permessageDeflate,
                 help: "offer permessage-deflate compression (costs CPU and memory per connection)", isSwitch: true),
    ]

    /// What no single value can say: a cluster node needs its database and an
    /// address the other nodes can reach.
    static let rules: [SettingRule<ServeSettings>] = [
        SettingRule { settings throws(SettingsError) in
            guard (settings.syncplay.certificate == nil) == (settings.syncplay.key == nil) else {
                throw SettingsError("syncplay-certificate and syncplay-key go together")
            }
        },
        SettingRule { settings throws(SettingsError) in
            guard settings.store != .postgres || settings.databaseURL != nil else {
                throw SettingsError("--store postgres needs --database-url postgres://USER@HOST/DATABASE")
            }
        },
        SettingRule { settings throws(SettingsError) in
            guard settings.store != .postgres || settings.advertiseURL != nil || settings.gateway.port != 0 else {
                throw SettingsError("--store postgres needs --advertise-url, or a --port other than 0")
            }
        },
    ]

    /// A length of time in whole seconds (what libwebsockets' timers take).
    static func wholeSeconds(_ name: String, _ range: ClosedRange<Int>, _ path: WritableKeyPath<ServeSettings, Duration> & Sendable,
                             help: String) -> Setting {
        Setting(name, help: help, form: "SECONDS", bounds: "whole, " + SettingValue.bounds(range), shown: { SettingValue.written($0[keyPath: path]) }) { value, settings in
            settings[keyPath: path] = .seconds(try SettingValue.integer(value, range))
        }
    }

    /// The one secret a file holds, read from a file so that it stays out of
    /// the command line and the environment: at least `minimum` characters,
    /// no spaces, and what `allowed` asks besides.
    static func secretFile(_ path: String, _ what: String, minimum: Int, holds: String,
                           allowed: (String) -> Bool = { _ in true }) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw SettingsError("cannot read \(what)")
        }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard secret.count >= minimum, !secret.contains(where: \.isWhitespace), allowed(secret) else {
            throw SettingsError("\(what) must hold \(holds)")
        }
        return secret
    }

    /// A list as a config file writes it; nothing for an empty one.
    static func shownList(_ items: [String]) -> String? {
        items.isEmpty ? nil : items.joined(separator: ", ")
    }

    /// A provider's player API script (PlayerScripts), checked as the page's
    /// policy and the room page will take it.
    static func playerScript(_ kind: String, _ value: String, _ settings: inout ServeSettings) throws {
        do {
            try settings.gateway.playerScripts.set(kind, value.trimmingCharacters(in: .whitespaces))
        } catch {
            throw SettingsError(error.message)
        }
    }

    /// One of scrypt's parameters, checked as scrypt will take them.
    static func passwordHashing(_ settings: inout ServeSettings, _ change: (inout PasswordHashing) throws -> Void) throws {
        var hashing = settings.gateway.room.passwordHashing
        try change(&hashing)
        if let problem = hashing.problem { throw SettingsError(problem) }
        settings.gateway.room.passwordHashing = hashing
    }
}

/// The settings kept in other units (a room's milliseconds, the media check's
/// seconds) seen as `Duration`s, as their declarations take them.
extension ServeSettings {
    var unusedRoomExpiry: Duration {
        get { .milliseconds(gateway.room.unusedRoomExpiry.milliseconds) }
        set { gateway.room.unusedRoomExpiry = ServerInterval(newValue) }
    }

    var resumeGrace: Duration {
        get { .milliseconds(gateway.room.resumeGrace.milliseconds) }
        set { gateway.room.resumeGrace = ServerInterval(newValue) }
    }

    var awayGrace: Duration {
        get { .milliseconds(gateway.room.awayGrace.milliseconds) }
        set { gateway.room.awayGrace = ServerInterval(newValue) }
    }

    var kickCooldown: Duration {
        get { .milliseconds(gateway.room.kickCooldown.milliseconds) }
        set { gateway.room.kickCooldown = ServerInterval(newValue) }
    }

    var roomExpiry: Duration {
        get { .milliseconds(gateway.room.roomExpiry.milliseconds) }
        set { gateway.room.roomExpiry = ServerInterval(newValue) }
    }

    var mediaCheckTimeout: Duration {
        get { gateway.mediaCheck.timeout.duration }
        set { gateway.mediaCheck.timeout = MonotonicDuration(newValue) }
    }
}
