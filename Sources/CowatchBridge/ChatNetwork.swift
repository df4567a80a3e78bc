/// The bridge's view of a chat network, whatever it is: people speaking in
/// channels, joining, leaving and changing names, and a bot that can say things
/// in a channel or to one person. `RoomRelay` speaks only this; an adapter turns
/// it into one network's protocol (IRC: `IRCSession` and `IRCNetwork`; Matrix:
/// `MatrixSession` and `MatrixNetwork`, a room being a channel). Another
/// network is one more adapter that conforms to `ChatNetwork`.
public protocol ChatNetwork: AnyObject, Sendable {
    /// Names the network in identities derived from it (`device=`), so that the
    /// same nick on two networks is two people.
    var identity: String { get }
    /// Starts connecting, and keeps connected until `stop`. Events arrive
    /// through `events`, one at a time, in order.
    func start(events: @escaping @Sendable (NetworkEvent) -> Void)
    func perform(_ command: NetworkCommand)
    /// Leaves the network politely; no event follows.
    func stop()
}

/// A person on the network.
public struct NetworkSpeaker: Hashable, Sendable {
    /// Stable under the network's rules for comparing names (an IRC nick
    /// folded under the server's case mapping): the key of the person.
    public var id: String
    /// The name as the person writes it.
    public var name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// What happened on the network. Channels are named as the bridge was
/// configured to name them.
public enum NetworkEvent: Hashable, Sendable {
    /// The bot is in the channel (again).
    case joined(channel: String)
    /// The bot is out of the channel (kicked, or the network connection lost).
    case parted(channel: String, reason: String)
    /// Who is in the channel, as the network listed it after the bot joined.
    case present(channel: String, speakers: [NetworkSpeaker])
    /// A line in the channel; `action` for `/me`.
    case message(channel: String, from: NetworkSpeaker, text: String, action: Bool)
    /// A person left the channel (parted or was kicked from it).
    case left(channel: String, speaker: NetworkSpeaker)
    /// A person left the network, and so every channel.
    case quit(speaker: NetworkSpeaker)
    case renamed(from: NetworkSpeaker, to: NetworkSpeaker)
    /// A line sent to the bot alone.
    case direct(from: NetworkSpeaker, text: String)
}

/// What the bridge asks the network to do.
public enum NetworkCommand: Hashable, Sendable {
    /// A chat line in the channel.
    case say(channel: String, text: String)
    /// An automated line in the channel (IRC's NOTICE, which bots never answer).
    case notice(channel: String, text: String)
    /// A line to one person alone.
    case tell(speaker: NetworkSpeaker, text: String)
}

/// A line for the log, decided by a pure value and written by the glue.
public struct LogEntry: Hashable, Sendable {
    public enum Level: String, Sendable, Hashable {
        case debug, info, notice, warning, error
    }

    public var level: Level
    public var message: String
    public var metadata: [String: String]

    public init(_ level: Level, _ message: String, _ metadata: [String: String] = [:]) {
        self.level = level
        self.message = message
        self.metadata = metadata
    }
}
