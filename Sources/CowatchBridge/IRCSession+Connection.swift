import CowatchClient
import CowatchTime

/// The connection's life: connecting, losing it, the timers, the keepalive.
extension IRCSession {
    mutating func connect() -> [Action] {
        attempt += 1
        phase = .connecting
        joined = []
        names = [:]
        paceArmed = false
        pingSentAt = nil
        relayPrefixBytes = nil
        return [.connect(attempt)]
    }

    mutating func lost(_ reason: String) -> [Action] {
        var actions: [Action] = joined.sorted().compactMap { key in
            channelsByKey[key].map { .deliver(.parted(channel: $0.name, reason: "the IRC connection was lost")) }
        }
        joined = []
        let waiting = pacer.clear()
        droppedByTarget = [:]
        phase = .away
        let delay = backoff.next()
        var metadata = ["reason": reason, "retry_in": Self.seconds(delay)]
        if waiting > 0 { metadata["lines_lost"] = "\(waiting)" }
        actions.append(.log(LogEntry(.warning, "IRC connection lost", metadata)))
        actions.append(.schedule(.reconnect(attempt), after: delay))
        return actions
    }

    mutating func fired(_ timer: Timer, now: MonotonicInstant) -> [Action] {
        switch timer {
        case .reconnect(let number):
            guard number == attempt, phase == .away else { return [] }
            return connect()
        case .registration(let number):
            guard number == attempt, phase == .registering else { return [] }
            return [.log(LogEntry(.warning, "the IRC server did not complete registration",
                                  ["timeout": Self.seconds(settings.registrationTimeout)])),
                    .disconnect(attempt)]
        case .pace(let number):
            guard number == attempt, phase == .registered else { return [] }
            paceArmed = false
            return pump(now: now)
        case .keepalive(let number):
            guard number == attempt, phase == .registered else { return [] }
            return keepalive(now: now)
        case .rejoin(let number, let key):
            guard number == attempt, phase == .registered, !joined.contains(key), let channel = channelsByKey[key] else { return [] }
            return join(channel)
        case .regainNick(let number):
            guard number == attempt, phase == .registered, fold(nick) != fold(settings.nick) else { return [] }
            return write(IRCMessage(command: "NICK", [settings.nick]))
                + [.schedule(.regainNick(attempt), after: settings.regainNickInterval)]
        }
    }

    private mutating func keepalive(now: MonotonicInstant) -> [Action] {
        let check = Action.schedule(.keepalive(attempt), after: settings.keepaliveCheck)
        if let sent = pingSentAt {
            guard now - sent >= settings.keepaliveTimeout else { return [check] }
            return [.log(LogEntry(.warning, "the IRC server stopped answering", ["silent_for": Self.seconds(now - lastReceived)])),
                    .disconnect(attempt)]
        }
        guard now - lastReceived >= settings.keepaliveInterval else { return [check] }
        pingSentAt = now
        return write(IRCMessage(command: "PING", ["cowatch"])) + [check]
    }
}
