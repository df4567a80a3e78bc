import CowatchClient
import CowatchCore
import CowatchTime

/// One channel and one Cowatch room joined together, as a value: events in
/// (from the network, from the room connections, timers), actions out (open,
/// send on and close room connections, say things on the network, set timers,
/// log). `BridgeRunner` carries them out; the rules are here, tested without
/// sockets or clocks (`Tests/CowatchBridgeTests`).
///
/// The rules, in short:
/// - A watcher connection, the bot's own member (`join=0`), receives the room's
///   events: chat from the room's other members is said in the channel as
///   `<name> text`, and the room's notices (who paused, what is shared, with the
///   room's link) are posted as notices. The room's copy of what a person from
///   the channel said is not said back.
/// - Every person who speaks in the channel is a member of the room of their
///   own, opened on their first line and named after their nick, with a
///   `device=` derived from the network and the nick (so a ban sticks to the
///   person) and an `X-Forwarded-For` address of their own (so that a server
///   trusting the bridge as a proxy bans the person, not the bridge). Their
///   lines wait for the room's welcome, then go at a pace under the room's
///   command rate, in order.
/// - Prefixed lines are commands, checked with the room's own parser
///   (`PrefixCommands`); the table's error comes back in the channel. The
///   room's answers to a person (replies, `!help`) and its refusals of their
///   commands are said in the channel, where they were asked, addressed to them.
/// - A person kicked or banned from the room, or refused by it, is told why by
///   a private notice and not reconnected; their next lines are not relayed
///   until `keptOutRetry` has passed, when their next line tries again.
/// - Connections lost otherwise (a server restart, a dropped connection) come
///   back by themselves with a growing, jittered delay, as the same member
///   (resume token), the watcher and every person alike.
/// - At most `maximumSpeakers` people are in the room through the bridge at
///   once; a person silent for `speakerIdle` is let go.
public struct RoomRelay: Sendable {
    public struct Settings: Sendable, Hashable {
        /// Names the network in identities (`device=`, the forwarded address).
        public var network: String
        /// The channel, as the network adapter names it.
        public var channel: String
        /// The room, for words in the channel.
        public var room: String
        /// The room's page, posted in the channel.
        public var link: String
        public var prefix: String
        /// The watcher's name in the room.
        public var botName: String
        public var maximumSpeakers: Int
        /// Silence after which a person's room connection is closed.
        public var speakerIdle: MonotonicDuration
        /// How fast one person's lines go to the room (under the room's command rate).
        public var speakerPacing: PacerSettings
        /// A reply longer than this many lines is cut, saying how many were left out.
        public var maximumReplyLines: Int
        public var reconnect: Backoff.Settings
        /// How long a person (or the watcher) the room kept out is left alone.
        public var keptOutRetry: MonotonicDuration
        /// Post the room's link (and what plays) when the bot first joins the channel.
        public var announce: Bool
        /// The room's line limit in bytes (the server's `max-line-bytes`).
        public var maximumLineBytes: Int
        /// The least time between two notices telling one person the same thing.
        public var tellInterval: MonotonicDuration
        /// How long a person's resume token is kept after their room connection
        /// closed, to come back as the same member: the server's resume grace.
        public var resumeGrace: MonotonicDuration
        /// `/watch` typed in the channel is a command too (Matrix clients
        /// send a slash they do not know), and `//text` says `/text`.
        public var slashCommands: Bool

        public init(network: String, channel: String, room: String, link: String, prefix: String = "!",
                    botName: String = "IRC", maximumSpeakers: Int = 25, speakerIdle: MonotonicDuration = .seconds(3600),
                    speakerPacing: PacerSettings = PacerSettings(perSecond: 10, burst: 20, maximumQueued: 250),
                    maximumReplyLines: Int = 8, reconnect: Backoff.Settings = Backoff.Settings(first: .seconds(1), maximum: .seconds(60)),
                    keptOutRetry: MonotonicDuration = .seconds(600), announce: Bool = true, maximumLineBytes: Int = 4096,
                    tellInterval: MonotonicDuration = .seconds(60), resumeGrace: MonotonicDuration = .seconds(60),
                    slashCommands: Bool = false) {
            self.network = network
            self.channel = channel
            self.room = room
            self.link = link
            self.prefix = prefix
            self.botName = botName
            self.maximumSpeakers = maximumSpeakers
            self.speakerIdle = speakerIdle
            self.speakerPacing = speakerPacing
            self.maximumReplyLines = maximumReplyLines
            self.reconnect = reconnect
            self.keptOutRetry = keptOutRetry
            self.announce = announce
            self.maximumLineBytes = maximumLineBytes
            self.tellInterval = tellInterval
            self.resumeGrace = resumeGrace
            self.slashCommands = slashCommands
        }
    }

