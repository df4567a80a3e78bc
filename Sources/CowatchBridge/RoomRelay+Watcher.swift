import CowatchCore
import CowatchClient
import CowatchTime

/// The watcher: the bot's own member, through which the room is heard in the channel.
extension RoomRelay {
    mutating func openWatcher() -> [Action] {
        watcher.attempt += 1
        watcher.phase = .connecting
        watcher.refusal = nil
        watcher.refusalCode = nil
        let identity = Identity(name: settings.botName, device: device("\u{0}watcher\u{0}\(settings.channel)"),
                                forwardedFor: nil, resume: watcher.resume, joinsSession: false, isWatcher: true)
        return [.open(.watcher, watcher.attempt, identity)]
    }

    mutating func watcherReceived(_ event: RoomEvent) -> [Action] {
        switch event {
        case .welcome(let welcome):
            let you = welcome.you.id.rawValue
            if let old = watcher.memberID, old != you { ownIDs.remove(old) }
            watcher.memberID = you
            remember(you)
            let resumed = watcher.resume != nil && watcher.resume == welcome.resume
            watcher.resume = welcome.resume
            watcher.phase = .open(welcomed: true)
            watcher.backoff.succeeded()
            var actions: [Action] = [.log(LogEntry(.info, resumed ? "back in the room" : "in the room",
                                                   ["room": settings.room, "name": welcome.you.name.text]))]
            if let ownerKey = welcome.ownerKey {
                // Nobody else holds the key of a room the bridge created: it is
                // kept for the operator, who can hand it on. The room is opened at
                // the bridge's start, not for one person from the channel, so
                // there is nobody on IRC it belongs to.
                actions.append(.keepOwnerKey(ownerKey))
            }
            return actions
        case .chat(let line):
            guard !ownIDs.contains(line.from.rawValue) else { return [] }
            return toChannel(line.me ? "* \(line.name) \(line.text)" : "<\(line.name)> \(line.text)", notice: false)
        case .notice(let notice):
            return toChannel(notice.cause == .watch ? "\(notice.text) · \(settings.link)" : notice.text, notice: true)
        case .state(let state):
            let activity = state.session?.activity
            nowPlaying = (activity?.title ?? activity?.url?.text).map { ($0, state.playback.status.rawValue) }
            return []
        case .error(let error):
            watcher.refusal = error.message
            watcher.refusalCode = error.code.rawValue
            return [.log(LogEntry(.warning, "the room refused the watcher",
                                  ["room": settings.room, "code": error.code.rawValue, "message": error.message]))]
        case .voice(let roster) where roster.change == .joined || roster.change == .left:
            // Who comes into voice and goes: speaking is told only when asked (/voice).
            guard let line = TextEventEncoding.voiceLine(roster, addressed: false) else { return [] }
            return toChannel(line.hasPrefix("* ") ? String(line.dropFirst(2)) : line, notice: true)
        case .participant, .participantLeft, .reply, .time, .catchup, .voice, .voiceTicket, .voiceAnswer:
            return []
        }
    }

    mutating func watcherClosed(_ info: CloseInfo, now: MonotonicInstant) -> [Action] {
        let why = info.code.map { ClientLife.describe(code: $0, reason: info.reason) } ?? "the connection dropped" + (info.reason.isEmpty ? "" : " (\(info.reason))")
        let wasWelcomed = watcher.phase == .open(welcomed: true)
        if ClientLife.comesBack(after: info.code) {
            watcher.phase = .away
            let delay = watcher.backoff.next()
            let level: LogEntry.Level = wasWelcomed ? .warning : .info
            return [.log(LogEntry(level, "room connection lost", ["room": settings.room, "why": why, "retry_in": Self.seconds(delay)])),
                    .schedule(.reconnect(.watcher, watcher.attempt), after: delay)]
        }
        let words = watcher.refusal ?? why
        watcher.phase = .keptOut(until: now + settings.keptOutRetry, why: words)
        var actions: [Action] = [.log(LogEntry(.error, "the room keeps the bridge out", ["room": settings.room, "why": words,
                                                                                       "retry_in": Self.seconds(settings.keptOutRetry)])),
                                 .schedule(.reconnect(.watcher, watcher.attempt), after: settings.keptOutRetry)]
        actions += toChannel("The room \(settings.room) keeps the bridge out (\(words)); trying again in \(Self.seconds(settings.keptOutRetry)).",
                             notice: true)
        return actions
    }

    /// Says a line from the room in the channel, or counts it as missed while
    /// the bot is out of the channel.
    mutating func toChannel(_ text: String, notice: Bool) -> [Action] {
        guard channelJoined else {
            missed += 1
            return [.log(LogEntry(.debug, "a line from the room not relayed: the bridge is out of the channel", ["room": settings.room]))]
        }
        return [.network(notice ? .notice(channel: settings.channel, text: text) : .say(channel: settings.channel, text: text))]
    }

    // MARK: - The network

    mutating func network(_ event: NetworkEvent, now: MonotonicInstant) -> [Action] {
        switch event {
        case .joined(let channel):
            guard channel == settings.channel else { return [] }
            channelJoined = true
            var actions: [Action] = []
            if missed > 0 {
                actions += toChannel("(\(missed) line\(missed == 1 ? "" : "s") from the room not relayed while the bridge was away)", notice: true)
                missed = 0
            }
            if settings.announce, !announced {
                announced = true
                let playing = nowPlaying.map { " · \($0.status) \"\($0.title)\"" } ?? ""
                actions += toChannel("Cowatch room \(settings.room): \(settings.link)\(playing) · commands start with \(settings.prefix), \(settings.prefix)help lists them",
                                     notice: true)
            }
            return actions
        case .parted(let channel, _):
            guard channel == settings.channel else { return [] }
            channelJoined = false
            return []
        case .present(let channel, let present):
            guard channel == settings.channel else { return [] }
            // People who left while the bot was away from the channel.
            let here = Set(present.map(\.id))
            var actions: [Action] = []
            for key in speakers.keys.sorted() where !here.contains(key) { actions += speakerGone(key, now: now) }
            return actions
        case .message(let channel, let from, let text, let action):
            guard channel == settings.channel else { return [] }
            return message(from: from, text: text, action: action, now: now)
        case .left(let channel, let speaker):
            guard channel == settings.channel else { return [] }
            return speakerGone(speaker.id, now: now)
        case .quit(let speaker):
            return speakerGone(speaker.id, now: now)
        case .renamed(let from, let to):
            return renamed(from: from, to: to, now: now)
        case .direct(let from, _):
            return [.network(.tell(speaker: from, text: "I relay \(settings.channel) and the Cowatch room \(settings.room) (\(settings.link)); speak in the channel, where commands start with \(settings.prefix)"))]
        }
    }
}
