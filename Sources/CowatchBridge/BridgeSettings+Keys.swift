import CowatchClient
import CowatchConfig
import SlashCommands

/// Every key `cowatch bridge` takes, its meaning (the words of `--help` and of
/// deploy/bridge.conf.example) and how its value is checked; the sources and the
/// pairs are resolved in `BridgeSettings.swift`.
extension BridgeSettings {
    // swiftlint:disable:next function_body_length
    static let keys: [Key] = [
        Key("irc", help: "the channel, irc://HOST[:PORT]/#channel (6667) or ircs://HOST[:PORT]/#channel (TLS, 6697)") { value, draft throws(SettingsError) in
            guard let address = IRCAddress(value) else { throw SettingsError("expected irc://HOST[:PORT]/#channel or ircs://HOST[:PORT]/#channel") }
            draft.irc = address
        },
        Key("matrix", help: "the Matrix room of a pair, #alias:server or !id:server (instead of irc =), on the homeserver below") { value, draft throws(SettingsError) in
            draft.matrix = try matrixRoom(value)
        },
        Key("homeserver", help: "the Matrix homeserver's client address, https://HOST[:PORT] (as in a client's sign-in)") { value, draft throws(SettingsError) in
            draft.homeserver = try homeserver(value)
        },
        Key("matrix-user", help: "the bridge's own Matrix user, @name:server") { value, draft throws(SettingsError) in
            draft.matrixUser = try matrixUser(value)
        },
        Key("matrix-token", help: "the Matrix user's access token (or matrix-password instead)") { value, draft throws(SettingsError) in
            draft.matrixToken = try text(value, "a token", 1...1000)
        },
        Key("matrix-password", help: "the Matrix user's password, to log in when there is no access token; the token it gives is kept in matrix-state-file") { value, draft throws(SettingsError) in
            draft.matrixPassword = try text(value, "a password", 1...1000)
        },
        Key("matrix-state-file", help: "where the Matrix login and sync position are kept, readable by the bridge's user alone (default OWNER-KEY-DIRECTORY/matrix-state.json)") { value, draft throws(SettingsError) in
            draft.matrixStateFile = try text(value, "a file", 1...4096)
        },
        Key("matrix-lines-per-second", help: "messages per second the bridge sends to the homeserver after its burst (default 1)") { value, draft throws(SettingsError) in
            draft.matrixPacing.perSecond = try SettingValue.number(value, 0.01...100)
        },
        Key("matrix-burst", help: "messages the bridge may send to the homeserver at once (default 10)") { value, draft throws(SettingsError) in
            draft.matrixPacing.burst = try SettingValue.integer(value, 1...100)
        },
        Key("matrix-queue", help: "messages kept waiting for the homeserver at most; more are dropped and logged (default 100)") { value, draft throws(SettingsError) in
            draft.matrixPacing.maximumQueued = try SettingValue.integer(value, 1...100_000)
        },
        Key("matrix-sync-timeout", help: "seconds the homeserver may hold a sync open when there is nothing new (default 30)") { value, draft throws(SettingsError) in
            draft.matrixSyncTimeout = try SettingValue.number(value, 1...300)
        },
        Key("matrix-reconnect-max", help: "the longest wait, in seconds, between tries to reach the homeserver (default 120)") { value, draft throws(SettingsError) in
            draft.matrixReconnectMaximum = try SettingValue.number(value, 1...3600)
        },
        Key("matrix-message-lines", help: "lines of one Matrix message relayed to the room at most (default 10)") { value, draft throws(SettingsError) in
            draft.matrixMessageLines = try SettingValue.integer(value, 1...1000)
        },
        Key("room", help: "the Cowatch room: 1 to 64 of A-Z a-z 0-9 . _ -") { value, draft throws(SettingsError) in
            guard (1...64).contains(value.count), value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
                throw SettingsError("a room name is 1 to 64 of A-Z a-z 0-9 . _ -")
            }
            draft.room = value.lowercased()
        },
        Key("server", help: "the Cowatch server, ws://HOST:PORT beside it (default ws://127.0.0.1:7480), or wss://HOST (https://HOST) through its TLS proxy") { value, draft throws(SettingsError) in
            let trimmed = value.hasSuffix("/") ? String(value.dropLast()) : value
            guard let address = WebSocketAddress(trimmed), address.path == "/" else {
                throw SettingsError("expected ws://HOST:PORT, or wss://HOST[:PORT] for a server behind TLS (no path)")
            }
            draft.server = address.webSocketURL.hasSuffix("/") ? String(address.webSocketURL.dropLast()) : address.webSocketURL
        },
        Key("server-ca-file", help: "a PEM file of CA certificates to trust for a wss:// server besides the system's (a private CA)") { value, draft throws(SettingsError) in
            draft.serverCAFile = try text(value, "a file", 1...4096)
        },
        Key("public-url", help: "the server's address as people open it (https://watch.example.org); the room's link is this + /rooms/ROOM (default: http:// and the server's host and port)") { value, draft throws(SettingsError) in
            guard value.hasPrefix("http://") || value.hasPrefix("https://"), !value.contains(" "), value.count <= 200 else {
                throw SettingsError("expected http(s)://HOST[:PORT][/PATH]")
            }
            draft.publicURL = value.hasSuffix("/") ? String(value.dropLast()) : value
        },
        Key("room-password", help: "the room's password, when it asks one") { value, draft throws(SettingsError) in
            draft.roomPassword = try text(value, "a password", 1...64)
        },
        Key("token", help: "a bot token for the bridge's own member (/token NAME chat in the room), shown as a bot") { value, draft throws(SettingsError) in
            draft.token = try text(value, "a token", 1...200)
        },
        Key("channel-key", help: "the channel's key (+k), when it has one") { value, draft throws(SettingsError) in
            draft.channelKey = try ircWord(value, "a channel key")
        },
        Key("network", help: "a name for the network in people's identities (device=, bans); default the IRC host, or matrix") { value, draft throws(SettingsError) in
            draft.network = try text(value, "a network name", 1...64)
        },
        Key("nick", help: "the bot's nick (default cowatch)") { value, draft throws(SettingsError) in
            draft.nick = try nick(value)
        },
        Key("alt-nicks", help: "nicks to try, comma-separated, when the nick is taken (then nick_, nick2, ...)") { value, draft throws(SettingsError) in
            var nicks: [String] = []
            for part in value.split(separator: ",") { nicks.append(try nick(part.trimmingSpaces())) }
            draft.alternateNicks = nicks
        },
        Key("irc-user", help: "the user name sent with USER (default cowatch)") { value, draft throws(SettingsError) in
            draft.user = try ircWord(value, "a user name")
        },
        Key("irc-realname", help: "the real name sent with USER") { value, draft throws(SettingsError) in
            draft.realName = try text(value, "a real name", 1...100)
        },
        Key("irc-password", help: "the IRC server's password (PASS), when it asks one") { value, draft throws(SettingsError) in
            draft.ircPassword = try ircWord(value, "a password")
        },
        Key("tls-verify", help: "check the IRC server's TLS certificate and name (default true; false only for testing)") { value, draft throws(SettingsError) in
            draft.tlsVerify = try SettingValue.boolean(value)
        },
        Key("tls-ca-file", help: "a PEM file of the certificates to trust for ircs:// instead of the system's") { value, draft throws(SettingsError) in
            draft.tlsCAFile = try text(value, "a file", 1...4096)
        },
        Key("prefix", help: "what starts a command in the channel (default !): !watch URL, !play, !seek 1:23") { value, draft throws(SettingsError) in
            guard (1...8).contains(value.count), !value.contains(where: { $0.isWhitespace }), value != "/" else {
                throw SettingsError("expected 1 to 8 characters, no spaces, other than /")
            }
            draft.prefix = value
        },
        Key("bot-name", help: "the bridge's own name in the room (default IRC, or Matrix for a Matrix pair)") { value, draft throws(SettingsError) in
            guard DisplayName(value) != nil else { throw SettingsError(DisplayName.validationProblem(value) ?? "not a valid name") }
            draft.botName = value
        },
        Key("irc-lines-per-second", help: "lines per second the bridge sends to the IRC server after its burst (default 0.5)") { value, draft throws(SettingsError) in
            draft.ircPacing.perSecond = try SettingValue.number(value, 0.01...100)
        },
        Key("irc-burst", help: "lines the bridge may send to the IRC server at once (default 5)") { value, draft throws(SettingsError) in
            draft.ircPacing.burst = try SettingValue.integer(value, 1...100)
        },
        Key("irc-queue", help: "lines kept waiting for the IRC server at most; more are dropped and counted (default 100)") { value, draft throws(SettingsError) in
            draft.ircPacing.maximumQueued = try SettingValue.integer(value, 1...100_000)
        },
        Key("irc-line-bytes", help: "the IRC server's line limit in bytes with CR-LF (default 512)") { value, draft throws(SettingsError) in
            draft.ircLineBytes = try SettingValue.integer(value, 256...8192)
        },
        Key("irc-pieces", help: "a long line from the room is cut into at most this many IRC lines (default 4)") { value, draft throws(SettingsError) in
            draft.ircPieces = try SettingValue.integer(value, 1...32)
        },
        Key("irc-keepalive", help: "seconds of silence from the IRC server before the bridge pings it; as long again without an answer and it reconnects (default 90)") { value, draft throws(SettingsError) in
            draft.ircKeepalive = try SettingValue.number(value, 5...3600)
        },
        Key("irc-reconnect-max", help: "the longest wait, in seconds, between tries to reach the IRC server (default 120)") { value, draft throws(SettingsError) in
            draft.ircReconnectMaximum = try SettingValue.number(value, 1...3600)
        },
        Key("room-lines-per-second", help: "one person's lines per second to the room after their burst, under the server's commands-per-second (default 10)") { value, draft throws(SettingsError) in
            draft.roomPacing.perSecond = try SettingValue.number(value, 0.1...1000)
        },
        Key("room-burst", help: "one person's lines that may go to the room at once, under the server's command-burst (default 20)") { value, draft throws(SettingsError) in
            draft.roomPacing.burst = try SettingValue.integer(value, 1...1000)
        },
        Key("room-queue", help: "one person's lines kept waiting for the room at most (default 250)") { value, draft throws(SettingsError) in
            draft.roomPacing.maximumQueued = try SettingValue.integer(value, 1...100_000)
        },
        Key("room-line-bytes", help: "the server's max-line-bytes: longer lines are refused in the channel (default 4096)") { value, draft throws(SettingsError) in
            draft.roomLineBytes = try SettingValue.integer(value, 64...(1 << 20))
        },
        Key("max-speakers", help: "people from the channel in the room at once through the bridge, at most (default 25; each is a connection)") { value, draft throws(SettingsError) in
            draft.maximumSpeakers = try SettingValue.integer(value, 1...10_000)
        },
        Key("speaker-idle", help: "seconds of silence after which a person's room connection closes (default 3600)") { value, draft throws(SettingsError) in
            draft.speakerIdle = try SettingValue.number(value, 10...604_800)
        },
        Key("reply-lines", help: "lines of the room's answer told to a person at most (default 8)") { value, draft throws(SettingsError) in
            draft.replyLines = try SettingValue.integer(value, 1...200)
        },
        Key("kept-out-retry", help: "seconds a person the room removed or refused is left alone before their next line tries again (default 600)") { value, draft throws(SettingsError) in
            draft.keptOutRetry = try SettingValue.number(value, 1...604_800)
        },
        Key("resume-grace", help: "seconds a person who left the channel can come back as the same member: the server's resume-grace (default 60)") { value, draft throws(SettingsError) in
            draft.resumeGrace = try SettingValue.number(value, 0...86_400)
        },
        Key("room-reconnect-max", help: "the longest wait, in seconds, between tries to reach the room (default 60)") { value, draft throws(SettingsError) in
            draft.roomReconnectMaximum = try SettingValue.number(value, 1...3600)
        },
        Key("connect-timeout", help: "seconds a connection to either side may take to open (default 20)") { value, draft throws(SettingsError) in
            draft.connectTimeout = try SettingValue.number(value, 1...600)
        },
        Key("announce", help: "post the room's link in the channel when the bridge first joins it (default true)") { value, draft throws(SettingsError) in
            draft.announce = try SettingValue.boolean(value)
        },
        Key("owner-key-directory", help: "where the owner key of a room the bridge founds is written, as ROOM.owner-key, readable by the bridge's user alone (default $STATE_DIRECTORY, else data/bridge)") { value, draft throws(SettingsError) in
            guard !value.isEmpty else { throw SettingsError("expected a directory") }
            draft.ownerKeyDirectory = value
        },
        Key("log-level", help: "trace, debug, info, notice, warning, error or critical (default info)") { value, draft throws(SettingsError) in
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
