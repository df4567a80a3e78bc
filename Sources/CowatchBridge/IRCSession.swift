import CowatchClient
import CowatchTime

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
        case start(now: MonotonicInstant)
        /// The socket (and TLS, for `ircs://`) is up.
        case connected(Attempt, now: MonotonicInstant)
        /// One line, without its CR-LF.
        case received(Attempt, String, now: MonotonicInstant)
        case closed(Attempt, reason: String, now: MonotonicInstant)
        case timerFired(Timer, now: MonotonicInstant)
        case command(NetworkCommand, now: MonotonicInstant)
        case stop
    }

    public enum Action: Sendable, Hashable {
        case connect(Attempt)
        /// One line, without CR-LF.
        case write(Attempt, String)
        case disconnect(Attempt)
        case schedule(Timer, after: MonotonicDuration)
        case deliver(NetworkEvent)
        case log(LogEntry)
    }

    enum Phase: Sendable, Hashable {
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
    // Internal, not private: the session's extensions (IRCSession+Connection,
    // +Received, +Nicks, +Outbound) read and change them.
    var phase: Phase = .idle
    var attempt: Attempt = 0
    public internal(set) var nick: String
    var nickTries = 0
    public internal(set) var caseMapping: IRCCaseMapping = .rfc1459
    /// Folded names of the channels the bot is in.
    public internal(set) var joined: Set<String> = []
    /// Folded name to the configured channel.
    var channelsByKey: [String: Channel] = [:]
    /// Names lists (353) being received, until their 366.
    var names: [String: [NetworkSpeaker]] = [:]
    var pacer: OutboundPacer<Outbound>
    var paceArmed = false
    /// Lines refused by a full queue, by target, told once there is room again.
    var droppedByTarget: [String: Int] = [:]
    /// Set on connecting, before anything reads it.
    var lastReceived = MonotonicInstant(microseconds: 0)
    var pingSentAt: MonotonicInstant?
    var backoff: Backoff
    var joinBackoffs: [String: Backoff] = [:]
    /// Bytes the server puts before our lines when it relays them (`:nick!user@host `);
    /// learnt from our own JOIN, assumed long before that.
    var relayPrefixBytes: Int?

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

    // MARK: - Names

    func fold(_ text: String) -> String { caseMapping.fold(text) }

    func speaker(_ nick: String) -> NetworkSpeaker {
        NetworkSpeaker(id: fold(nick), name: nick)
    }

    static func seconds(_ span: MonotonicDuration) -> String {
        let value = span.seconds
        return value < 10 ? "\(Double(Int(value * 10)) / 10)s" : "\(Int(value))s"
    }
}
