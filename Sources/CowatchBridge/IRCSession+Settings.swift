import CowatchClient
import CowatchTime

/// The session's settings, and the channels it joins.
extension IRCSession {
    public struct Channel: Sendable, Hashable {
        public var name: String
        /// The channel's key (`+k`), when it has one.
        public var key: String?

        public init(name: String, key: String? = nil) {
            self.name = name
            self.key = key
        }
    }

    public struct Settings: Sendable, Hashable {
        public var nick: String
        /// Tried in order when `nick` is taken, before generated ones.
        public var alternateNicks: [String]
        public var user: String
        public var realName: String
        /// The server's password (`PASS`), when it asks one.
        public var password: String?
        public var channels: [Channel]
        public var pacing: PacerSettings
        /// RFC 2812: 512 bytes with CR-LF.
        public var maximumLineBytes: Int
        /// A long line from the room is cut into at most this many IRC lines.
        public var maximumPiecesPerMessage: Int
        /// Silence from the server before we send it a PING.
        public var keepaliveInterval: MonotonicDuration
        /// How long the server has to answer (anything at all) after that PING.
        public var keepaliveTimeout: MonotonicDuration
        /// From connecting to the server's 001.
        public var registrationTimeout: MonotonicDuration
        /// The wait before joining again after a kick.
        public var rejoinDelay: MonotonicDuration
        /// Delays between tries of a channel that refuses the join.
        public var joinRetry: Backoff.Settings
        public var reconnect: Backoff.Settings
        /// Between asks for the configured nick while under another.
        public var regainNickInterval: MonotonicDuration
        public var quitMessage: String
        /// What CTCP VERSION is answered.
        public var version: String

        public init(nick: String, alternateNicks: [String] = [], user: String = "cowatch", realName: String = "Cowatch bridge",
                    password: String? = nil, channels: [Channel],
                    pacing: PacerSettings = PacerSettings(perSecond: 0.5, burst: 5, maximumQueued: 100),
                    maximumLineBytes: Int = IRCMessage.standardMaximumBytes, maximumPiecesPerMessage: Int = 4,
                    keepaliveInterval: MonotonicDuration = .seconds(90), keepaliveTimeout: MonotonicDuration = .seconds(60),
                    registrationTimeout: MonotonicDuration = .seconds(60), rejoinDelay: MonotonicDuration = .seconds(10),
                    joinRetry: Backoff.Settings = Backoff.Settings(first: .seconds(30), maximum: .seconds(600)),
                    reconnect: Backoff.Settings = Backoff.Settings(first: .seconds(2), maximum: .seconds(120)),
                    regainNickInterval: MonotonicDuration = .seconds(120),
                    quitMessage: String = "Cowatch bridge stopping", version: String = "Cowatch bridge") {
            self.nick = nick
            self.alternateNicks = alternateNicks
            self.user = user
            self.realName = realName
            self.password = password
            self.channels = channels
            self.pacing = pacing
            self.maximumLineBytes = maximumLineBytes
            self.maximumPiecesPerMessage = maximumPiecesPerMessage
            self.keepaliveInterval = keepaliveInterval
            self.keepaliveTimeout = keepaliveTimeout
            self.registrationTimeout = registrationTimeout
            self.rejoinDelay = rejoinDelay
            self.joinRetry = joinRetry
            self.reconnect = reconnect
            self.regainNickInterval = regainNickInterval
            self.quitMessage = quitMessage
            self.version = version
        }

        /// How often the keepalive looks at the server's silence: often enough
        /// to notice both the interval and the timeout, at most once a second.
        var keepaliveCheck: MonotonicDuration {
            max(.seconds(1), MonotonicDuration(microseconds: min(keepaliveInterval, keepaliveTimeout).microseconds / 2))
        }
    }
}
