import CowatchClient
import CowatchTime

/// What the server says: replies, numerics, and the lines of people and channels.
extension IRCSession {
    // swiftlint:disable:next cyclomatic_complexity function_body_length
    mutating func received(_ message: IRCMessage, now: MonotonicInstant) -> [Action] {
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
            actions.append(.schedule(.keepalive(attempt), after: settings.keepaliveCheck))
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

    private mutating func privateOrChannelMessage(_ message: IRCMessage, now: MonotonicInstant) -> [Action] {
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
}
