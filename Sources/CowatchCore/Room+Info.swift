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
            recentChat.removeFirst(recentChat.count - configuration.chatHistory + 1)
        }
        recentChat.append(line)
    }

    mutating func help(_ topic: CommandName?, from id: MemberID) {
        let lines = topic.map(CommandReference.helpLines(for:)) ?? CommandReference.helpLines()
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
        if let seconds = change.waitSeconds { policy.wait = ServerInterval(seconds: seconds) }
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
