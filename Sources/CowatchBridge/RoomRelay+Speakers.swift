import CowatchCore
import CowatchClient
import CowatchTime
import SlashCommands

/// People from the channel, each a member of the room of their own.
extension RoomRelay {
    /// Error codes with which the room refuses a connection (docs/protocol.md):
    /// the close that follows is final, and the person is told these words.
    static let refusalCodes: Set<String> = ["banned", "locked", "password-required", "wrong-password",
                                            "too-many-attempts", "bad-token", "room-full"]
    /// Close codes that keep a person out: removed by a host (4001), refused by
    /// a ban, a lock, a password or a bad token (4003 to 4006).
    static let keptOutCodes: Set<UInt16> = [4001, 4003, 4004, 4005, 4006]

    mutating func message(from person: NetworkSpeaker, text: String, action: Bool, now: MonotonicInstant) -> [Action] {
        switch commands.read(text, action: action) {
        case .nothing:
            return []
        case .help:
            return [.network(.notice(channel: settings.channel, text: "\(person.name): \(commands.helpLine())"))]
        case .refused(let words):
            // A notice, as every answer of the bridge's is (docs: IRC's NOTICE,
            // Matrix's m.notice), which bots never answer.
            return [.network(.notice(channel: settings.channel, text: "\(person.name): \(words)"))]
        case .line(let line):
            return relay(line, from: person, now: now)
        }
    }

    private mutating func relay(_ line: String, from person: NetworkSpeaker, now: MonotonicInstant) -> [Action] {
        let key = person.id
        var speaker = speakers[key] ?? newSpeaker(person, now: now)
        speaker.person = person
        speaker.lastActive = now
        speaker.leaving = false
        if case .keptOut(let until, let why) = speaker.link.phase {
            if now < until {
                speakers[key] = speaker
                return tell(key, about: "kept-out", "Your lines are not relayed to the room \(settings.room): \(why)", now: now)
            }
            speaker.link.phase = .idle
        }
        var actions: [Action] = []
        let accepted = speaker.lines.enqueue(line)
        speakers[key] = speaker
        if !accepted {
            actions += tell(key, about: "queue-full", "Too many lines at once: more than \(settings.speakerPacing.maximumQueued) waiting for the room; the rest were not relayed.", now: now)
        }
        if speaker.link.phase == .idle {
            let holding = speakers.values.filter { $0.link.phase.holdsPlace }.count
            guard holding < settings.maximumSpeakers else {
                speakers[key]?.lines.clear()
                return actions + tell(key, about: "full", "The bridge already brings \(settings.maximumSpeakers) people into the room \(settings.room), its most at once; your line was not relayed. Try again later.", now: now)
            }
            actions += openSpeaker(key)
        }
        return actions + pump(key, now: now)
    }

    private mutating func newSpeaker(_ person: NetworkSpeaker, now: MonotonicInstant) -> Speaker {
        let serial = nextSerial
        nextSerial += 1
        keys[serial] = person.id
        return Speaker(serial: serial, person: person,
                       link: Link(backoff: Backoff(settings: settings.reconnect, seed: seed ^ Backoff.seed(person.id))),
                       lines: OutboundPacer(settings: settings.speakerPacing), lastActive: now)
    }

    mutating func openSpeaker(_ key: String) -> [Action] {
        guard var speaker = speakers[key] else { return [] }
        speaker.link.attempt += 1
        speaker.link.phase = .connecting
        speaker.link.refusal = nil
        speaker.link.refusalCode = nil
        speakers[key] = speaker
        let identity = Identity(name: speaker.person.name, device: device(key), forwardedFor: forwardedAddress(key),
                                resume: speaker.link.resume, joinsSession: true, isWatcher: false)
        return [.open(.speaker(speaker.serial), speaker.link.attempt, identity)]
    }

    /// Sends what may go now, in order, once the room has welcomed the person
    /// (so that their member id is known before the room echoes their first line).
    mutating func pump(_ key: String, now: MonotonicInstant) -> [Action] {
        guard var speaker = speakers[key], speaker.link.phase == .open(welcomed: true) else { return [] }
        var actions = speaker.lines.release(now: now).map { Action.send(.speaker(speaker.serial), $0) }
        if speaker.lines.isEmpty, speaker.leaving {
            speaker.link.phase = .closing
            actions.append(.close(.speaker(speaker.serial)))
        } else if !speaker.paceArmed, let delay = speaker.lines.delayUntilNext(now: now) {
            speaker.paceArmed = true
            actions.append(.schedule(.pace(speaker.serial), after: max(.milliseconds(1), delay)))
        }
        speakers[key] = speaker
        return actions
    }