    /// A room connection of this relay: the watcher, or one person's. People are
    /// numbered when first heard, and keep their number through nick changes.
    public enum Connection: Sendable, Hashable {
        case watcher
        case speaker(Int)
    }

    /// Connection attempts are numbered per connection; events of an earlier one are stale.
    public typealias Attempt = Int

    /// Who a room connection comes in as.
    public struct Identity: Sendable, Hashable {
        public var name: String
        public var device: String
        /// `X-Forwarded-For`, for people: their own address as far as the room knows.
        public var forwardedFor: String?
        public var resume: String?
        /// `join=0` for the watcher, which watches nothing.
        public var joinsSession: Bool
        /// The watcher presents the bridge's bot token, when it has one.
        public var isWatcher: Bool
    }

    public enum Timer: Sendable, Hashable {
        case reconnect(Connection, Attempt)
        case pace(Int)
        case housekeeping
    }

    public enum Event: Sendable, Hashable {
        case start(now: MonotonicInstant)
        case network(NetworkEvent, now: MonotonicInstant)
        case opened(Connection, Attempt, now: MonotonicInstant)
        case received(Connection, Attempt, String, now: MonotonicInstant)
        case closed(Connection, Attempt, CloseInfo, now: MonotonicInstant)
        case timerFired(Timer, now: MonotonicInstant)
        case stop
    }

    public enum Action: Sendable, Hashable {
        case open(Connection, Attempt, Identity)
        case send(Connection, String)
        /// Close with 1000.
        case close(Connection)
        case schedule(Timer, after: MonotonicDuration)
        case network(NetworkCommand)
        case log(LogEntry)
        /// The room was founded by the bridge, whose welcome carried the room's
        /// owner key: kept where the operator can take it (`OwnerKeyFile`).
        case keepOwnerKey(String)
    }

    /// The time between housekeeping rounds (idle people, forgotten refusals).
    static let housekeepingInterval = MonotonicDuration.seconds(30)
    /// Member ids of the bridge's own connections remembered after they closed,
    /// so that a late copy of their chat is still recognised.
    static let rememberedFormerIDs = 512

    enum LinkPhase: Sendable, Hashable {
        case idle
        case connecting
        case open(welcomed: Bool)
        /// Lost; the next try is scheduled.
        case away
        /// Refused or removed by the room, until then.
        case keptOut(until: MonotonicInstant, why: String)
        /// Closed by the bridge; the close is on its way.
        case closing
    }

    struct Link: Sendable {
        var phase: LinkPhase = .idle
        var attempt: Attempt = 0
        var resume: String?
        var memberID: String?
        var backoff: Backoff
        /// The room's words before it closed the connection (a ban's sentence).
        var refusal: String?
        var refusalCode: String?
    }

    struct Speaker: Sendable {
        var serial: Int
        var person: NetworkSpeaker
        var link: Link
        var lines: OutboundPacer<String>
        var lastActive: MonotonicInstant
        /// Left the channel: close once the waiting lines are sent.
        var leaving = false
        /// When the room connection last closed: the resume token is kept a while.
        var closedAt: MonotonicInstant?
        var paceArmed = false
        /// When the person was last told something unasked, by topic.
        var told: [String: MonotonicInstant] = [:]
    }

    public let settings: Settings
    let commands: PrefixCommands
    var stopped = false
    var watcher: Link
    /// People heard in the channel, by their key (`NetworkSpeaker.id`).
    var speakers: [String: Speaker] = [:]
    /// A person's key by their number.
    var keys: [Int: String] = [:]
    var nextSerial = 1
    /// Member ids of the bridge's own connections: chat from them is not said back.
    var ownIDs: Set<String> = []
    var formerIDs: [String] = []
    var channelJoined = false
    var announced = false
    /// Room lines not said while the bot was out of the channel.
    var missed = 0
    var nowPlaying: (title: String, status: String)?
    var seed: UInt64

    public init(settings: Settings, seed: UInt64 = 0x2545_F491_4F6C_DD1D) {
        self.settings = settings
        self.seed = seed
        commands = PrefixCommands(prefix: settings.prefix, maximumLineBytes: settings.maximumLineBytes, slashCommands: settings.slashCommands)
        watcher = Link(backoff: Backoff(settings: settings.reconnect, seed: seed))
    }

