import CowatchClient

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
        /// Seconds of silence from the server before we send it a PING.
        public var keepaliveInterval: Double
        /// Seconds the server has to answer (anything at all) after that PING.
        public var keepaliveTimeout: Double
        /// Seconds from connecting to the server's 001.
        public var registrationTimeout: Double
        /// Seconds before joining again after a kick.
        public var rejoinDelay: Double
        /// Delays between tries of a channel that refuses the join.
        public var joinRetry: Backoff.Settings
        public var reconnect: Backoff.Settings
        /// Seconds between asks for the configured nick while under another.
        public var regainNickInterval: Double
        public var quitMessage: String
        /// What CTCP VERSION is answered.
        public var version: String

        public init(nick: String, alternateNicks: [String] = [], user: String = "cowatch", realName: String = "Cowatch bridge",
                    password: String? = nil, channels: [Channel],
                    pacing: PacerSettings = PacerSettings(perSecond: 0.5, burst: 5, maximumQueued: 100),
                    maximumLineBytes: Int = IRCMessage.standardMaximumBytes, maximumPiecesPerMessage: Int = 4,
                    keepaliveInterval: Double = 90, keepaliveTimeout: Double = 60, registrationTimeout: Double = 60,
                    rejoinDelay: Double = 10, joinRetry: Backoff.Settings = Backoff.Settings(first: 30, maximum: 600),
                    reconnect: Backoff.Settings = Backoff.Settings(first: 2, maximum: 120), regainNickInterval: Double = 120,
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
    }

}
