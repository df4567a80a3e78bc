/// Nicks: the next one to try when refused, the configured one asked for again;
/// and the JOIN of a channel.
extension IRCSession {
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

    mutating func regainNow() -> [Action] {
        guard phase == .registered, fold(nick) != fold(settings.nick) else { return [] }
        return write(IRCMessage(command: "NICK", [settings.nick]))
    }

    func join(_ channel: Channel) -> [Action] {
        write(IRCMessage(command: "JOIN", channel.key.map { [channel.name, $0] } ?? [channel.name]))
    }
}