    public mutating func handle(_ event: Event) -> [Action] {
        guard !stopped else { return [] }
        switch event {
        case .start:
            return openWatcher() + [.schedule(.housekeeping, after: Self.housekeepingInterval)]
        case .network(let event, let now):
            return network(event, now: now)
        case .opened(let connection, let attempt, _):
            return opened(connection, attempt)
        case .received(let connection, let attempt, let text, let now):
            // An event this version does not know changes nothing; text that is not
            // the protocol changes nothing either, but is logged, as the desktop player does.
            let message: RoomEvent
            do {
                guard let decoded = try JSONEventDecoding.decode(text) else { return [] }
                message = decoded
            } catch {
                return [.log(LogEntry(.warning, "a room event that could not be read",
                                      ["room": settings.room, "why": "\(error)"]))]
            }
            switch connection {
            case .watcher:
                guard attempt == watcher.attempt else { return [] }
                return watcherReceived(message)
            case .speaker(let serial):
                guard let key = keys[serial], speakers[key]?.link.attempt == attempt else { return [] }
                return speakerReceived(key, message, now: now)
            }
        case .closed(let connection, let attempt, let info, let now):
            switch connection {
            case .watcher:
                guard attempt == watcher.attempt else { return [] }
                return watcherClosed(info, now: now)
            case .speaker(let serial):
                guard let key = keys[serial], speakers[key]?.link.attempt == attempt else { return [] }
                return speakerClosed(key, info, now: now)
            }
        case .timerFired(let timer, let now):
            return fired(timer, now: now)
        case .stop:
            stopped = true
            var actions: [Action] = []
            if watcher.phase != .idle { actions.append(.close(.watcher)) }
            for speaker in speakers.values.sorted(by: { $0.serial < $1.serial }) where speaker.link.phase.hasConnection {
                actions.append(.close(.speaker(speaker.serial)))
            }
            return actions
        }
    }

    private mutating func opened(_ connection: Connection, _ attempt: Attempt) -> [Action] {
        switch connection {
        case .watcher:
            guard attempt == watcher.attempt, watcher.phase == .connecting else { return [] }
            watcher.phase = .open(welcomed: false)
        case .speaker(let serial):
            guard let key = keys[serial], speakers[key]?.link.attempt == attempt, speakers[key]?.link.phase == .connecting else { return [] }
            speakers[key]?.link.phase = .open(welcomed: false)
        }
        return []
    }

    private mutating func fired(_ timer: Timer, now: MonotonicInstant) -> [Action] {
        switch timer {
        case .reconnect(.watcher, let attempt):
            guard attempt == watcher.attempt else { return [] }
            switch watcher.phase {
            case .away, .keptOut: return openWatcher()
            default: return []
            }
        case .reconnect(.speaker(let serial), let attempt):
            guard let key = keys[serial], let speaker = speakers[key], speaker.link.attempt == attempt, speaker.link.phase == .away else { return [] }
            return openSpeaker(key)
        case .pace(let serial):
            guard let key = keys[serial] else { return [] }
            speakers[key]?.paceArmed = false
            return pump(key, now: now)
        case .housekeeping:
            return housekeeping(now: now) + [.schedule(.housekeeping, after: Self.housekeepingInterval)]
        }
    }

    // MARK: - Identities

    /// A `device=` for a person: the same for the same nick on the same network,
    /// and nothing anyone can read the nick back from.
    func device(_ key: String) -> String {
        String(SecretDigest.hex("cowatch-bridge\u{0}\(settings.network)\u{0}\(key)").prefix(32))
    }

    /// The address the room keeps for a person (in bans, and in its per-address
    /// limits), when the server trusts the bridge's `X-Forwarded-For`.
    func forwardedAddress(_ key: String) -> String {
        String("bridge:\(settings.network)/\(key)".prefix(64))
    }

    /// Counts an id of the bridge's own as one whose chat is not said back.
    mutating func remember(_ id: String) {
        guard ownIDs.insert(id).inserted else { return }
        formerIDs.append(id)
        if formerIDs.count > Self.rememberedFormerIDs + settings.maximumSpeakers {
            let oldest = formerIDs.removeFirst()
            if watcher.memberID != oldest, !speakers.values.contains(where: { $0.link.memberID == oldest }) {
                ownIDs.remove(oldest)
            }
        }
    }

    static func seconds(_ span: MonotonicDuration) -> String {
        let value = span.seconds
        return value < 10 ? "\(Double(Int(value * 10)) / 10)s" : "\(Int(value))s"
    }
}

extension RoomRelay.LinkPhase {
    /// A connection exists or is being made.
    var hasConnection: Bool {
        switch self {
        case .connecting, .open: true
        case .idle, .away, .keptOut, .closing: false
        }
    }

    /// Counted against `maximumSpeakers`: connected, or coming back.
    var holdsPlace: Bool {
        switch self {
        case .connecting, .open, .away, .closing: true
        case .idle, .keptOut: false
        }
    }
}
