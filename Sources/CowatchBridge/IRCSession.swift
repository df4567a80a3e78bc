import CowatchClient

/// The bridge's IRC connection as a value: events in (the socket connected, a
/// line arrived, it closed, a timer fired, the bridge wants something said),
/// actions out (connect, write a line, disconnect, set a timer, tell the bridge
/// what happened on the network, log). `IRCNetwork` carries the actions out over
/// an `IRCLink`; the rules are here, tested without sockets or clocks.
///
/// The rules, in short (RFC 1459 and 2812 as servers use them today):
/// - Registration: `PASS` (when configured), `NICK`, `USER`; the server's `001`
///   means registered, and only then are the channels joined.
/// - A nick in use or refused (433, 432, 436, 437) during registration: the next
///   of the alternates, then generated ones (`nick_`, `nick2`, ... cut to the 9
///   characters every server accepts); once registered under another nick, the
///   configured one is asked for again now and then, and at once when its
///   holder leaves or changes nick.
/// - `PING` is answered with `PONG` at once, past the pacing. A silent server is
///   sent a `PING` of our own, and a server that stays silent after it is
///   treated as gone.
/// - Kicked from a channel: join again after `rejoinDelay`; a channel that
///   refuses the join (banned, invite-only, full, wrong key) is tried again with
///   a growing delay.
/// - The connection lost (or never made, or registration taking too long):
///   every channel is reported left and the session connects again after a
///   growing, jittered delay, for as long as it runs.
/// - Lines from people reach the bridge as plain text, formatting codes removed.
/// - What the bridge says goes through an `OutboundPacer`, cut into lines that
///   fit 512 bytes once the server has put our own prefix in front of them.
public struct IRCSession: Sendable {
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

    /// Connection attempts are numbered; events of an earlier one are stale.
    public typealias Attempt = Int

    public enum Timer: Sendable, Hashable {
        case reconnect(Attempt)
        case registration(Attempt)
        case pace(Attempt)
        case keepalive(Attempt)
        /// Join this channel (folded name) again.
        case rejoin(Attempt, String)
        case regainNick(Attempt)
    }

    public enum Event: Sendable, Hashable {
        case start(now: Double)
        /// The socket (and TLS, for `ircs://`) is up.
        case connected(Attempt, now: Double)
        /// One line, without its CR-LF.
        case received(Attempt, String, now: Double)
        case closed(Attempt, reason: String, now: Double)
        case timerFired(Timer, now: Double)
        case command(NetworkCommand, now: Double)
        case stop
    }

    public enum Action: Sendable, Hashable {
        case connect(Attempt)
        /// One line, without CR-LF.
        case write(Attempt, String)
        case disconnect(Attempt)
        case schedule(Timer, after: Double)
        case deliver(NetworkEvent)
        case log(LogEntry)
    }

    private enum Phase: Sendable, Hashable {
        case idle
        case connecting
        case registering
        case registered
        /// Disconnected; the next try is scheduled.
        case away
        case stopped
    }

    /// Nicks are cut to this when generated: RFC 2812's limit, which every server accepts.
    static let portableNickLength = 9
    /// Generated nicks tried before giving up on this connection.
    static let maximumNickTries = 50

    public let settings: Settings
    private var phase: Phase = .idle
    private var attempt: Attempt = 0
    public private(set) var nick: String
    private var nickTries = 0
    public private(set) var caseMapping: IRCCaseMapping = .rfc1459
    /// Folded names of the channels the bot is in.
    public private(set) var joined: Set<String> = []
    /// Folded name to the configured channel.
    private var channelsByKey: [String: Channel] = [:]
    /// Names lists (353) being received, until their 366.
    private var names: [String: [NetworkSpeaker]] = [:]
    private var pacer: OutboundPacer<Outbound>
    private var paceArmed = false
    /// Lines refused by a full queue, by target, told once there is room again.
    private var droppedByTarget: [String: Int] = [:]
    private var lastReceived = 0.0
    private var pingSentAt: Double?
    private var backoff: Backoff
    private var joinBackoffs: [String: Backoff] = [:]
    /// Bytes the server puts before our lines when it relays them (`:nick!user@host `);
    /// learnt from our own JOIN, assumed long before that.
    private var relayPrefixBytes: Int?

    private struct Outbound: Sendable, Hashable {
        var target: String
        var line: String
    }

