import CowatchTime
import SlashCommands

extension Room {
    mutating func chat(_ text: String, me: Bool, from id: MemberID, now: ServerInstant) {
        guard allowedBySlowMode(id, now: now), let member = members[id] else { return }
        let line = ChatLine(from: id, name: member.name, text: text, at: now, me: me)
        actions.append(.broadcast(.chat(line)))
        actions.append(.persistChat(line))
        remember(line)
    }

    mutating func remember(_ line: ChatLine) {
        guard configuration.chatHistory > 0 else { return }
        if recentChat.count >= configuration.chatHistory {
            let dropped = recentChat.count - configuration.chatHistory + 1
            recentChatBytes -= recentChat.prefix(dropped).reduce(0) { $0 + $1.text.utf8.count }
            recentChat.removeFirst(dropped)
        }
        recentChat.append(line)
        recentChatBytes += line.text.utf8.count
        forgetChat(keepingBytes: configuration.chatHistoryBytes)
    }

    /// Drops the oldest lines kept for newcomers until the rest take at most
    /// `bytes` of text (the newest line stays whatever its size); returns the
    /// bytes dropped. The server calls it to keep all rooms' chat together
    /// within its total (`chat-total-bytes`).
    @discardableResult
    public mutating func forgetChat(keepingBytes bytes: Int) -> Int {
        var dropped = 0
        var count = 0
        while recentChatBytes - dropped > bytes, count < recentChat.count - 1 {
            dropped += recentChat[count].text.utf8.count
            count += 1
        }
        if count > 0 {
            recentChat.removeFirst(count)
            recentChatBytes -= dropped
        }
        return dropped
    }

    mutating func help(_ topic: HelpTopic?, from id: MemberID) {
        let lines: [String] = switch topic {
        case nil: CommandReference.helpLines()
        case .players: CommandReference.playerHelpLines()
        case .command(let name): CommandReference.helpLines(for: name)
        }
        actions.append(.send(.reply(.help(lines: lines)), to: id))
    }

    /// `/policy` alone shows the policy to anyone; changing it is for hosts.
    mutating func policy(_ change: PolicyChange, from id: MemberID) {
        guard !change.isEmpty else {
            actions.append(.send(.reply(.policy(state.policy)), to: id))
            return
        }
        guard requireHost(id, .policy) else { return }
        var policy = state.policy
        if let control = change.control { policy.control = control }
        if let stall = change.stall { policy.stall = stall }
        if let wait = change.wait { policy.wait = ServerInterval(wait) }
        guard policy != state.policy else {
            tell(id, "the policy is already so")
            return
        }
        state.policy = policy
        publish(.policy, by: id)
        notify("\(displayName(id)) set the policy: control \(policy.control.rawValue), stall \(policy.stall.rawValue), wait \(NumberText.decimal(policy.wait.seconds, places: 1)) s",
               cause: .policy, by: id)
    }
}
