import CowatchCore
import CowatchGateway
import CowatchTime
import SlashCommands
import CowatchConfig
import Foundation

/// One of `cowatch serve`'s settings: its key and how a text value is checked
/// and applied (the engine, shared with `cowatch bridge`, is `Sources/CowatchConfig/`).
typealias Setting = SettingKey<ServeSettings>

extension SettingKey where Target == ServeSettings {
    static let all: [Setting] = [
        Setting("config") { _, _ in },
        Setting("host") { value, settings in
            guard !value.isEmpty, value.count <= 255, !value.contains(" ") else { throw SettingsError("expected an address") }
            settings.gateway.host = value
        },
        Setting("all-interfaces") { value, settings in
            if try SettingValue.boolean(value) { settings.gateway.host = "0.0.0.0" }
        },
        Setting("port") { value, settings in
            settings.gateway.port = try SettingValue.integer(value, 0...65535)
        },
        Setting("data-dir") { value, settings in
            guard !value.isEmpty else { throw SettingsError("expected a directory") }
            settings.dataDirectory = value
        },
        Setting("store") { value, settings in
            guard let kind = ServeSettings.StoreKind(rawValue: value) else { throw SettingsError("expected sqlite, memory or postgres") }
            settings.store = kind
        },
        Setting("database-url") { value, settings in
            guard value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") else {
                throw SettingsError("expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
            }
            settings.databaseURL = value
        },
        Setting("node-id") { value, settings in
            guard (1...64).contains(value.count), value.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw SettingsError("expected 1 to 64 letters, digits, '-', '_' or '.'")
            }
            settings.nodeID = value
        },
        Setting("advertise-url") { value, settings in
            guard value.hasPrefix("ws://"), !value.hasSuffix("/"), value.count <= 200 else {
                throw SettingsError("expected ws://HOST:PORT, where the other nodes reach this one")
            }
            settings.advertiseURL = value
        },
        Setting("lease-seconds") { value, settings in
            settings.leaseSeconds = try SettingValue.number(value, 0.3...60)
        },
        Setting("database-hold-seconds") { value, settings in
            settings.databaseHoldSeconds = try SettingValue.number(value, 0...3600)
        },
        Setting("max-downtime") { value, settings in
            settings.gateway.maximumDowntimeSeconds = try SettingValue.number(value, 0...31_536_000)
        },
        Setting("max-message-bytes") { value, settings in
            settings.gateway.maximumMessageBytes = try SettingValue.integer(value, 128...(16 << 20))
        },
        Setting("max-line-bytes") { value, settings in
            settings.gateway.maximumLineBytes = try SettingValue.integer(value, 64...(16 << 20))
        },
        Setting("max-rooms") { value, settings in
            settings.gateway.maximumRooms = try SettingValue.integer(value, 1...10_000_000)
        },
        Setting("room-creation-rate") { value, settings in
            settings.gateway.roomCreationRate = try SettingValue.integer(value, 0...1_000_000)
        },
        Setting("unused-room-expiry") { value, settings in
            settings.gateway.room.unusedRoomExpiry = ServerInterval(seconds: try SettingValue.number(value, 1...31_536_000))
        },
        Setting("chat-history-bytes") { value, settings in
            settings.gateway.room.chatHistoryBytes = try SettingValue.integer(value, 0...(64 << 20))
        },
        Setting("chat-total-bytes") { value, settings in
            settings.gateway.chatTotalBytes = try SettingValue.integer(value, 0...(1 << 40))
        },
        Setting("max-state-bytes") { value, settings in
            settings.gateway.room.maximumStateBytes = try SettingValue.integer(value, 1024...(16 << 20))
        },
        Setting("max-members") { value, settings in
            settings.gateway.room.maximumMembers = try SettingValue.integer(value, 1...1_000_000)
        },
        Setting("max-connections-per-address") { value, settings in
            settings.gateway.maximumConnectionsPerAddress = try SettingValue.integer(value, 1...10_000_000)
        },
        Setting("max-connections") { value, settings in
            settings.gateway.maximumConnections = try SettingValue.integer(value, 16...10_000_000)
        },
        Setting("http-request-timeout") { value, settings in
            settings.gateway.httpRequestTimeoutSeconds = try SettingValue.integer(value, 1...3600)
        },
        Setting("allowed-hosts") { value, settings in
            let hosts = SettingValue.list(value).map { $0.lowercased() }
            for host in hosts {
                let name = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
                guard host == "*" || HostAllowlist.hostPart(name) == name else {
                    throw SettingsError("expected host names such as watch.example.org or *.example.org (no scheme, port or path), separated by commas")
                }
            }
            settings.gateway.allowedHosts = hosts
        },
        Setting("max-held-lines") { value, settings in
            settings.gateway.maximumHeldLines = try SettingValue.integer(value, 1...10_000)
        },
        Setting("relay-outbox-limit") { value, settings in
            settings.gateway.relayOutboxLimit = try SettingValue.integer(value, 16...10_000_000)
        },
        Setting("relay-timeout") { value, settings in
            settings.gateway.relayTimeoutSeconds = try SettingValue.number(value, 0.5...3600)
        },
        Setting("max-queue") { value, settings in
            settings.gateway.room.maximumQueueLength = try SettingValue.integer(value, 1...100_000)
        },
        Setting("max-subtitles") { value, settings in
            settings.gateway.room.maximumSubtitleTracks = try SettingValue.integer(value, 1...100)
        },
        Setting("commands-per-second") { value, settings in
            settings.gateway.commandsPerSecond = try SettingValue.number(value, 0.1...1_000_000)
        },
        Setting("command-burst") { value, settings in
            settings.gateway.commandBurst = try SettingValue.number(value, 1...1_000_000)
        },
        Setting("rate-limit-grace") { value, settings in
            settings.gateway.rateLimitGrace = try SettingValue.integer(value, 0...1_000_000)
        },
        Setting("read-pause-backlog") { value, settings in
            settings.gateway.readPauseBacklog = try SettingValue.integer(value, 1...1_000_000)
        },
        Setting("close-timeout") { value, settings in
            settings.gateway.closeReplyTimeoutSeconds = try SettingValue.number(value, 0.1...600)
        },
        Setting("closing-read-limit") { value, settings in
            settings.gateway.closingReadLimitBytes = try SettingValue.integer(value, 0...(1 << 30))
        },
        Setting("outbox-limit") { value, settings in
            settings.gateway.outboxLimit = try SettingValue.integer(value, 2...1_000_000)
        },
        Setting("stuck-timeout") { value, settings in
            settings.gateway.stuckTimeoutSeconds = try SettingValue.number(value, 0.1...3600)
        },
        Setting("ping-interval") { value, settings in
            settings.gateway.pingIntervalSeconds = try SettingValue.number(value, 0.1...3600)
        },
        Setting("idle-timeout") { value, settings in
            settings.gateway.idleTimeoutSeconds = try SettingValue.number(value, 0.5...86_400)
        },
        Setting("resume-grace") { value, settings in
            settings.gateway.room.resumeGrace = ServerInterval(seconds: try SettingValue.number(value, 0...86_400))
        },
        Setting("kick-cooldown") { value, settings in
            settings.gateway.room.kickCooldown = ServerInterval(seconds: try SettingValue.number(value, 0...31_536_000))
        },
        Setting("room-expiry") { value, settings in
            settings.gateway.room.roomExpiry = ServerInterval(seconds: try SettingValue.number(value, 1...31_536_000))
        },
        Setting("address-bans") { value, settings in
            settings.gateway.room.addressBans = try SettingValue.boolean(value)
        },
        Setting("max-bans") { value, settings in
            settings.gateway.room.maximumBans = try SettingValue.integer(value, 1...100_000)
        },
        Setting("password-hash-cost") { value, settings in
            try passwordHashing(&settings) { $0.cost = try SettingValue.integer(value, PasswordHashing.costs) }
        },
        Setting("password-hash-block-size") { value, settings in
            try passwordHashing(&settings) { $0.blockSize = try SettingValue.integer(value, PasswordHashing.blockSizes) }
        },
        Setting("password-hash-parallelism") { value, settings in
            try passwordHashing(&settings) { $0.parallelism = try SettingValue.integer(value, PasswordHashing.parallelisms) }
        },
        Setting("default-control") { value, settings in
            guard let control = ControlPolicy(rawValue: value.lowercased()) else {
                throw SettingsError("expected everyone or hosts")
            }
            settings.gateway.room.defaultPolicy.control = control
        },
        Setting("allowed-origins") { value, settings in
            let origins = SettingValue.list(value)
            for origin in origins where !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) || origin.hasSuffix("/") {
                throw SettingsError("expected origins such as https://watch.example.org (scheme and host, no path), separated by commas")
            }
            settings.gateway.allowedOrigins = origins
        },
        Setting("trusted-proxies") { value, settings in
            settings.gateway.trustedProxies = SettingValue.list(value)
        },
        Setting("media-hosts") { value, settings in
            let hosts = SettingValue.list(value).map { $0.lowercased() }
            for host in hosts where host.contains("/") || host.contains(":") {
                throw SettingsError("expected host names such as media.example.org, separated by commas")
            }
            settings.gateway.room.mediaHosts = hosts
        },
        Setting("media-check") { value, settings in
            settings.gateway.mediaCheck.enabled = try SettingValue.boolean(value)
        },
        Setting("media-check-private") { value, settings in
            settings.gateway.mediaCheck.allowPrivateAddresses = try SettingValue.boolean(value)
        },
        Setting("media-check-timeout") { value, settings in
            settings.gateway.mediaCheck.timeoutSeconds = try SettingValue.number(value, 0.5...30)
        },
        Setting("max-media-checks") { value, settings in
            settings.gateway.mediaCheck.maximumConcurrent = try SettingValue.integer(value, 1...1000)
        },
        Setting("max-media-checks-per-address") { value, settings in
            settings.gateway.mediaCheck.maximumPerAddress = try SettingValue.integer(value, 1...1000)
        },
        Setting("max-subtitle-bytes") { value, settings in
            settings.gateway.mediaCheck.maximumSubtitleBytes = try SettingValue.integer(value, 1024...67_108_864)
        },
        Setting("youtube-api-url") { value, settings in
            try playerScript("youtube", value, &settings)
        },
        Setting("vimeo-api-url") { value, settings in
            try playerScript("vimeo", value, &settings)
        },
        Setting("admin-token-file") { value, settings in
            // A file, so that the secret stays out of the command line and the environment.
            guard let text = try? String(contentsOfFile: value, encoding: .utf8) else {
                throw SettingsError("cannot read the admin token file")
            }
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard token.count >= 16, !token.contains(where: \.isWhitespace) else {
                throw SettingsError("the admin token file must hold one token of at least 16 characters")
            }
            settings.gateway.adminToken = token
        },
        Setting("cluster-secret-file") { value, settings in
            // A file, so that the secret stays out of the command line and the environment.
            guard let text = try? String(contentsOfFile: value, encoding: .utf8) else {
                throw SettingsError("cannot read the cluster secret file")
            }
            let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard secret.count >= 32, !secret.contains(where: \.isWhitespace) else {
                throw SettingsError("the cluster secret file must hold one secret of at least 32 characters "
                    + "(the same file on every node; openssl rand -hex 32 makes one)")
            }
            settings.gateway.clusterSecret = secret
        },
        Setting("room-creation") { value, settings in
            guard let creation = GatewayConfiguration.RoomCreation(rawValue: value.lowercased()) else {
                throw SettingsError("expected open or token")
            }
            settings.gateway.roomCreation = creation
        },
        Setting("shutdown-grace") { value, settings in
            settings.gateway.shutdownGraceSeconds = try SettingValue.number(value, 0...600)
        },
        Setting("log-level") { value, settings in
            let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
            guard levels.contains(value) else { throw SettingsError("expected one of \(levels.joined(separator: ", "))") }
            settings.logLevel = value
        },
        Setting("echo") { value, settings in
            settings.gateway.echoEndpoint = try SettingValue.boolean(value)
        },
        Setting("permessage-deflate") { value, settings in
            settings.gateway.permessageDeflate = try SettingValue.boolean(value)
        },
    ]

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
