import CowatchClient
import CowatchConfig
import SlashCommands

/// Every key `cowatch bridge` takes, declared once: its meaning (the words of
/// `--help`, of deploy/bridge.conf.example and of docs/settings.md), its form,
/// its default (read from a fresh `Draft`) and how its value is checked; the
/// sources and the pairs are resolved in `BridgeSettings.swift`.
extension BridgeSettings {
    // swiftlint:disable:next function_body_length
    static let keys: [Key] = [
        Key("irc", help: "the channel, irc://HOST[:PORT]/#channel (6667) or ircs://HOST[:PORT]/#channel (TLS, 6697)", form: "URL") { value, draft throws(SettingsError) in
            guard let address = IRCAddress(value) else { throw SettingsError("expected irc://HOST[:PORT]/#channel or ircs://HOST[:PORT]/#channel") }
            draft.irc = address
        },
        Key("matrix", help: "the Matrix room of a pair, #alias:server or !id:server (instead of irc =), on the homeserver below", form: "ROOM") { value, draft throws(SettingsError) in
            draft.matrix = try matrixRoom(value)
        },
        Key("homeserver", help: "the Matrix homeserver's client address, https://HOST[:PORT] (as in a client's sign-in)", form: "URL") { value, draft throws(SettingsError) in
            draft.homeserver = try homeserver(value)
        },
        Key("matrix-user", help: "the bridge's own Matrix user, @name:server", form: "USER") { value, draft throws(SettingsError) in
            draft.matrixUser = try matrixUser(value)
        },
        Key("matrix-token", help: "the Matrix user's access token (or matrix-password instead)", form: "TOKEN") { value, draft throws(SettingsError) in
            draft.matrixToken = try text(value, "a token", 1...1000)
        },
        Key("matrix-password", help: "the Matrix user's password, to log in when there is no access token; the token it gives is kept in matrix-state-file", form: "PASSWORD") { value, draft throws(SettingsError) in
            draft.matrixPassword = try text(value, "a password", 1...1000)
        },
        Key("matrix-state-file", help: "where the Matrix login and sync position are kept, readable by the bridge's user alone (default OWNER-KEY-DIRECTORY/matrix-state.json)", form: "FILE") { value, draft throws(SettingsError) in
            draft.matrixStateFile = try text(value, "a file", 1...4096)
        },
        .number("matrix-lines-per-second", 0.01...100, \.matrixPacing.perSecond,
            help: "messages per second the bridge sends to the homeserver after its burst"),
        .integer("matrix-burst", 1...100, \.matrixPacing.burst,
            help: "messages the bridge may send to the homeserver at once"),
        .integer("matrix-queue", 1...100_000, \.matrixPacing.maximumQueued,
            help: "messages kept waiting for the homeserver at most; more are dropped and logged"),
        .duration("matrix-sync-timeout", .seconds(1)...(.seconds(300)), \.matrixSyncTimeout,
            help: "seconds the homeserver may hold a sync open when there is nothing new"),
        .duration("matrix-reconnect-max", .seconds(1)...(.seconds(3600)), \.matrixReconnectMaximum,
            help: "the longest wait, in seconds, between tries to reach the homeserver"),
        .integer("matrix-message-lines", 1...1000, \.matrixMessageLines,
            help: "lines of one Matrix message relayed to the room at most"),
        Key("room", help: "the Cowatch room: 1 to 64 of A-Z a-z 0-9 . _ -", form: "ROOM") { value, draft throws(SettingsError) in
            guard (1...64).contains(value.count), value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
                throw SettingsError("a room name is 1 to 64 of A-Z a-z 0-9 . _ -")
            }
            draft.room = value.lowercased()
        },
        Key("server", help: "the Cowatch server, ws://HOST:PORT beside it, or wss://HOST (https://HOST) through its TLS proxy", form: "URL", shown: { $0.server }) { value, draft throws(SettingsError) in
            let trimmed = value.hasSuffix("/") ? String(value.dropLast()) : value
            guard let address = WebSocketAddress(trimmed), address.path == "/" else {
                throw SettingsError("expected ws://HOST:PORT, or wss://HOST[:PORT] for a server behind TLS (no path)")
            }
            draft.server = address.webSocketURL.hasSuffix("/") ? String(address.webSocketURL.dropLast()) : address.webSocketURL
        },
        Key("server-ca-file", help: "a PEM file of CA certificates to trust for a wss:// server besides the system's (a private CA)", form: "FILE") { value, draft throws(SettingsError) in
            draft.serverCAFile = try text(value, "a file", 1...4096)
        },
        Key("public-url", help: "the server's address as people open it (https://watch.example.org); the room's link is this + /rooms/ROOM (default: http:// and the server's host and port)", form: "URL") { value, draft throws(SettingsError) in
            guard value.hasPrefix("http://") || value.hasPrefix("https://"), !value.contains(" "), value.count <= 200 else {
                throw SettingsError("expected http(s)://HOST[:PORT][/PATH]")
            }
            draft.publicURL = value.hasSuffix("/") ? String(value.dropLast()) : value
        },
        Key("room-password", help: "the room's password, when it asks one", form: "PASSWORD") { value, draft throws(SettingsError) in
            draft.roomPassword = try text(value, "a password", 1...64)
        },
        Key("token", help: "a bot token for the bridge's own member (/token NAME chat in the room), shown as a bot", form: "TOKEN") { value, draft throws(SettingsError) in
            draft.token = try text(value, "a token", 1...200)
        },
        Key("channel-key", help: "the channel's key (+k), when it has one", form: "KEY") { value, draft throws(SettingsError) in
            draft.channelKey = try ircWord(value, "a channel key")
        },
        Key("network", help: "a name for the network in people's identities (device=, bans); default the IRC host, or matrix", form: "NAME") { value, draft throws(SettingsError) in
            draft.network = try text(value, "a network name", 1...64)
        },
        Key("nick", help: "the bot's nick", form: "NICK", shown: { $0.nick }) { value, draft throws(SettingsError) in
            draft.nick = try nick(value)
        },
        Key("alt-nicks", help: "nicks to try, comma-separated, when the nick is taken (then nick_, nick2, ...)", form: "NICKS") { value, draft throws(SettingsError) in
            var nicks: [String] = []
            for part in value.split(separator: ",") { nicks.append(try nick(part.trimmingSpaces())) }
            draft.alternateNicks = nicks
        },
        Key("irc-user", help: "the user name sent with USER", form: "NAME", shown: { $0.user }) { value, draft throws(SettingsError) in
            draft.user = try ircWord(value, "a user name")
        },
        Key("irc-realname", help: "the real name sent with USER", form: "TEXT", shown: { $0.realName }) { value, draft throws(SettingsError) in
            draft.realName = try text(value, "a real name", 1...100)
        },
        Key("irc-password", help: "the IRC server's password (PASS), when it asks one", form: "PASSWORD") { value, draft throws(SettingsError) in
            draft.ircPassword = try ircWord(value, "a password")
        },
        .boolean("tls-verify", \.tlsVerify,
            help: "check the IRC server's TLS certificate and name (false only for testing)"),
        Key("tls-ca-file", help: "a PEM file of the certificates to trust for ircs:// instead of the system's", form: "FILE") { value, draft throws(SettingsError) in
            draft.tlsCAFile = try text(value, "a file", 1...4096)
        },
        Key("prefix", help: "what starts a command in the channel: !watch URL, !play, !seek 1:23", form: "TEXT", shown: { $0.prefix }) { value, draft throws(SettingsError) in
            guard (1...8).contains(value.count), !value.contains(where: { $0.isWhitespace }), value != "/" else {
                throw SettingsError("expected 1 to 8 characters, no spaces, other than /")
            }
            draft.prefix = value
        },
        Key("bot-name", help: "the bridge's own name in the room (default IRC, or Matrix for a Matrix pair)", form: "NAME") { value, draft throws(SettingsError) in
            guard DisplayName(value) != nil else { throw SettingsError(DisplayName.validationProblem(value) ?? "not a valid name") }
            draft.botName = value
        },
        .number("irc-lines-per-second", 0.01...100, \.ircPacing.perSecond,
            help: "lines per second the bridge sends to the IRC server after its burst"),
        .integer("irc-burst", 1...100, \.ircPacing.burst,
            help: "lines the bridge may send to the IRC server at once"),
        .integer("irc-queue", 1...100_000, \.ircPacing.maximumQueued,
            help: "lines kept waiting for the IRC server at most; more are dropped and counted"),
        .integer("irc-line-bytes", 256...8192, \.ircLineBytes,
            help: "the IRC server's line limit in bytes with CR-LF"),
        .integer("irc-pieces", 1...32, \.ircPieces,
            help: "a long line from the room is cut into at most this many IRC lines"),
        .duration("irc-keepalive", .seconds(5)...(.seconds(3600)), \.ircKeepalive,
            help: "seconds of silence from the IRC server before the bridge pings it; as long again without an answer and it reconnects"),
        .duration("irc-reconnect-max", .seconds(1)...(.seconds(3600)), \.ircReconnectMaximum,
            help: "the longest wait, in seconds, between tries to reach the IRC server"),
        .number("room-lines-per-second", 0.1...1000, \.roomPacing.perSecond,
            help: "one person's lines per second to the room after their burst, under the server's commands-per-second"),
        .integer("room-burst", 1...1000, \.roomPacing.burst,
            help: "one person's lines that may go to the room at once, under the server's command-burst"),
        .integer("room-queue", 1...100_000, \.roomPacing.maximumQueued,
            help: "one person's lines kept waiting for the room at most"),
        .integer("room-line-bytes", 64...(1 << 20), \.roomLineBytes,
            help: "the server's max-line-bytes: longer lines are refused in the channel"),
        .integer("max-speakers", 1...10_000, \.maximumSpeakers,
            help: "people from the channel in the room at once through the bridge, at most (each is a connection)"),
        .duration("speaker-idle", .seconds(10)...(.seconds(604_800)), \.speakerIdle,
            help: "seconds of silence after which a person's room connection closes"),
        .integer("reply-lines", 1...200, \.replyLines,
            help: "lines of the room's answer told to a person at most"),
        .duration("kept-out-retry", .seconds(1)...(.seconds(604_800)), \.keptOutRetry,
            help: "seconds a person the room removed or refused is left alone before their next line tries again"),
        .duration("resume-grace", .zero...(.seconds(86_400)), \.resumeGrace,
            help: "seconds a person who left the channel can come back as the same member: the server's resume-grace"),
        .duration("room-reconnect-max", .seconds(1)...(.seconds(3600)), \.roomReconnectMaximum,
            help: "the longest wait, in seconds, between tries to reach the room"),
        .duration("connect-timeout", .seconds(1)...(.seconds(600)), \.connectTimeout,
            help: "seconds a connection to either side may take to open"),
        .boolean("announce", \.announce,
            help: "post the room's link in the channel when the bridge first joins it"),
        Key("owner-key-directory", help: "where the owner key of a room the bridge founds is written, as ROOM.owner-key, readable by the bridge's user alone (default $STATE_DIRECTORY, else data/bridge)", form: "DIRECTORY") { value, draft throws(SettingsError) in
            guard !value.isEmpty else { throw SettingsError("expected a directory") }
            draft.ownerKeyDirectory = value
        },
        Key("log-level", help: "how much is logged: trace, debug, info, notice, warning, error or critical", form: "LEVEL", shown: { $0.logLevel }) { value, draft throws(SettingsError) in
            guard ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(value) else {
                throw SettingsError("expected trace, debug, info, notice, warning, error or critical")
            }
            draft.logLevel = value
        },
    ]

    // MARK: - Values

    static func text(_ value: String, _ what: String, _ length: ClosedRange<Int>) throws(SettingsError) -> String {
        guard length.contains(value.count), !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw SettingsError("expected \(what) of \(length.lowerBound) to \(length.upperBound) characters, no control characters")
        }
        return value
    }

    /// One IRC parameter: no spaces, no control characters, not starting with `:`.
    static func ircWord(_ value: String, _ what: String) throws(SettingsError) -> String {
        guard (1...100).contains(value.count), !value.hasPrefix(":"),
              !value.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || $0 == "," }) else {
            throw SettingsError("expected \(what): 1 to 100 characters without spaces or commas")
        }
        return value
    }

    /// RFC 2812 2.3.1: a letter or one of `[]\`_^{|}` first, then those, digits and `-`.
    static func nick(_ value: String) throws(SettingsError) -> String {
        let special = "[]\\`_^{|}"
        guard let first = value.first, (1...30).contains(value.count),
              first.isASCII && first.isLetter || special.contains(first),
              value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) || special.contains($0) || $0 == "-" }) else {
            throw SettingsError("expected a nick: 1 to 30 of letters, digits, - and []\\`_^{|}, not starting with a digit or -")
        }
        return value
    }
}
