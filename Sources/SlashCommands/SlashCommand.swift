/// One typed command, as parsed from a line starting with `/`.
///
/// Every argument is already validated: a URL is http(s) and short enough, a name is
/// visible characters, a rate is within bounds. The core never re-checks syntax.
public enum SlashCommand: Hashable, Sendable {
    case help(topic: HelpTopic?)
    case nick(DisplayName)
    case watch(MediaURL, title: String?)
    /// `/watch own <hash> <size> <seconds> [title...]`: a file everyone plays from their own disk.
    case watchOwn(OwnCopy, title: String?)
    case join
    case leave
    case end
    case play(now: Bool)
    case pause
    case seek(TimeArgument)
    case rate(PlaybackRate)
    case suspend(SuspensionReason)
    /// `reason` nil ends every suspension; `at` proposes a new time for the group.
    case resume(SuspensionReason?, at: TimeArgument?)
    /// How many seconds to rewind and replay at 2x.
    case catchup(seconds: Double)
    /// Nil lists the queue; otherwise appends the item.
    case queue(MediaURL?, title: String?)
    case next
    /// Adds a WebVTT track to the current activity; nil URL removes them all.
    case subtitles(MediaURL?, label: String?)
    /// Takes an item out of the queue.
    case dequeue(QueueReference)
    /// Moves a queued item to a position (1 is next).
    case move(QueueReference, to: Int)
    case autoplay(Bool)
    case player(Bool)
    /// `/ready <seq> [lead <ms>]`: `lead` is the time the player asks for between
    /// hearing of a start and the start (0 when not given): a page with sound
    /// plays out of hearing first, to measure its clock before it is heard.
    case ready(seq: Int64, lead: Int)
    case buffering
    case ended(seq: Int64)
    /// What the player found the item of state `seq` to be once loaded: its length,
    /// or a live stream and the position that follows its live edge now.
    case duration(seq: Int64, MediaLength)
    /// `/have <seq> yes|no`: whether this player has a copy of the own-copy item of state seq.
    case have(seq: Int64, Bool)
    /// The client's own clock reading, echoed back (any unit the client likes,
    /// normally epoch milliseconds, possibly fractional from `performance.now()`).
    case time(client: Double)
    case who
    case status
    /// All nil lists the policy.
    case policy(PolicyChange)
    case op(String)
    case deop(String)
    case kick(String, reason: String?)
    /// `minutes` nil: until `/unban`.
    case ban(String, minutes: Double?, reason: String?)
    /// A banned name, or a ban's number as `/bans` lists it.
    case unban(String)
    case bans
    case mute(String)
    case unmute(String)
    /// Nil turns slow mode off.
    case slow(seconds: Double?)
    case lock
    case unlock
    /// Nil removes the password.
    case password(String?)
    /// Defaults: one use, a day.
    case invite(uses: Int, minutes: Double)
    case invites
    /// An invite's number, as `/invites` lists it.
    case revoke(Int64)
    /// A token for a bot or an integration, named, with what it may do.
    case token(DisplayName, scope: TokenScope)
    case tokens
    /// A token's number, as `/tokens` lists it.
    case untoken(Int64)
    /// Listed on the landing page, or not.
    case listed(Bool)
    case me(String)
    /// The room's voice: a seat, its microphone, or (hosts) who may talk.
    case voice(VoiceCommand)

    public var name: CommandName {
        switch self {
        case .help: .help
        case .nick: .nick
        case .watch, .watchOwn: .watch
        case .join: .join
        case .leave: .leave
        case .end: .end
        case .play: .play
        case .pause: .pause
        case .seek: .seek
        case .rate: .rate
        case .suspend: .suspend
        case .resume: .resume
        case .catchup: .catchup
        case .queue: .queue
        case .next: .next
        case .subtitles: .subtitles
        case .dequeue: .dequeue
        case .move: .move
        case .autoplay: .autoplay
        case .player: .player
        case .ready: .ready
        case .buffering: .buffering
        case .ended: .ended
        case .duration: .duration
        case .have: .have
        case .time: .time
        case .who: .who
        case .status: .status
        case .policy: .policy
        case .op: .op
        case .deop: .deop
        case .kick: .kick
        case .ban: .ban
        case .unban: .unban
        case .bans: .bans
        case .mute: .mute
        case .unmute: .unmute
        case .slow: .slow
        case .lock: .lock
        case .unlock: .unlock
        case .password: .password
        case .invite: .invite
        case .invites: .invites
        case .revoke: .revoke
        case .token: .token
        case .tokens: .tokens
        case .untoken: .untoken
        case .listed: .public
        case .me: .me
        case .voice: .voice
        }
    }
}