    public init(settings: Settings, seed: UInt64 = 0x5DEE_CE66_D1CE_4E5B) {
        self.settings = settings
        nick = settings.nick
        pacer = OutboundPacer(settings: settings.pacing)
        backoff = Backoff(settings: settings.reconnect, seed: seed)
        for channel in settings.channels { channelsByKey[IRCCaseMapping.rfc1459.fold(channel.name)] = channel }
    }

    /// Whether the bot is registered and in `channel`.
    public func isIn(_ channel: String) -> Bool {
        phase == .registered && joined.contains(fold(channel))
    }

    // MARK: - Events

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start:
            guard phase == .idle else { return [] }
            return connect()

        case .connected(let number, let now):
            guard number == attempt, phase == .connecting else { return [] }
            phase = .registering
            lastReceived = now
            nick = settings.nick
            nickTries = 0
            var actions: [Action] = []
            if let password = settings.password { actions += write(IRCMessage(command: "PASS", [password])) }
            actions += write(IRCMessage(command: "NICK", [nick]))
            actions += write(IRCMessage(command: "USER", [settings.user, "0", "*", settings.realName]))
            actions.append(.schedule(.registration(attempt), after: settings.registrationTimeout))
            return actions

        case .received(let number, let line, let now):
            guard number == attempt, phase == .registering || phase == .registered else { return [] }
            lastReceived = now
            pingSentAt = nil
            guard let message = IRCMessage.parse(line) else { return [] }
            return received(message, now: now)

        case .closed(let number, let reason, _):
            guard number == attempt, phase != .away, phase != .stopped, phase != .idle else { return [] }
            return lost(reason)

        case .timerFired(let timer, let now):
            return fired(timer, now: now)

        case .command(let command, let now):
            return perform(command, now: now)

