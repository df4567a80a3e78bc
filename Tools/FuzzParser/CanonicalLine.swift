import SlashCommands

/// Writes an accepted command back as a line. Parsing that line must give the
/// command again: the parser loses nothing it accepted, and the command carries
/// nothing a line cannot say.
enum CanonicalLine {
    static func checkRoundTrip(_ command: SlashCommand, parser: LineParser, line: Substring) {
        // Near 10^16 the Double nearest a 16-digit client time can print with 17
        // digits, more than /time takes; the value itself is only echoed back.
        if case .time(let client) = command, client.magnitude >= 9e15 { return }
        let text = render(command)
        guard case .success(.command(let again)) = parser.parse(text) else {
            ParserProperties.fail(line, "the canonical line \(text.debugDescription) does not parse back: \(parser.parse(text))")
        }
        if hasFractionalValue(command) {
            // Decimals may come back one unit in the last place apart (1:30.1 is
            // summed in a different order than 90.1): the text must be stable.
            if render(again) != text { ParserProperties.fail(line, "\(text.debugDescription) came back as \(render(again).debugDescription)") }
        } else if again != command {
            ParserProperties.fail(line, "\(text.debugDescription) came back as \(again), not \(command)")
        }
    }

    static func render(_ command: SlashCommand) -> String {
        let name = "/" + command.name.rawValue
        switch command {
        case .help(let topic): return name + argument(topic?.word)
        case .nick(let displayName): return name + argument(displayName.text)
        case .watch(let url, let title), .queue(let url?, let title): return name + argument(url.text) + argument(title)
        case .queue(nil, _): return name
        case .watchOwn(let copy, let title):
            return name + " own" + argument(copy.hashText) + argument(String(copy.size)) + argument(decimal(copy.duration.seconds))
                + argument(title)
        case .have(let seq, let yes): return name + argument(String(seq)) + (yes ? " yes" : " no")
        case .subtitles(let url, let label): return name + argument(url?.text ?? "off") + argument(label)
        case .dequeue(let item): return name + argument(item.text)
        case .move(let item, let position): return name + argument(item.text) + argument(String(position))
        case .play(let now): return name + (now ? " now" : "")
        case .seek(let time): return name + argument(render(time))
        case .rate(let rate): return name + argument(decimal(rate.value))
        case .suspend(let reason): return name + argument(reason.rawValue)
        case .resume(let reason, let time):
            return name + argument(reason?.rawValue) + (time.map { " at " + render($0) } ?? "")
        case .catchup(let seconds): return name + argument(decimal(seconds))
        case .autoplay(let on), .player(let on), .listed(let on): return name + (on ? " on" : " off")
        case .ready(let seq, let lead): return name + argument(String(seq)) + (lead == 0 ? "" : " lead \(lead)")
        case .ended(let seq): return name + argument(String(seq))
        case .duration(let seq, .seconds(let seconds)): return name + argument(String(seq)) + argument(decimal(seconds))
        case .duration(let seq, .live(let edge)): return name + argument(String(seq)) + " live" + argument(decimal(edge.seconds))
        case .time(let client): return name + argument((client < 0 ? "-" : "") + decimal(client.magnitude))
        case .policy(let change):
            return name + argument(change.control.map { "control " + $0.rawValue })
                + argument(change.stall.map { "stall " + $0.rawValue })
                + argument(change.wait.map { "wait " + decimal(Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) })
        case .me(let text): return name + argument(text)
        case .op(let text), .deop(let text), .unban(let text), .mute(let text), .unmute(let text):
            return name + argument(text.hasPrefix("\"") ? quoted(text) : text)
        case .kick(let target, let reason): return name + argument(memberTarget(target)) + argument(reason)
        case .ban(let target, let minutes, let reason):
            return name + argument(memberTarget(target)) + argument(minutes.map(decimal)) + argument(reason)
        case .slow(let seconds): return name + argument(seconds.map(decimal) ?? "off")
        case .password(let password): return name + argument(password ?? "off")
        case .invite(let uses, let minutes): return name + argument(String(uses)) + argument(decimal(minutes))
        case .revoke(let number), .untoken(let number): return name + argument(String(number))
        case .token(let bot, let scope): return name + argument(bot.text) + argument(scope.rawValue)
        case .lock, .unlock, .invites, .tokens: return name
        case .join, .leave, .end, .pause, .next, .buffering, .who, .status, .bans: return name
        case .voice(.list): return name
        case .voice(.join): return name + " join"
        case .voice(.leave): return name + " leave"
        case .voice(.mute(let on)): return name + (on ? " mute" : " unmute")
        case .voice(.offer(let offer)): return name + " offer" + argument(offer)
        case .voice(.offerPart(let part)): return name + " offer part" + argument(part)
        case .voice(.mode(let mode)): return name + argument(mode.rawValue)
        }
    }

    /// A space and the argument; a tab instead when the argument begins with a
    /// combining mark, which would fuse with a space into one Character that is no
    /// longer a separator (a tab, as a control, never fuses).
    static func argument(_ text: String?) -> String {
        guard let text else { return "" }
        return (" " + text).first == " " ? " " + text : "\t" + text
    }

    /// A member's name followed by more arguments: in quotes when it has a space
    /// or itself starts with a quote (docs/protocol.md, "Moderation that sticks").
    static func memberTarget(_ name: String) -> String {
        name.contains(" ") || name.hasPrefix("\"") ? quoted(name) : name
    }

    static func quoted(_ name: String) -> String { "\"" + name + "\"" }

    static func render(_ time: TimeArgument) -> String {
        switch time {
        case .absolute(let media): decimal(media.seconds)
        case .relative(let delta): (delta < 0 ? "-" : "+") + decimal(delta.magnitude)
        }
    }

    static func decimal(_ value: Double) -> String {
        NumberText.decimal(value, places: 6)
    }

    /// Commands holding a Double that may not be a whole number.
    static func hasFractionalValue(_ command: SlashCommand) -> Bool {
        switch command {
        case .seek, .rate, .catchup, .time, .resume(_, at: _?), .duration, .watchOwn: true
        case .policy(let change): change.wait != nil
        default: false
        }
    }
}