/// What `/help <topic>` explains: one command, or the reports players and bots
/// send, which plain `/help` leaves out.
public enum HelpTopic: Hashable, Sendable {
    case command(CommandName)
    case players

    /// The word that names it after `/help`.
    public var word: String {
        switch self {
        case .command(let name): name.rawValue
        case .players: "players"
        }
    }
}

/// The names of every command, in the order `/help` lists them.
public enum CommandName: String, CaseIterable, Hashable, Sendable {
    case help, nick, watch, join, leave, end, play, pause, seek, rate, suspend, resume
    case catchup, queue, next, dequeue, move, subtitles, autoplay, player, ready, buffering, ended, duration, have, time, who
    case status, policy, op, deop, kick, ban, unban, bans, mute, unmute, slow
    case lock, unlock, password, invite, invites, revoke, token, tokens, untoken, `public`, me, voice
}

/// What `/voice` asks (docs/voice.md).
public enum VoiceCommand: Hashable, Sendable {
    /// `/voice`: who is in the room's voice, who speaks, and who may join.
    case list
    /// `/voice join`: the first step of taking a seat. The answer is a ticket:
    /// the ICE servers to connect through, with short-lived TURN credentials.
    case join
    /// `/voice offer <sdp>`: the second step, the page's WebRTC offer
    /// (its session description in base64, ICE candidates included), or its
    /// last part.
    case offer(String)
    /// `/voice offer part <base64>`: a part of an offer longer than a line,
    /// followed by more parts and then the last one as `/voice offer`.
    case offerPart(String)
    case leave
    /// `/voice mute` (true) and `/voice unmute`: one's own microphone.
    case mute(Bool)
    /// `/voice on|off|hosts` (hosts): who may take a seat.
    case mode(VoiceMode)
}

/// Who may take a seat in a room's voice.
public enum VoiceMode: String, Hashable, Sendable, CaseIterable, Codable {
    case on, off, hosts
}

/// A player's report of what the item is (`/duration`).
public enum MediaLength: Hashable, Sendable {
    /// A fixed timeline of this many seconds.
    case seconds(Double)
    /// A live stream, whose live edge (less the player's safety margin) is at
    /// this media position now.
    case live(edge: MediaTime)
}

/// What a bot's token lets its connections do: `read` only sees the room's events
/// (and may ask /who, /status, /help, /time); `chat` also talks; `control` also
/// drives playback and the queue, as a host would under `control hosts`.
public enum TokenScope: String, Hashable, Sendable, CaseIterable, Codable {
    case read, chat, control
}

/// Who may control playback in a room.
public enum ControlPolicy: String, Hashable, Sendable, CaseIterable {
    case everyone, hosts
}

/// What a stalled player does to the group.
public enum StallPolicy: String, Hashable, Sendable, CaseIterable {
    /// Only the staller is suspended (`stallRecovery`); the group goes on.
    case `continue`
    /// The group waits, as `waiting`, until the staller is ready again.
    case wait
}

/// The parts of `/policy` a host asked to change; nil parts stay as they are.
public struct PolicyChange: Hashable, Sendable {
    public var control: ControlPolicy?
    public var stall: StallPolicy?
    /// How long a coordinated start waits for stragglers.
    public var wait: Duration?

    public init(control: ControlPolicy? = nil, stall: StallPolicy? = nil, wait: Duration? = nil) {
        self.control = control
        self.stall = stall
        self.wait = wait
    }

    public var isEmpty: Bool { control == nil && stall == nil && wait == nil }
}

/// What a line of input is, before any room logic.
public enum InputLine: Hashable, Sendable {
    case command(SlashCommand)
    /// Chat text, with a leading `//` already turned into `/`.
    case chat(String)
    /// Blank lines are dropped without an error.
    case empty
}

/// A queued item, by its place in the queue as `/queue` lists it (1 is next), or
/// by its id (`q7`, from the state's `queue`), which stays right while others
/// reorder the queue.
public enum QueueReference: Hashable, Sendable {
    case position(Int)
    case id(String)

    public init?<S: StringProtocol>(_ text: S) {
        if let number = Int(text), number >= 1, number <= 1_000_000 {
            self = .position(number)
        } else if text.count >= 2, text.count <= 20, text.first == "q", text.dropFirst().allSatisfy(\.isASCII),
                  text.dropFirst().allSatisfy(\.isNumber) {
            self = .id(String(text))
        } else {
            return nil
        }
    }

    public var text: String {
        switch self {
        case .position(let number): String(number)
        case .id(let id): id
        }
    }
}
