/// The one table of commands. The parser looks commands up here, `/help` prints
/// it, and `docs/commands.md` is generated from it (a test keeps the file in step).
public enum CommandTable {
    /// Every command, in `CommandName.allCases` order.
    public static let specs: [CommandSpec] = CommandName.allCases.map(spec(for:))

    public static func spec(_ name: CommandName) -> CommandSpec {
        specs[CommandName.allCases.firstIndex(of: name) ?? 0]
    }

    /// The longest `/catchup` rewind, in seconds.
    public static let maximumCatchupSeconds = 600.0
    /// The longest title or `/me` text, in characters.
    public static let maximumTitleCharacters = 200
    /// The longest `/policy wait`, in seconds.
    public static let maximumWaitSeconds = 300.0
    /// The longest timed `/ban`, in minutes (a year).
    public static let maximumBanMinutes = 525_600.0
    /// The longest reason of a `/kick` or `/ban`, in characters.
    public static let maximumReasonCharacters = 200
    /// The longest `/voice offer`, all its parts together, in base64
    /// characters: a page's audio offer is about 2 KB with a handful of ICE
    /// candidates, and each further one adds about 100 bytes. Longer than a
    /// line, it comes in parts (`/voice offer part`).
    public static let maximumVoiceOfferCharacters = 16_384
    /// The longest room password, in characters.
    public static let maximumPasswordCharacters = 64
    /// The largest length or live-edge position a player may report, in seconds
    /// (about 31 years: a live stream that never stops counts its position from
    /// its first day, beyond what `/seek` takes).
    public static let maximumReportedSeconds = 1_000_000_000.0
    /// The most a `/ready` may ask for: a start is announced at most one second ahead (docs/protocol.md).
    public static let maximumReadyLead = 1_000

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private static func spec(for name: CommandName) -> CommandSpec {
        switch name {
        case .help:
            return CommandSpec(name: name, arguments: "[command|players]", summary: "List people's commands, show one command's usage, or (players) list what players and bots report.", audience: .anyone) { args throws(ArgumentProblem) in
                guard let word = args.word() else { return .help(topic: nil) }
                try args.requireEnd()
                if word.lowercased() == HelpTopic.players.word { return .help(topic: .players) }
                let bare = word.hasPrefix("/") ? word.dropFirst() : word
                guard let topic = CommandName(rawValue: bare.lowercased()) else {
                    throw ArgumentProblem("there is no command /\(excerpt(bare))")
                }
                return .help(topic: .command(topic))
            }
        case .nick:
            return CommandSpec(name: name, arguments: "<name>", summary: "Change your display name (1-32 visible characters, single spaces between words, one script or Latin with Chinese, Japanese or Korean; a name already taken, or one that looks like it, gets a suffix).", audience: .anyone) { args throws(ArgumentProblem) in
                guard let text = args.remainder() else { throw ArgumentProblem("missing name") }
                if let problem = DisplayName.validationProblem(String(text)) { throw ArgumentProblem(problem) }
                guard let name = DisplayName(String(text)) else { throw ArgumentProblem("not a valid name") }
                return .nick(name)
            }
        case .watch:
            return CommandSpec(name: name, arguments: "<url> [title...]", summary: "Share a video with the room (a link to a media file, or a YouTube or Vimeo video's link; or /watch own <hash> <bytes> <seconds> [title...]: a file each member plays from their own disk, named by its OpenSubtitles hash, size and length): start the group session, or replace what everyone is watching.", audience: .controllers) { args throws(ArgumentProblem) in
                if args.peek()?.lowercased() == "own" {
                    _ = args.word()
                    let (copy, title) = try ownCopy(&args)
                    return .watchOwn(copy, title: title)
                }
                let (url, title) = try mediaItem(&args, playable: true)
                return .watch(url, title: title)
            }
        case .join:
            return noArguments(name, .join, "Join the room's group session (members join on connect unless the URL says join=0).", .anyone)
        case .leave:
            return noArguments(name, .leave, "Leave the group session for yourself only: you stay in the room and its chat.", .sessionMembers)
        case .end:
            return noArguments(name, .end, "End the group session for everyone.", .controllers)
        case .play:
            return CommandSpec(name: name, arguments: "[now]", summary: "Play for everyone, starting together once every player is ready; `now` starts at once without waiting.", audience: .controllers) { args throws(ArgumentProblem) in
                guard let word = args.word() else { return .play(now: false) }
                guard word.lowercased() == "now" else { throw ArgumentProblem("expected \"now\" or nothing") }
                try args.requireEnd()
                return .play(now: true)
            }
        case .pause:
            return noArguments(name, .pause, "Pause for everyone at the group's current position.", .controllers)
        case .seek:
            return CommandSpec(name: name, arguments: "<time>", summary: "Move everyone to a time (95, 95.5, 1:35, 1:01:35, +10, -10); while playing, the group waits for players and resumes together.", audience: .controllers) { args throws(ArgumentProblem) in
                let time = try timeArgument(try args.requireWord("time"))
                try args.requireEnd()
                return .seek(time)
            }
        case .rate:
            return CommandSpec(name: name, arguments: "<rate>", summary: "Set the playback rate for everyone, 0.25 to 4.", audience: .controllers) { args throws(ArgumentProblem) in
                var word = try args.requireWord("rate")
                try args.requireEnd()
                if word.last == "x" || word.last == "X" { word = word.dropLast() }
                guard let value = ArgumentValues.decimal(word, maximumWholeDigits: 3), let rate = PlaybackRate(value) else {
                    throw ArgumentProblem("the rate must be a number from 0.25 to 4")
                }
                return .rate(rate)
            }
        case .suspend:
            return CommandSpec(name: name, arguments: "[reason]", summary: "Separate your player from the group (default reason userActionRequired); suspensions stack.", audience: .sessionMembers) { args throws(ArgumentProblem) in
                guard let word = args.word() else { return .suspend(.userActionRequired) }
                try args.requireEnd()
                return .suspend(try reason(word))
            }
        case .resume:
            return CommandSpec(name: name, arguments: "[reason] [at <time>]", summary: "End your suspension (one reason, or all); with `at <time>`, move the whole group to that time.", audience: .sessionMembers) { args throws(ArgumentProblem) in
                var ending: SuspensionReason? = nil
                if let word = args.peek(), word.lowercased() != "at" {
                    _ = args.word()
                    ending = try reason(word)
                }
                var time: TimeArgument? = nil
                if let word = args.word() {
                    guard word.lowercased() == "at" else { throw ArgumentProblem("expected \"at <time>\", got \"\(excerpt(word))\"") }
                    time = try timeArgument(try args.requireWord("time after \"at\""))
                }
                try args.requireEnd()
                return .resume(ending, at: time)
            }
        case .catchup:
            return CommandSpec(name: name, arguments: "[seconds]", summary: "\"What happened?\": for you alone, rewind (default 10 s) and replay at 2x until level with the group.", audience: .sessionMembers) { args throws(ArgumentProblem) in
                guard let word = args.word() else { return .catchup(seconds: 10) }
                try args.requireEnd()
                guard let seconds = ArgumentValues.decimal(word, maximumWholeDigits: 4), seconds > 0,
                      seconds <= maximumCatchupSeconds
                else {
                    throw ArgumentProblem("seconds must be more than 0 and at most \(Int(maximumCatchupSeconds))")
                }
                return .catchup(seconds: seconds)
            }
        case .queue:
            return CommandSpec(name: name, arguments: "[<url> [title...]]", summary: "Without arguments, list the queue; with a URL, add it to the end of the queue.", audience: .controllers) { args throws(ArgumentProblem) in
                guard !args.isAtEnd else { return .queue(nil, title: nil) }
                let (url, title) = try mediaItem(&args, playable: true)
                return .queue(url, title: title)
            }
        case .next:
            return noArguments(name, .next, "Move everyone to the next item in the queue.", .controllers)
        case .subtitles:
            return CommandSpec(name: name, arguments: "<url> [label...]|off", summary: "Add a subtitle track (a WebVTT file) to what is playing, for each viewer to pick; off removes them all.", audience: .controllers) { args throws(ArgumentProblem) in
                if let word = args.peek(), word.lowercased() == "off" {
                    _ = args.word()
                    try args.requireEnd()
                    return .subtitles(nil, label: nil)
                }
                let (url, label) = try mediaItem(&args)
                return .subtitles(url, label: label)
            }
        case .dequeue:
            return CommandSpec(name: name, arguments: "<n>|<id>", summary: "Take an item out of the queue: its number as /queue lists it, or its id (q7).", audience: .hosts) { args throws(ArgumentProblem) in
                let item = try queueReference(&args)
                try args.requireEnd()
                return .dequeue(item)
            }
        case .move:
            return CommandSpec(name: name, arguments: "<n>|<id> <position>", summary: "Move a queued item to a position in the queue (/move 3 1 makes item 3 the next one).", audience: .hosts) { args throws(ArgumentProblem) in
                let item = try queueReference(&args)
                let word = try args.requireWord("position")
                try args.requireEnd()
                guard let position = Int(word), position >= 1, position <= 1_000_000 else {
                    throw ArgumentProblem("a position is a whole number from 1 (next)")
                }
                return .move(item, to: position)
            }
        case .autoplay:
            return CommandSpec(name: name, arguments: "on|off", summary: "Your preference: when the current item ends and at least one member has autoplay on, the room moves to the next item.", audience: .anyone) { args throws(ArgumentProblem) in
                .autoplay(try toggle(&args))
            }
        case .player:
            return CommandSpec(name: name, arguments: "on|off", summary: "Declare that this connection drives a media player: it follows the state and reports readiness.", audience: .anyone) { args throws(ArgumentProblem) in
                .player(try toggle(&args))
            }
        case .ready:
            return CommandSpec(name: name, arguments: "<seq> [lead <ms>]", summary: "Player report: ready to play the state numbered seq (loaded, at its position); lead asks that the group's start be announced at least this long ahead (0-\(maximumReadyLead) ms).", audience: .players) { args throws(ArgumentProblem) in
                let seq = try sequenceWord(&args)
                guard let keyword = args.word() else { return .ready(seq: seq, lead: 0) }
                guard keyword.lowercased() == "lead" else {
                    throw ArgumentProblem("after the seq, only lead <ms>")
                }
                let word = try args.requireWord("the lead in ms")
                try args.requireEnd()
                guard let lead = ArgumentValues.wholeNumber(word), lead <= maximumReadyLead else {
                    throw ArgumentProblem("a lead is whole milliseconds, from 0 to \(maximumReadyLead)")
                }
                return .ready(seq: seq, lead: Int(lead))
            }
        case .buffering:
            return noArguments(name, .buffering, "Player report: stalled. Depending on /policy stall, you are suspended alone or the group waits for you.", .players)
        case .ended:
            return CommandSpec(name: name, arguments: "<seq>", summary: "Player report: reached the end of the item of state seq.", audience: .players) { args throws(ArgumentProblem) in
                .ended(seq: try sequenceNumber(&args))
            }
        case .duration:
            return CommandSpec(name: name, arguments: "<seq> <seconds>|live <edge>", summary: "Player report: the item of state seq, once loaded, lasts this many seconds, or is a live stream whose live edge (less the player's margin) is at media position edge now.", audience: .players) { args throws(ArgumentProblem) in
                let seq = try sequenceWord(&args)
                let word = try args.requireWord("seconds, or live and the edge")
                if word.lowercased() == "live" {
                    let edge = try args.requireWord("the live edge's position")
                    try args.requireEnd()
                    guard let seconds = ArgumentValues.decimal(edge, maximumWholeDigits: 10), seconds <= maximumReportedSeconds else {
                        throw ArgumentProblem("the live edge is a position in seconds, from 0 to \(Int(maximumReportedSeconds))")
                    }
                    return .duration(seq: seq, .live(edge: MediaTime(seconds: seconds)))
                }
                try args.requireEnd()
                guard let seconds = ArgumentValues.decimal(word, maximumWholeDigits: 10), seconds > 0,
                      seconds <= maximumReportedSeconds else {
                    throw ArgumentProblem("the duration is seconds, more than 0 and at most \(Int(maximumReportedSeconds)), or live and the edge")
                }
                return .duration(seq: seq, .seconds(seconds))
            }
        case .have:
            return CommandSpec(name: name, arguments: "<seq> yes|no", summary: "Player report: whether you have a copy of the own-copy item of state seq (one matching its hash, size and length); a player without one is not waited for.", audience: .players) { args throws(ArgumentProblem) in
                let seq = try sequenceWord(&args)
                let word = try args.requireWord("yes or no")
                try args.requireEnd()
                switch word.lowercased() {
                case "yes": return .have(seq: seq, true)
                case "no": return .have(seq: seq, false)
                default: throw ArgumentProblem("\"\(excerpt(word))\" is not yes or no")
                }
            }
        case .time:
            return CommandSpec(name: name, arguments: "<client-ms>", summary: "Clock sync: the server answers with your value and its own time in milliseconds.", audience: .anyone) { args throws(ArgumentProblem) in
                var word = try args.requireWord("client time")
                try args.requireEnd()
                let negative = word.first == "-"
                if negative { word = word.dropFirst() }
                guard let value = ArgumentValues.decimal(word, maximumWholeDigits: 16) else {
                    throw ArgumentProblem("the client time must be a number")
                }
                return .time(client: negative ? -value : value)
            }
        case .who:
            return noArguments(name, .who, "List the members: role, session, player, readiness, suspensions.", .anyone)
        case .status:
            return noArguments(name, .status, "Show what is playing, where, at what rate and in which state.", .anyone)
        case .policy:
            return CommandSpec(name: name, arguments: "[control everyone|hosts] [stall continue|wait] [wait <seconds>]", summary: "Show the room policy, or (hosts) change who controls playback, what a stall does, and how long a start waits for stragglers.", audience: .hosts) { args throws(ArgumentProblem) in
                try policy(&args)
            }
        case .op:
            return CommandSpec(name: name, arguments: "<name>", summary: "Make a member a host.", audience: .hosts) { args throws(ArgumentProblem) in
                .op(try memberName(&args))
            }
        case .deop:
            return CommandSpec(name: name, arguments: "<name>", summary: "Take host rights from a member (a room keeps at least one host).", audience: .hosts) { args throws(ArgumentProblem) in
                .deop(try memberName(&args))
            }
        case .kick:
            return CommandSpec(name: name, arguments: "<name> [reason...]", summary: "Remove a member from the room and keep them out for the kick cooldown (10 minutes by default); they are told who kicked them and why. A name with spaces goes in double quotes.", audience: .hosts) { args throws(ArgumentProblem) in
                let target = try memberName(&args, more: true)
                return .kick(target, reason: try reasonText(&args))
            }
        case .ban:
            return CommandSpec(name: name, arguments: "<name> [minutes] [reason...]", summary: "Remove a member and keep them out by identity, name and address, for some minutes or until /unban. A name with spaces goes in double quotes.", audience: .hosts) { args throws(ArgumentProblem) in
                let target = try memberName(&args, more: true)
                var minutes: Double?
                if let word = args.peek(), let value = ArgumentValues.decimal(word, maximumWholeDigits: 6) {
                    _ = args.word()
                    guard value > 0, value <= maximumBanMinutes else {
                        throw ArgumentProblem("minutes must be more than 0 and at most \(Int(maximumBanMinutes)) (a year); leave them out to ban until /unban")
                    }
                    minutes = value
                }
                return .ban(target, minutes: minutes, reason: try reasonText(&args))
            }
        case .unban:
            return CommandSpec(name: name, arguments: "<name>|<number>", summary: "Lift a ban or a kick's cooldown, by the name it keeps out or its number in /bans.", audience: .hosts) { args throws(ArgumentProblem) in
                .unban(try memberName(&args))
            }
        case .bans:
            return noArguments(name, .bans, "List the bans and kick cooldowns in force.", .hosts)
        case .mute:
            return CommandSpec(name: name, arguments: "<name>", summary: "Stop a member's chat and commands without removing them (their player still follows the group).", audience: .hosts) { args throws(ArgumentProblem) in
                .mute(try memberName(&args))
            }
        case .unmute:
            return CommandSpec(name: name, arguments: "<name>", summary: "Let a muted member talk and use commands again.", audience: .hosts) { args throws(ArgumentProblem) in
                .unmute(try memberName(&args))
            }
        case .slow:
            return CommandSpec(name: name, arguments: "<seconds>|off", summary: "Slow mode: each member who is not a host may chat once every so many seconds (at most 3600).", audience: .hosts) { args throws(ArgumentProblem) in
                let word = try args.requireWord("seconds or off")
                try args.requireEnd()
                if word.lowercased() == "off" { return .slow(seconds: nil) }
                guard let seconds = ArgumentValues.decimal(word, maximumWholeDigits: 4), seconds > 0, seconds <= 3600 else {
                    throw ArgumentProblem("slow mode takes seconds from more than 0 to 3600, or off")
                }
                return .slow(seconds: seconds)
            }
        case .lock:
            return noArguments(name, .lock, "Lock the room: only invite links, the owner key and members already here let anyone in.", .hosts)
        case .unlock:
            return noArguments(name, .unlock, "Open a locked room to anyone again.", .hosts)
        case .password:
            return CommandSpec(name: name, arguments: "<password>|off", summary: "Ask newcomers for a password (1-64 characters, no spaces), or stop asking.", audience: .hosts) { args throws(ArgumentProblem) in
                let word = try args.requireWord("password or off")
                try args.requireEnd()
                if word.lowercased() == "off" { return .password(nil) }
                guard word.count <= maximumPasswordCharacters else {
                    throw ArgumentProblem("a password has at most \(maximumPasswordCharacters) characters")
                }
                return .password(String(word))
            }
        case .invite:
            return CommandSpec(name: name, arguments: "[uses] [minutes]", summary: "Make an invite link that lets people into a locked or password-protected room: for so many uses (default 1, at most 1000) and minutes (default 1440, a day).", audience: .hosts) { args throws(ArgumentProblem) in
                var uses = 1, minutes = 1440.0
                if let word = args.word() {
                    guard let value = ArgumentValues.wholeNumber(word), value >= 1, value <= 1000 else {
                        throw ArgumentProblem("uses is a whole number from 1 to 1000")
                    }
                    uses = Int(value)
                }
                if let word = args.word() {
                    guard let value = ArgumentValues.decimal(word, maximumWholeDigits: 5), value > 0, value <= 43_200 else {
                        throw ArgumentProblem("minutes: more than 0, at most 43200 (30 days)")
                    }
                    minutes = value
                }
                try args.requireEnd()
                return .invite(uses: uses, minutes: minutes)
            }
        case .invites:
            return noArguments(name, .invites, "List the invite links in force: number, uses left, until when, by whom.", .hosts)
        case .revoke:
            return CommandSpec(name: name, arguments: "<number>", summary: "End an invite link, by its number in /invites.", audience: .hosts) { args throws(ArgumentProblem) in
                var word = try args.requireWord("number")
                try args.requireEnd()
                if word.first == "#" { word = word.dropFirst() }
                guard let number = ArgumentValues.wholeNumber(word) else { throw ArgumentProblem("an invite's number, as /invites lists it") }
                return .revoke(number)
            }
        case .token:
            return CommandSpec(name: name, arguments: "<name> [read|chat|control]", summary: "Make a token for a bot: its connections (token= or Authorization: Bearer) come in under that name and may read, chat (the default), or also control playback.", audience: .hosts) { args throws(ArgumentProblem) in
                let word = try args.requireWord("the bot's name")
                if let problem = DisplayName.validationProblem(String(word)) { throw ArgumentProblem(problem) }
                guard let botName = DisplayName(String(word)) else { throw ArgumentProblem("not a valid name") }
                var scope = TokenScope.chat
                if let text = args.word() {
                    guard let chosen = TokenScope(rawValue: text.lowercased()) else { throw ArgumentProblem("the scope is read, chat or control") }
                    scope = chosen
                }
                try args.requireEnd()
                return .token(botName, scope: scope)
            }
        case .public:
            return CommandSpec(name: name, arguments: "on|off", summary: "List the room on the server's landing page, with what is playing and how many are watching, or stop listing it.", audience: .hosts) { args throws(ArgumentProblem) in
                .listed(try toggle(&args))
            }
        case .tokens:
            return noArguments(name, .tokens, "List the room's bot tokens: number, name, scope, by whom.", .hosts)
        case .untoken:
            return CommandSpec(name: name, arguments: "<number>", summary: "Revoke a bot token, by its number in /tokens: its connections are closed.", audience: .hosts) { args throws(ArgumentProblem) in
                var word = try args.requireWord("number")
                try args.requireEnd()
                if word.first == "#" { word = word.dropFirst() }
                guard let number = ArgumentValues.wholeNumber(word) else { throw ArgumentProblem("a token's number, as /tokens lists it") }
                return .untoken(number)
            }
        case .me:
            return CommandSpec(name: name, arguments: "<text>", summary: "Say an action line in the chat (*<alice> waves).", audience: .anyone) { args throws(ArgumentProblem) in
                guard let text = shownRemainder(&args) else { throw ArgumentProblem("missing text") }
                guard text.count <= maximumTitleCharacters else {
                    throw ArgumentProblem("an action line has at most \(maximumTitleCharacters) characters")
                }
                return .me(text)
            }
        case .voice:
            return CommandSpec(name: name, arguments: "[join|leave|mute|unmute|on|off|hosts]", summary: "Talk while watching: with no word, who is in the room's voice and who speaks; join and leave it, mute or unmute yourself (the page does this with its voice buttons, and sends its call's offer with /voice offer [part] <base64>); hosts set who may join: on (everyone but bots), off, or hosts.", audience: .anyone) { args throws(ArgumentProblem) in
                try voice(&args)
            }
        }
    }