    mutating func speakerReceived(_ key: String, _ event: RoomEvent, now: MonotonicInstant) -> [Action] {
        guard let person = speakers[key]?.person else { return [] }
        switch event {
        case .welcome(let welcome):
            let name = welcome.you.name.text
            speakers[key]?.link.memberID = welcome.you.id.rawValue
            remember(welcome.you.id.rawValue)
            speakers[key]?.link.resume = welcome.resume
            speakers[key]?.link.phase = .open(welcomed: true)
            speakers[key]?.link.backoff.succeeded()
            var actions: [Action] = []
            if name.lowercased() != DisplayName.normalized(person.name).lowercased() {
                actions += tell(key, about: "name", "In the room \(settings.room) you are \(name) (\(person.name) is taken there, or is not a name the room accepts).", now: now)
            }
            return actions + pump(key, now: now)
        case .error(let error):
            let code = error.code.rawValue
            speakers[key]?.link.refusal = error.message
            speakers[key]?.link.refusalCode = code
            // Told when the close that follows arrives.
            guard !Self.refusalCodes.contains(code) else { return [] }
            let words = commands.localized(error.message)
            if error.command != nil || error.code == .unknownCommand || error.code == .badArguments {
                return [.network(.notice(channel: settings.channel, text: "\(person.name): \(words)"))]
            }
            return [.network(.tell(speaker: person, text: words))]
        case .reply(let reply):
            // The words a terminal shows, without the `= ` before each line: in the
            // channel they are addressed to the person who asked instead.
            var lines = TextEventEncoding.lines(.reply(reply)).filter { !$0.isEmpty }.map { line in
                commands.localized(line.hasPrefix("= ") ? String(line.dropFirst(2)) : line)
            }
            if lines.count > settings.maximumReplyLines {
                let left = lines.count - max(0, settings.maximumReplyLines - 1)
                lines = Array(lines.prefix(max(0, settings.maximumReplyLines - 1))) + ["(\(left) more lines: see \(settings.link))"]
            }
            // In the channel, where it was asked: a private notice is shown by
            // many clients (irssi among them) in another window than the channel.
            // As NOTICE, which bots never answer, within the reply-lines cut and
            // the IRC pace every line of the bridge keeps.
            if let first = lines.first { lines[0] = "\(person.name): \(first)" }
            return lines.map { .network(.notice(channel: settings.channel, text: $0)) }
        case .notice(let notice) where notice.cause == .unchecked:
            // To this person alone (their link shared without a check): room-wide
            // notices come through the watcher instead.
            return [.network(.tell(speaker: person, text: commands.localized(notice.text)))]
        case .voice(let roster) where roster.change == .list:
            // `/voice` asked from the channel: who is in voice and who speaks,
            // answered where it was asked, as a reply is.
            guard let line = TextEventEncoding.voiceLine(roster, addressed: true) else { return [] }
            let words = commands.localized(line.hasPrefix("* ") ? String(line.dropFirst(2)) : line)
            return [.network(.notice(channel: settings.channel, text: "\(person.name): \(words)"))]
        // A bridged person has no microphone here: a ticket or an answer has
        // nothing to go to.
        case .chat, .notice, .state, .participant, .participantLeft, .time, .catchup, .voice, .voiceTicket, .voiceAnswer:
            return []
        }
    }

    mutating func speakerClosed(_ key: String, _ info: CloseInfo, now: MonotonicInstant) -> [Action] {
        guard var speaker = speakers[key] else { return [] }
        speaker.link.memberID = nil
        speaker.paceArmed = false
        if speaker.link.phase == .closing {
            speaker.link.phase = .idle
            speaker.closedAt = now
            speakers[key] = speaker
            // Lines that arrived while the connection was closing.
            return speaker.lines.isEmpty || speaker.leaving ? [] : openSpeaker(key)
        }
        let why = info.code.map { ClientLife.describe(code: $0, reason: info.reason) }
            ?? "the connection dropped" + (info.reason.isEmpty ? "" : " (\(info.reason))")
        let refusedBy = speaker.link.refusalCode.flatMap { Self.refusalCodes.contains($0) ? $0 : nil }
        if refusedBy != nil || info.code.map(Self.keptOutCodes.contains) == true {
            let removed = info.code == 4001
            let words = removed ? (info.reason.isEmpty ? why : info.reason) : (speaker.link.refusal ?? why)
            // A full room may have room again soon; a kick or a ban is for its cooldown.
            let retry = refusedBy == "room-full" ? min(settings.keptOutRetry, settings.tellInterval) : settings.keptOutRetry
            speaker.link.phase = .keptOut(until: now + retry, why: words)
            let lost = speaker.lines.clear()
            speaker.leaving = false
            speakers[key] = speaker
            let text = removed ? "You were removed from the room \(settings.room): \(words). Your lines are not relayed there for now."
                : "The room \(settings.room) does not let you in: \(words)"
            return [.log(LogEntry(.info, removed ? "a person was removed from the room" : "the room refused a person",
                                  ["room": settings.room, "nick": speaker.person.name, "why": words, "lines_lost": "\(lost)"]))]
                + tell(key, about: "removed", text, now: now, always: true)
        }
        if ClientLife.comesBack(after: info.code) {
            if speaker.leaving {
                speaker.link.phase = .idle
                speaker.closedAt = now
                speakers[key] = speaker
                return []
            }
            speaker.link.phase = .away
            let delay = speaker.link.backoff.next()
            speakers[key] = speaker
            return [.log(LogEntry(.info, "a person's room connection was lost", ["room": settings.room, "nick": speaker.person.name,
                                                                                "why": why, "retry_in": Self.seconds(delay)])),
                    .schedule(.reconnect(.speaker(speaker.serial), speaker.link.attempt), after: delay)]
        }
        // A normal close by the server, or the same member taken over elsewhere:
        // the next line opens a new connection.
        speaker.link.phase = .idle
        speaker.closedAt = now
        if info.code == 4002 { speaker.link.resume = nil }
        speakers[key] = speaker
        return speaker.lines.isEmpty || speaker.leaving ? [] : openSpeaker(key)
    }

