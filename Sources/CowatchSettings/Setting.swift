import CowatchCore
import CowatchGateway
import SlashCommands
import Foundation

/// One configurable value: its key and how a text value is checked and applied.
struct Setting: Sendable {
    let key: String
    let apply: @Sendable (String, inout ServeSettings) throws -> Void

    static func named(_ key: String) -> Setting? { all.first { $0.key == key } }

    static let all: [Setting] = [
        Setting(key: "config") { _, _ in },
        Setting(key: "host") { value, settings in
            guard !value.isEmpty, value.count <= 255, !value.contains(" ") else { throw SettingsError("expected an address") }
            settings.gateway.host = value
        },
        Setting(key: "all-interfaces") { value, settings in
            if try boolean(value) { settings.gateway.host = "0.0.0.0" }
        },
        Setting(key: "port") { value, settings in
            settings.gateway.port = try integer(value, 0...65535)
        },
        Setting(key: "data-dir") { value, settings in
            guard !value.isEmpty else { throw SettingsError("expected a directory") }
            settings.dataDirectory = value
        },
        Setting(key: "store") { value, settings in
            guard let kind = ServeSettings.StoreKind(rawValue: value) else { throw SettingsError("expected sqlite, memory or postgres") }
            settings.store = kind
        },
        Setting(key: "database-url") { value, settings in
            guard value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") else {
                throw SettingsError("expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
            }
            settings.databaseURL = value
        },
        Setting(key: "node-id") { value, settings in
            guard (1...64).contains(value.count), value.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw SettingsError("expected 1 to 64 letters, digits, '-', '_' or '.'")
            }
            settings.nodeID = value
        },
        Setting(key: "advertise-url") { value, settings in
            guard value.hasPrefix("ws://"), !value.hasSuffix("/"), value.count <= 200 else {
                throw SettingsError("expected ws://HOST:PORT, where the other nodes reach this one")
            }
            settings.advertiseURL = value
        },
        Setting(key: "lease-seconds") { value, settings in
            settings.leaseSeconds = try seconds(value, 0.3...60)
        },
        Setting(key: "max-downtime") { value, settings in
            settings.gateway.maximumDowntimeSeconds = try seconds(value, 0...31_536_000)
        },
        Setting(key: "max-message-bytes") { value, settings in
            settings.gateway.maximumMessageBytes = try integer(value, 128...(16 << 20))
        },
        Setting(key: "max-line-bytes") { value, settings in
            settings.gateway.maximumLineBytes = try integer(value, 64...(16 << 20))
        },
        Setting(key: "max-rooms") { value, settings in
            settings.gateway.maximumRooms = try integer(value, 1...10_000_000)
        },
        Setting(key: "room-creation-rate") { value, settings in
            settings.gateway.roomCreationRate = try integer(value, 0...1_000_000)
        },
        Setting(key: "unused-room-expiry") { value, settings in
            settings.gateway.room.unusedRoomExpiry = ServerInterval(seconds: try seconds(value, 1...31_536_000))
        },
        Setting(key: "chat-history-bytes") { value, settings in
            settings.gateway.room.chatHistoryBytes = try integer(value, 0...(64 << 20))
        },
        Setting(key: "chat-total-bytes") { value, settings in
            settings.gateway.chatTotalBytes = try integer(value, 0...(1 << 40))
        },
        Setting(key: "max-state-bytes") { value, settings in
            settings.gateway.room.maximumStateBytes = try integer(value, 1024...(16 << 20))
        },
        Setting(key: "max-members") { value, settings in
            settings.gateway.room.maximumMembers = try integer(value, 1...1_000_000)
        },
        Setting(key: "max-connections-per-address") { value, settings in
            settings.gateway.maximumConnectionsPerAddress = try integer(value, 1...10_000_000)
        },
        Setting(key: "max-connections") { value, settings in
            settings.gateway.maximumConnections = try integer(value, 16...10_000_000)
        },
        Setting(key: "http-request-timeout") { value, settings in
            settings.gateway.httpRequestTimeoutSeconds = try integer(value, 1...3600)
        },
        Setting(key: "allowed-hosts") { value, settings in
            let hosts = list(value).map { $0.lowercased() }
            for host in hosts {
                let name = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
                guard host == "*" || HostAllowlist.hostPart(name) == name else {
                    throw SettingsError("expected host names such as watch.example.org or *.example.org (no scheme, port or path), separated by commas")
                }
            }
            settings.gateway.allowedHosts = hosts
        },
        Setting(key: "max-queue") { value, settings in
            settings.gateway.room.maximumQueueLength = try integer(value, 1...100_000)
        },
        Setting(key: "max-subtitles") { value, settings in
            settings.gateway.room.maximumSubtitleTracks = try integer(value, 1...100)
        },
        Setting(key: "commands-per-second") { value, settings in
            settings.gateway.commandsPerSecond = try seconds(value, 0.1...1_000_000)
        },
        Setting(key: "command-burst") { value, settings in
            settings.gateway.commandBurst = try seconds(value, 1...1_000_000)
        },
        Setting(key: "rate-limit-grace") { value, settings in
            settings.gateway.rateLimitGrace = try integer(value, 0...1_000_000)
        },
        Setting(key: "read-pause-backlog") { value, settings in
            settings.gateway.readPauseBacklog = try integer(value, 1...1_000_000)
        },
        Setting(key: "close-timeout") { value, settings in
            settings.gateway.closeReplyTimeoutSeconds = try seconds(value, 0.1...600)
        },
        Setting(key: "closing-read-limit") { value, settings in
            settings.gateway.closingReadLimitBytes = try integer(value, 0...(1 << 30))
        },
        Setting(key: "outbox-limit") { value, settings in
            settings.gateway.outboxLimit = try integer(value, 2...1_000_000)
        },
        Setting(key: "stuck-timeout") { value, settings in
            settings.gateway.stuckTimeoutSeconds = try seconds(value, 0.1...3600)
        },
        Setting(key: "ping-interval") { value, settings in
            settings.gateway.pingIntervalSeconds = try seconds(value, 0.1...3600)
        },
        Setting(key: "idle-timeout") { value, settings in
            settings.gateway.idleTimeoutSeconds = try seconds(value, 0.5...86_400)
        },
        Setting(key: "resume-grace") { value, settings in
            settings.gateway.room.resumeGrace = ServerInterval(seconds: try seconds(value, 0...86_400))
        },
        Setting(key: "kick-cooldown") { value, settings in
            settings.gateway.room.kickCooldown = ServerInterval(seconds: try seconds(value, 0...31_536_000))
        },
        Setting(key: "room-expiry") { value, settings in
            settings.gateway.room.roomExpiry = ServerInterval(seconds: try seconds(value, 1...31_536_000))
        },
        Setting(key: "address-bans") { value, settings in
            settings.gateway.room.addressBans = try boolean(value)
        },
        Setting(key: "max-bans") { value, settings in
            settings.gateway.room.maximumBans = try integer(value, 1...100_000)
        },
        Setting(key: "password-hash-cost") { value, settings in
            try passwordHashing(&settings) { $0.cost = try integer(value, PasswordHashing.costs) }
        },
        Setting(key: "password-hash-block-size") { value, settings in
            try passwordHashing(&settings) { $0.blockSize = try integer(value, PasswordHashing.blockSizes) }
        },
        Setting(key: "password-hash-parallelism") { value, settings in
            try passwordHashing(&settings) { $0.parallelism = try integer(value, PasswordHashing.parallelisms) }
        },
        Setting(key: "default-control") { value, settings in
            guard let control = ControlPolicy(rawValue: value.lowercased()) else {
                throw SettingsError("expected everyone or hosts")
            }
            settings.gateway.room.defaultPolicy.control = control
        },
        Setting(key: "allowed-origins") { value, settings in
            let origins = list(value)
            for origin in origins where !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) || origin.hasSuffix("/") {
                throw SettingsError("expected origins such as https://watch.example.org (scheme and host, no path), separated by commas")
            }
            settings.gateway.allowedOrigins = origins
        },
        Setting(key: "trusted-proxies") { value, settings in
            settings.gateway.trustedProxies = list(value)
        },
        Setting(key: "media-hosts") { value, settings in
            let hosts = list(value).map { $0.lowercased() }
            for host in hosts where host.contains("/") || host.contains(":") {
                throw SettingsError("expected host names such as media.example.org, separated by commas")
            }
            settings.gateway.room.mediaHosts = hosts
        },
        Setting(key: "media-check") { value, settings in
            settings.gateway.mediaCheck.enabled = try boolean(value)
        },
        Setting(key: "media-check-private") { value, settings in
            settings.gateway.mediaCheck.allowPrivateAddresses = try boolean(value)
        },
        Setting(key: "media-check-timeout") { value, settings in
            settings.gateway.mediaCheck.timeoutSeconds = try seconds(value, 0.5...30)
        },
        Setting(key: "max-media-checks") { value, settings in
            settings.gateway.mediaCheck.maximumConcurrent = try integer(value, 1...1000)
        },
        Setting(key: "max-media-checks-per-address") { value, settings in
            settings.gateway.mediaCheck.maximumPerAddress = try integer(value, 1...1000)
        },
        Setting(key: "max-subtitle-bytes") { value, settings in
            settings.gateway.mediaCheck.maximumSubtitleBytes = try integer(value, 1024...67_108_864)
        },
        Setting(key: "youtube-api-url") { value, settings in
            try playerScript("youtube", value, &settings)
        },
        Setting(key: "vimeo-api-url") { value, settings in
            try playerScript("vimeo", value, &settings)
        },
        Setting(key: "admin-token-file") { value, settings in
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
        Setting(key: "room-creation") { value, settings in
            guard let creation = GatewayConfiguration.RoomCreation(rawValue: value.lowercased()) else {
                throw SettingsError("expected open or token")
            }
            settings.gateway.roomCreation = creation
        },
        Setting(key: "shutdown-grace") { value, settings in
            settings.gateway.shutdownGraceSeconds = try seconds(value, 0...600)
        },
        Setting(key: "log-level") { value, settings in
            let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
            guard levels.contains(value) else { throw SettingsError("expected one of \(levels.joined(separator: ", "))") }
            settings.logLevel = value
        },
        Setting(key: "echo") { value, settings in
            settings.gateway.echoEndpoint = try boolean(value)
        },
        Setting(key: "permessage-deflate") { value, settings in
            settings.gateway.permessageDeflate = try boolean(value)
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

    static func integer(_ text: String, _ range: ClosedRange<Int>) throws -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw SettingsError("expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    static func seconds(_ text: String, _ range: ClosedRange<Double>) throws -> Double {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite, range.contains(value) else {
            throw SettingsError("expected a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A comma-separated list; blanks around items and empty items are dropped.
    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func boolean(_ text: String) throws -> Bool {
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw SettingsError("expected true or false")
        }
    }
}

/// The config file: `key = value` lines, `#` comments, blank lines ignored.
enum ConfigFile {
    struct Lines {
        var values: [String: String] = [:]
        var lineNumbers: [String: Int] = [:]
    }

    static func read(path: String) throws -> Lines {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SettingsError("cannot read the config file \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SettingsError("the config file \(path) is not UTF-8 text")
        }
        var lines = Lines()
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            let parts = trimmed.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty else {
                throw SettingsError("\(path):\(index + 1): expected key = value")
            }
            var value = parts[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            lines.values[parts[0]] = value
            lines.lineNumbers[parts[0]] = index + 1
        }
        return lines
    }
}