    private static func voice(_ args: inout ArgumentReader) throws(ArgumentProblem) -> SlashCommand {
        guard let word = args.word() else { return .voice(.list) }
        let command: VoiceCommand
        switch word.lowercased() {
        case "join": command = .join
        case "leave": command = .leave
        case "mute": command = .mute(true)
        case "unmute": command = .mute(false)
        case "offer":
            var word = try args.requireWord("the offer (a session description in base64)")
            let part = word.lowercased() == "part"
            if part { word = try args.requireWord("the offer's part (base64)") }
            guard word.count <= maximumVoiceOfferCharacters,
                  word.utf8.allSatisfy({ byte in
                      (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                          || byte == 0x2B || byte == 0x2F || byte == 0x3D
                  })
            else { throw ArgumentProblem("an offer is a session description in base64, at most \(maximumVoiceOfferCharacters) characters in all") }
            command = part ? .offerPart(String(word)) : .offer(String(word))
        default:
            guard let mode = VoiceMode(rawValue: word.lowercased()) else {
                throw ArgumentProblem("/voice takes join, leave, mute, unmute, or (hosts) on, off or hosts")
            }
            command = .mode(mode)
        }
        try args.requireEnd()
        return .voice(command)
    }

    private static func noArguments(_ name: CommandName, _ command: SlashCommand, _ summary: String, _ audience: CommandSpec.Audience) -> CommandSpec {
        CommandSpec(name: name, arguments: "", summary: summary, audience: audience) { args throws(ArgumentProblem) in
            try args.requireEnd()
            return command
        }
    }

    /// A link and the title (or label) after it. `playable`: the link is something
    /// to watch, so it must be a media file or a provider's video (`MediaSource`),
    /// not a page no player can play.
    private static func mediaItem(_ args: inout ArgumentReader, playable: Bool = false) throws(ArgumentProblem) -> (MediaURL, String?) {
        let word = try args.requireWord("url")
        if let problem = MediaURL.validationProblem(String(word)) { throw ArgumentProblem(problem) }
        guard let url = MediaURL(String(word)) else { throw ArgumentProblem("not a valid URL") }
        if playable, case .refused(let reason) = MediaSource.classify(url) { throw ArgumentProblem(reason) }
        guard let title = shownRemainder(&args) else { return (url, nil) }
        guard title.count <= maximumTitleCharacters else {
            throw ArgumentProblem("a title has at most \(maximumTitleCharacters) characters")
        }
        return (url, title)
    }

    /// `<hash> <bytes> <seconds> [title...]` of `/watch own`.
    private static func ownCopy(_ args: inout ArgumentReader) throws(ArgumentProblem) -> (OwnCopy, String?) {
        let hashWord = try args.requireWord("the file's hash (16 hex digits)")
        guard let hash = OwnCopy.parseHash(hashWord) else {
            throw ArgumentProblem("\"\(excerpt(hashWord))\" is not a file's hash: 16 hex digits, as OpenSubtitles computes it")
        }
        let sizeWord = try args.requireWord("the file's size in bytes")
        guard let size = ArgumentValues.wholeNumber(sizeWord), size > 0, size <= OwnCopy.maximumBytes else {
            throw ArgumentProblem("the size is the file's length in bytes, from 1 to \(OwnCopy.maximumBytes)")
        }
        let secondsWord = try args.requireWord("the file's length in seconds")
        guard let seconds = ArgumentValues.decimal(secondsWord, maximumWholeDigits: 10), seconds > 0,
              let copy = OwnCopy(hash: hash, size: size, duration: seconds) else {
            throw ArgumentProblem("the length is seconds, more than 0 and at most \(Int(maximumReportedSeconds))")
        }
        guard let title = shownRemainder(&args) else { return (copy, nil) }
        guard title.count <= maximumTitleCharacters else {
            throw ArgumentProblem("a title has at most \(maximumTitleCharacters) characters")
        }
        return (copy, title)
    }

    private static func timeArgument(_ word: Substring) throws(ArgumentProblem) -> TimeArgument {
        guard let time = ArgumentValues.time(word) else {
            throw ArgumentProblem("\"\(excerpt(word))\" is not a time (95, 95.5, 1:35, 1:01:35, +10, -10)")
        }
        return time
    }

    private static func reason(_ word: Substring) throws(ArgumentProblem) -> SuspensionReason {
        guard let reason = SuspensionReason(rawValue: String(word)) else {
            throw ArgumentProblem("a reason is 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        return reason
    }

    private static func toggle(_ args: inout ArgumentReader) throws(ArgumentProblem) -> Bool {
        let word = try args.requireWord("on or off")
        try args.requireEnd()
        guard let value = ArgumentValues.toggle(word) else { throw ArgumentProblem("expected on or off") }
        return value
    }

    private static func queueReference(_ args: inout ArgumentReader) throws(ArgumentProblem) -> QueueReference {
        let word = try args.requireWord("item")
        guard let item = QueueReference(word) else {
            throw ArgumentProblem("an item is its number as /queue lists it (1 is next) or its id (q7)")
        }
        return item
    }

    private static func sequenceNumber(_ args: inout ArgumentReader) throws(ArgumentProblem) -> Int64 {
        let seq = try sequenceWord(&args)
        try args.requireEnd()
        return seq
    }

    private static func sequenceWord(_ args: inout ArgumentReader) throws(ArgumentProblem) -> Int64 {
        let word = try args.requireWord("seq")
        guard let seq = ArgumentValues.wholeNumber(word) else {
            throw ArgumentProblem("seq must be a whole number (the seq of a state event)")
        }
        return seq
    }

    /// A member's name: in double quotes when it has spaces and more arguments
    /// follow (`/kick "Dana Scully" spam`); the rest of the line when nothing follows
    /// (`/op Dana Scully`). Normalized as names are (`DisplayName`).
    private static func memberName(_ args: inout ArgumentReader, more: Bool = false) throws(ArgumentProblem) -> String {
        let text: Substring
        if let quoted = try args.quoted() {
            text = quoted
            if !more { try args.requireEnd() }
        } else if more {
            text = try args.requireWord("name")
        } else {
            guard let rest = args.remainder() else { throw ArgumentProblem("missing name") }
            text = rest
        }
        let name = DisplayName.normalized(text)
        guard !name.isEmpty else { throw ArgumentProblem("missing name") }
        guard name.utf8.count <= DisplayName.maximumBytes else { throw ArgumentProblem("no member has so long a name") }
        return name
    }

    /// The rest of the line as others will read it (`ShownText.cleaned`), without
    /// spaces at its ends; nil when nothing visible is left.
    private static func shownRemainder(_ args: inout ArgumentReader) -> String? {
        guard let text = args.remainder() else { return nil }
        let shown = ShownText.cleaned(text)
        guard let first = shown.firstIndex(where: { !$0.isWhitespace }),
              let last = shown.lastIndex(where: { !$0.isWhitespace }) else { return nil }
        return String(shown[first...last])
    }

    /// The free text after a moderation command's arguments, if any.
    private static func reasonText(_ args: inout ArgumentReader) throws(ArgumentProblem) -> String? {
        guard let text = shownRemainder(&args) else { return nil }
        guard text.count <= maximumReasonCharacters else {
            throw ArgumentProblem("a reason has at most \(maximumReasonCharacters) characters")
        }
        return text
    }

    private static func policy(_ args: inout ArgumentReader) throws(ArgumentProblem) -> SlashCommand {
        var change = PolicyChange()
        while let key = args.word() {
            let value = try args.requireWord("a value after \"\(excerpt(key, 20))\"")
            switch key.lowercased() {
            case "control":
                guard let control = ControlPolicy(rawValue: value.lowercased()) else {
                    throw ArgumentProblem("control takes everyone or hosts")
                }
                change.control = control
            case "stall":
                guard let stall = StallPolicy(rawValue: value.lowercased()) else {
                    throw ArgumentProblem("stall takes continue or wait")
                }
                change.stall = stall
            case "wait":
                guard let seconds = ArgumentValues.decimal(value, maximumWholeDigits: 4), seconds <= maximumWaitSeconds else {
                    throw ArgumentProblem("wait takes seconds from 0 to \(Int(maximumWaitSeconds))")
                }
                change.wait = .milliseconds((seconds * 1000).rounded())
            default:
                throw ArgumentProblem("unknown policy \"\(excerpt(key, 20))\" (control, stall or wait)")
            }
        }
        return .policy(change)
    }
}