    /// The person left the channel or the network: their room connection closes
    /// once what they said has been sent. Their resume token is kept for the
    /// room's resume grace, so that coming back soon is coming back as
    /// themselves; a refusal is remembered.
    mutating func speakerGone(_ key: String, now: MonotonicInstant) -> [Action] {
        guard var speaker = speakers[key] else { return [] }
        switch speaker.link.phase {
        case .connecting, .open:
            speaker.leaving = true
            speakers[key] = speaker
            guard speaker.lines.isEmpty else { return [] }
            speakers[key]?.link.phase = .closing
            return [.close(.speaker(speaker.serial))]
        case .closing:
            speakers[key]?.leaving = true
            return []
        case .keptOut:
            speakers[key]?.lines.clear()
            return []
        case .away:
            speakers[key]?.link.phase = .idle
            speakers[key]?.closedAt = now
            speakers[key]?.lines.clear()
            return []
        case .idle:
            speakers[key]?.lines.clear()
            return []
        }
    }

    mutating func renamed(from: NetworkSpeaker, to: NetworkSpeaker, now: MonotonicInstant) -> [Action] {
        guard var speaker = speakers.removeValue(forKey: from.id) else { return [] }
        var actions: [Action] = []
        if let displaced = speakers[to.id], displaced.serial != speaker.serial {
            if displaced.link.phase.hasConnection { actions.append(.close(.speaker(displaced.serial))) }
            keys[displaced.serial] = nil
        }
        speaker.person = to
        keys[speaker.serial] = to.id
        // The person's room name follows their nick; a refusal follows them too.
        if speaker.link.phase.hasConnection, DisplayName(to.name) != nil {
            speaker.lines.enqueue("/nick \(to.name)")
        }
        speakers[to.id] = speaker
        return actions + pump(to.id, now: now)
    }

    private mutating func forget(_ key: String) {
        guard let speaker = speakers.removeValue(forKey: key) else { return }
        keys[speaker.serial] = nil
    }

    /// Tells the person something unasked, at most once per `tellInterval` per
    /// topic (unless `always`), so that a busy person is not flooded with notices.
    mutating func tell(_ key: String, about topic: String, _ text: String, now: MonotonicInstant, always: Bool = false) -> [Action] {
        guard let speaker = speakers[key] else { return [] }
        if !always, let last = speaker.told[topic], now - last < settings.tellInterval { return [] }
        speakers[key]?.told[topic] = now
        return [.network(.tell(speaker: speaker.person, text: text))]
    }

    mutating func housekeeping(now: MonotonicInstant) -> [Action] {
        var actions: [Action] = []
        for key in speakers.keys.sorted() {
            guard let speaker = speakers[key] else { continue }
            switch speaker.link.phase {
            case .open(welcomed: true) where speaker.lines.isEmpty && now - speaker.lastActive >= settings.speakerIdle:
                speakers[key]?.leaving = true
                speakers[key]?.link.phase = .closing
                actions.append(.close(.speaker(speaker.serial)))
                actions.append(.log(LogEntry(.debug, "a quiet person's room connection closed", ["room": settings.room, "nick": speaker.person.name])))
            case .idle where speaker.lines.isEmpty && now - max(speaker.closedAt ?? speaker.lastActive, speaker.lastActive) >= settings.resumeGrace:
                forget(key)
            case .keptOut(let until, _) where now >= until && speaker.lines.isEmpty:
                forget(key)
            default:
                break
            }
        }
        return actions
    }
}
