import CowatchTime

/// What the bridge says: cut to fit a line, paced, and told when a full queue
/// dropped some; and the lines that go out at once.
extension IRCSession {
    struct Outbound: Sendable, Hashable {
        var target: String
        var line: String
    }

    mutating func perform(_ command: NetworkCommand, now: MonotonicInstant) -> [Action] {
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

    mutating func enqueue(target: String, _ message: IRCMessage, now: MonotonicInstant, pump pumping: Bool = true) -> [Action] {
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

    mutating func pump(now: MonotonicInstant) -> [Action] {
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
            actions.append(.schedule(.pace(attempt), after: max(.milliseconds(1), delay)))
        }
        return actions
    }

    /// A line that goes out at once, past the pacer: registration, PONG, JOIN, NICK, QUIT.
    func write(_ message: IRCMessage) -> [Action] {
        switch message.line(maximumBytes: settings.maximumLineBytes) {
        case .success(let line): return [.write(attempt, line)]
        case .failure(let problem):
            return [.log(LogEntry(.error, "a line for IRC could not be written", ["command": message.command, "problem": "\(problem)"]))]
        }
    }
}
