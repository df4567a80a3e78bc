import SlashCommands

/// The promise the parser makes to the core: every value in an accepted command
/// is finite, within its bounds and valid by its own type's rules.
enum ValueBounds {
    /// Nil when every value is within bounds; otherwise what is not.
    static func problem(_ command: SlashCommand) -> String? {
        switch command {
        case .seek(let time), .resume(_, at: let time?):
            return problem(time)
        case .rate(let rate):
            return PlaybackRate(rate.value) == rate ? nil : "rate \(rate.value) out of bounds"
        case .catchup(let seconds):
            return seconds.isFinite && seconds > 0 && seconds <= CommandTable.maximumCatchupSeconds
                ? nil : "catch-up of \(seconds) s"
        case .time(let client):
            return client.isFinite ? nil : "client time \(client)"
        case .policy(let change):
            guard let wait = change.wait else { return nil }
            return wait >= .zero && wait <= .seconds(CommandTable.maximumWaitSeconds) ? nil : "wait of \(wait)"
        case .nick(let name):
            return DisplayName(name.text) == name ? nil : "name \(name.text.debugDescription) does not validate"
        case .watch(let url, let title), .queue(let url?, let title):
            if MediaURL(url.text) != url { return "URL \(url.text.debugDescription) does not validate" }
            if case .refused(let reason) = MediaSource.classify(url) {
                return "URL \(url.text.debugDescription) is one no player plays (\(reason))"
            }
            if let title, title.isEmpty || title.count > CommandTable.maximumTitleCharacters {
                return "title of \(title.count) characters"
            }
            return nil
        case .suspend(let reason), .resume(let reason?, at: nil):
            return SuspensionReason(rawValue: reason.rawValue) == reason ? nil : "reason \(reason.rawValue) does not validate"
        case .ready(let seq, let lead):
            if seq < 0 { return "seq \(seq)" }
            return (0...CommandTable.maximumReadyLead).contains(lead) ? nil : "lead \(lead)"
        case .ended(let seq):
            return seq >= 0 ? nil : "seq \(seq)"
        case .watchOwn(let copy, let title):
            if OwnCopy(hash: copy.hash, size: copy.size, duration: copy.duration.seconds) != copy { return "own copy \(copy) does not validate" }
            if let title, title.isEmpty || title.count > CommandTable.maximumTitleCharacters {
                return "title of \(title.count) characters"
            }
            return nil
        case .have(let seq, _):
            return seq >= 0 ? nil : "seq \(seq)"
        case .duration(let seq, let length):
            if seq < 0 { return "seq \(seq)" }
            switch length {
            case .seconds(let seconds):
                return seconds.isFinite && seconds > 0 && seconds <= CommandTable.maximumReportedSeconds ? nil : "duration of \(seconds) s"
            case .live(let edge):
                return edge.seconds <= CommandTable.maximumReportedSeconds ? nil : "live edge at \(edge.seconds) s"
            }
        case .op(let name), .deop(let name), .unban(let name), .mute(let name), .unmute(let name):
            return !name.isEmpty && name.utf8.count <= DisplayName.maximumBytes ? nil : "member name of \(name.utf8.count) bytes"
        case .kick(let name, let reason), .ban(let name, _, let reason):
            if name.isEmpty || name.utf8.count > DisplayName.maximumBytes { return "member name of \(name.utf8.count) bytes" }
            if case .ban(_, let minutes?, _) = command, !(minutes > 0 && minutes <= CommandTable.maximumBanMinutes) {
                return "ban of \(minutes) minutes"
            }
            if let reason, reason.isEmpty || reason.count > CommandTable.maximumReasonCharacters {
                return "reason of \(reason.count) characters"
            }
            return nil
        case .password(let password?):
            return !password.isEmpty && password.count <= CommandTable.maximumPasswordCharacters
                && !password.contains(" ") && password.lowercased() != "off" ? nil : "password \(password.debugDescription)"
        case .invite(let uses, let minutes):
            return (1...1000).contains(uses) && minutes > 0 && minutes <= 43_200 ? nil : "invite of \(uses) uses, \(minutes) min"
        case .revoke(let number), .untoken(let number):
            return number >= 0 ? nil : "number \(number)"
        case .token(let bot, _):
            return DisplayName(bot.text) == bot ? nil : "bot name \(bot.text.debugDescription) does not validate"
        case .slow(let seconds?):
            return seconds > 0 && seconds <= 3600 ? nil : "slow mode of \(seconds) s"
        case .me(let text):
            return !text.isEmpty && text.count <= CommandTable.maximumTitleCharacters ? nil : "action of \(text.count) characters"
        default:
            return nil
        }
    }

    static func problem(_ time: TimeArgument) -> String? {
        switch time {
        case .absolute(let media):
            let seconds = media.seconds
            return seconds.isFinite && seconds >= 0 && seconds <= ArgumentValues.maximumTimeSeconds ? nil : "time \(seconds)"
        case .relative(let delta):
            return delta.isFinite && delta.magnitude <= ArgumentValues.maximumTimeSeconds ? nil : "offset \(delta)"
        }
    }
}