        case .stop:
            let wasConnected = phase == .registering || phase == .registered || phase == .connecting
            phase = .stopped
            guard wasConnected else { return [] }
            return write(IRCMessage(command: "QUIT", [settings.quitMessage])) + [.disconnect(attempt)]
        }
    }

    private mutating func connect() -> [Action] {
        attempt += 1
        phase = .connecting
        joined = []
        names = [:]
        paceArmed = false
        pingSentAt = nil
        relayPrefixBytes = nil
        return [.connect(attempt)]
    }

    private mutating func lost(_ reason: String) -> [Action] {
        var actions: [Action] = joined.sorted().compactMap { key in
            channelsByKey[key].map { .deliver(.parted(channel: $0.name, reason: "the IRC connection was lost")) }
        }
        joined = []
        let waiting = pacer.clear()
        droppedByTarget = [:]
        phase = .away
        let delay = backoff.next()
        var metadata = ["reason": reason, "retry_in": Self.seconds(delay)]
        if waiting > 0 { metadata["lines_lost"] = "\(waiting)" }
        actions.append(.log(LogEntry(.warning, "IRC connection lost", metadata)))
        actions.append(.schedule(.reconnect(attempt), after: delay))
        return actions
    }

    private mutating func fired(_ timer: Timer, now: Double) -> [Action] {
        switch timer {
        case .reconnect(let number):
            guard number == attempt, phase == .away else { return [] }
            return connect()
        case .registration(let number):
            guard number == attempt, phase == .registering else { return [] }
            return [.log(LogEntry(.warning, "the IRC server did not complete registration",
                                  ["timeout": Self.seconds(settings.registrationTimeout)])),
                    .disconnect(attempt)]
        case .pace(let number):
            guard number == attempt, phase == .registered else { return [] }
            paceArmed = false
            return pump(now: now)
        case .keepalive(let number):
            guard number == attempt, phase == .registered else { return [] }
            return keepalive(now: now)
        case .rejoin(let number, let key):
            guard number == attempt, phase == .registered, !joined.contains(key), let channel = channelsByKey[key] else { return [] }
            return join(channel)
        case .regainNick(let number):
            guard number == attempt, phase == .registered, fold(nick) != fold(settings.nick) else { return [] }
            return write(IRCMessage(command: "NICK", [settings.nick]))
                + [.schedule(.regainNick(attempt), after: settings.regainNickInterval)]
        }
    }

    private mutating func keepalive(now: Double) -> [Action] {
        let check = Action.schedule(.keepalive(attempt), after: max(1, min(settings.keepaliveInterval, settings.keepaliveTimeout) / 2))
        if let sent = pingSentAt {
            guard now - sent >= settings.keepaliveTimeout else { return [check] }
            return [.log(LogEntry(.warning, "the IRC server stopped answering", ["silent_for": Self.seconds(now - lastReceived)])),
                    .disconnect(attempt)]
        }
        guard now - lastReceived >= settings.keepaliveInterval else { return [check] }
        pingSentAt = now
        return write(IRCMessage(command: "PING", ["cowatch"])) + [check]
    }

    // MARK: - What the server says

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private mutating func received(_ message: IRCMessage, now: Double) -> [Action] {
        let parameters = message.parameters
        switch message.command {
        case "PING":
            return write(IRCMessage(command: "PONG", parameters.isEmpty ? ["cowatch"] : [parameters[parameters.count - 1]]))
        case "ERROR":
            return [.log(LogEntry(.warning, "the IRC server closes the connection", ["reason": parameters.last ?? ""]))]
        case "001":
            guard phase == .registering else { return [] }
            phase = .registered
            if let given = parameters.first, !given.isEmpty { nick = given }
            backoff.succeeded()
            lastReceived = now
            var actions: [Action] = [.log(LogEntry(.info, "registered on IRC", ["nick": nick]))]
            for channel in settings.channels { actions += join(channel) }
            actions.append(.schedule(.keepalive(attempt), after: max(1, min(settings.keepaliveInterval, settings.keepaliveTimeout) / 2)))
            if fold(nick) != fold(settings.nick) {
                actions.append(.schedule(.regainNick(attempt), after: settings.regainNickInterval))
            }
            return actions
        case "005":
            for token in parameters.dropFirst() {
                if token.hasPrefix("CASEMAPPING="), let mapping = IRCCaseMapping(rawValue: String(token.dropFirst(12)).lowercased()) {
                    caseMapping = mapping
                    var byKey: [String: Channel] = [:]
                    for channel in settings.channels { byKey[fold(channel.name)] = channel }
                    channelsByKey = byKey
                }
            }
            return []
        case "432", "433", "436", "437":
            guard phase == .registering else { return [] }
            return nextNick(refused: parameters.count > 1 ? parameters[1] : nick, code: message.command)
        case "NICK":
            guard let old = message.nick, let new = parameters.first else { return [] }
            if fold(old) == fold(nick) {
                nick = new
                return [.log(LogEntry(.info, "IRC nick changed", ["nick": new]))]
            }
            var actions: [Action] = [.deliver(.renamed(from: speaker(old), to: speaker(new)))]
            if fold(old) == fold(settings.nick) { actions += regainNow() }
            return actions
        case "JOIN":
            guard let who = message.nick, let names = parameters.first else { return [] }
            guard fold(who) == fold(nick) else { return [] }
            var actions: [Action] = []
            for name in names.split(separator: ",") {
                let key = fold(String(name))
                guard let channel = channelsByKey[key], !joined.contains(key) else { continue }
                joined.insert(key)
                joinBackoffs[key] = nil
                if let prefix = message.prefix { relayPrefixBytes = prefix.description.utf8.count + 2 }
                actions.append(.log(LogEntry(.info, "joined the IRC channel", ["channel": channel.name])))
                actions.append(.deliver(.joined(channel: channel.name)))
            }
            return actions
        case "PART":
            guard let who = message.nick, let name = parameters.first else { return [] }
            return departed(channelName: name, who: who, reason: "parted")
        case "KICK":
            guard parameters.count >= 2, let by = message.nick else { return [] }
            let why = parameters.count > 2 ? parameters[2] : ""
            return departed(channelName: parameters[0], who: parameters[1],
                            reason: "kicked by \(by)" + (why.isEmpty ? "" : ": \(why)"))
        case "QUIT":
            guard let who = message.nick, fold(who) != fold(nick) else { return [] }
            var actions: [Action] = [.deliver(.quit(speaker: speaker(who)))]
            if fold(who) == fold(settings.nick) { actions += regainNow() }
            return actions
        case "PRIVMSG":
            return privateOrChannelMessage(message, now: now)
        case "353":
            // RPL_NAMREPLY: me, "=" / "*" / "@", channel, names with their prefixes.
            guard parameters.count >= 4 else { return [] }
            let key = fold(parameters[2])
            guard channelsByKey[key] != nil else { return [] }
            let listed = parameters[3].split(separator: " ").map { String($0.drop { "~&@%+".contains($0) }) }
            names[key, default: []] += listed.filter { !$0.isEmpty && fold($0) != fold(nick) }.map { speaker($0) }
            return []
        case "366":
            guard parameters.count >= 2 else { return [] }
            let key = fold(parameters[1])
            guard let channel = channelsByKey[key] else { return [] }
            let listed = names.removeValue(forKey: key) ?? []
            return [.deliver(.present(channel: channel.name, speakers: listed))]
        case "403", "405", "471", "473", "474", "475", "477":
            guard parameters.count >= 2 else { return [] }
            let key = fold(parameters[1])
            guard let channel = channelsByKey[key] else { return [] }
            var retry = joinBackoffs[key] ?? Backoff(settings: settings.joinRetry, seed: Backoff.seed(key))
            let delay = retry.next()
            joinBackoffs[key] = retry
            return [.log(LogEntry(.warning, "the IRC channel refused the join",
                                  ["channel": channel.name, "code": message.command, "reason": parameters.last ?? "",
                                   "retry_in": Self.seconds(delay)])),
                    .schedule(.rejoin(attempt, key), after: delay)]
        case "404":
            return [.log(LogEntry(.warning, "the IRC channel refused a line", ["reason": parameters.last ?? ""]))]
        case "464", "465":
            return [.log(LogEntry(.error, "the IRC server refused the bridge", ["code": message.command, "reason": parameters.last ?? ""]))]
        default:
            return []
        }
    }

    private mutating func departed(channelName: String, who: String, reason: String) -> [Action] {
        let key = fold(channelName)
        guard let channel = channelsByKey[key] else { return [] }
        guard fold(who) == fold(nick) else {
            return [.deliver(.left(channel: channel.name, speaker: speaker(who)))]
        }
        guard joined.remove(key) != nil else { return [] }
        return [.log(LogEntry(.warning, "out of the IRC channel", ["channel": channel.name, "reason": reason,
                                                                     "rejoin_in": Self.seconds(settings.rejoinDelay)])),
                .deliver(.parted(channel: channel.name, reason: reason)),
                .schedule(.rejoin(attempt, key), after: settings.rejoinDelay)]
    }

    private mutating func privateOrChannelMessage(_ message: IRCMessage, now: Double) -> [Action] {
        guard let from = message.nick, fold(from) != fold(nick), message.parameters.count >= 2 else { return [] }
        let target = message.parameters[0]
        let ctcp = IRCText.ctcp(message.parameters[1])
        // The bridge hears plain text: formatting codes are IRC's alone.
        let text = IRCText.plain(message.parameters[1])
        let key = fold(target)
        if let channel = channelsByKey[key], joined.contains(key) {
            if let ctcp {
                guard ctcp.command == "ACTION" else { return [] }
                return [.deliver(.message(channel: channel.name, from: speaker(from), text: IRCText.plain(ctcp.argument), action: true))]
            }
            return [.deliver(.message(channel: channel.name, from: speaker(from), text: text, action: false))]
        }
        guard key == fold(nick) else { return [] }
        if let ctcp {
            switch ctcp.command {
            case "VERSION": return enqueue(target: from, IRCMessage(command: "NOTICE", [from, IRCText.ctcpReply("VERSION", settings.version)]), now: now)
            case "PING": return enqueue(target: from, IRCMessage(command: "NOTICE", [from, IRCText.ctcpReply("PING", ctcp.argument)]), now: now)
            case "ACTION": return [.deliver(.direct(from: speaker(from), text: IRCText.plain(ctcp.argument)))]
            default: return []
            }
        }
        return [.deliver(.direct(from: speaker(from), text: text))]
    }

    // MARK: - Nicks

    /// The nick to try after `refused`: the alternates, then `nick_`, `nick2`, ...
    mutating func nextNick(refused: String, code: String) -> [Action] {
        nickTries += 1
        guard nickTries <= settings.alternateNicks.count + Self.maximumNickTries else {
            return [.log(LogEntry(.error, "no nick was accepted by the IRC server", ["tries": "\(nickTries)"])),
                    .disconnect(attempt)]
        }
        let candidate: String
        if nickTries <= settings.alternateNicks.count {
            candidate = settings.alternateNicks[nickTries - 1]
        } else {
            let number = nickTries - settings.alternateNicks.count
            let suffix = number == 1 ? "_" : String(number)
            candidate = String(settings.nick.prefix(max(1, Self.portableNickLength - suffix.count))) + suffix
        }
        nick = candidate
        return [.log(LogEntry(.notice, "IRC nick refused, trying another", ["refused": refused, "code": code, "nick": candidate]))]
            + write(IRCMessage(command: "NICK", [candidate]))
    }

    private mutating func regainNow() -> [Action] {
        guard phase == .registered, fold(nick) != fold(settings.nick) else { return [] }
        return write(IRCMessage(command: "NICK", [settings.nick]))
    }

    private func join(_ channel: Channel) -> [Action] {
        write(IRCMessage(command: "JOIN", channel.key.map { [channel.name, $0] } ?? [channel.name]))
    }

    // MARK: - What the bridge says

    private mutating func perform(_ command: NetworkCommand, now: Double) -> [Action] {
        let verb: String, target: String, text: String
        switch command {
        case .say(let channel, let said):
            (verb, target, text) = ("PRIVMSG", channel, said)
        case .notice(let channel, let said):
            (verb, target, text) = ("NOTICE", channel, said)
        case .tell(let speaker, let said):
            (verb, target, text) = ("NOTICE", speaker.name, said)
        }
        guard phase == .registered, channelsByKey[fold(target)] == nil || joined.contains(fold(target)) else {
            return [.log(LogEntry(.debug, "a line for IRC dropped: not in the channel", ["target": target]))]
        }
        let clean = String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\r" || $0 == "\n" || $0 == "\0" ? " " : $0 }))
        // What the server relays: ":nick!user@host VERB target :text" within the line limit.
        let reserve = (relayPrefixBytes ?? (nick.utf8.count + 80)) + verb.utf8.count + target.utf8.count + 4 + 2
        let budget = settings.maximumLineBytes - reserve
        guard budget >= 16 else { return [] }
        var actions: [Action] = []
        for piece in IRCText.pieces(clean, maximumBytes: budget, maximumPieces: settings.maximumPiecesPerMessage) {
            actions += enqueue(target: target, IRCMessage(command: verb, [target, piece]), now: now, pump: false)
        }
        return actions + pump(now: now)
    }

    private mutating func enqueue(target: String, _ message: IRCMessage, now: Double, pump pumping: Bool = true) -> [Action] {
        switch message.line(maximumBytes: settings.maximumLineBytes) {
        case .failure(let problem):
            return [.log(LogEntry(.warning, "a line for IRC could not be written", ["problem": "\(problem)"]))]
        case .success(let line):
            if !pacer.enqueue(Outbound(target: target, line: line)) {
                droppedByTarget[target, default: 0] += 1
            }
            return pumping ? pump(now: now) : []
        }
    }

    private mutating func pump(now: Double) -> [Action] {
        var actions = pacer.release(now: now).map { Action.write(attempt, $0.line) }
        if !droppedByTarget.isEmpty, pacer.count <= settings.pacing.maximumQueued / 2 {
            for (target, count) in droppedByTarget.sorted(by: { $0.key < $1.key }) {
                let text = "(\(count) line\(count == 1 ? "" : "s") not relayed: more came at once than this channel's pace allows)"
                if case .success(let line) = IRCMessage(command: "NOTICE", [target, text]).line(maximumBytes: settings.maximumLineBytes) {
                    pacer.enqueue(Outbound(target: target, line: line))
                }
            }
            actions.append(.log(LogEntry(.warning, "lines for IRC dropped by a full queue",
                                         ["count": "\(droppedByTarget.values.reduce(0, +))"])))
            droppedByTarget = [:]
            actions += pacer.release(now: now).map { Action.write(attempt, $0.line) }
        }
        if !paceArmed, let delay = pacer.delayUntilNext(now: now) {
            paceArmed = true
            actions.append(.schedule(.pace(attempt), after: max(0.001, delay)))
        }
        return actions
    }

    /// A line that goes out at once, past the pacer: registration, PONG, JOIN, NICK, QUIT.
    private func write(_ message: IRCMessage) -> [Action] {
        switch message.line(maximumBytes: settings.maximumLineBytes) {
        case .success(let line): return [.write(attempt, line)]
        case .failure(let problem):
            return [.log(LogEntry(.error, "a line for IRC could not be written", ["command": message.command, "problem": "\(problem)"]))]
        }
    }

    // MARK: - Names

    private func fold(_ text: String) -> String { caseMapping.fold(text) }

    private func speaker(_ nick: String) -> NetworkSpeaker {
        NetworkSpeaker(id: fold(nick), name: nick)
    }

    static func seconds(_ value: Double) -> String {
        value < 10 ? "\(Double(Int(value * 10)) / 10)s" : "\(Int(value))s"
    }
}
