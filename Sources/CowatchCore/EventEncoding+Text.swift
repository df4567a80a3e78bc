import CowatchTime
import SlashCommands

/// The `cowatch.v1.text` encoding: each event as lines written for a person
/// reading a chat window. The gateway sends each line as its own frame.
///
/// Written for people: positions are the position at `now` (the instant the event
/// is sent), reasons are said in words (the JSON keeps the codes), and a change
/// that comes with a notice saying who did it is not said twice.
public enum TextEventEncoding {
    /// `awaited`: how many players a waiting room still waits for
    /// (`Room.playersAwaited`), said in its state line when known. `addressed`: the
    /// event goes to one member alone (the state on arrival, or after falling
    /// behind), which no notice accompanies, so nothing in it is left unsaid.
    public static func lines(_ event: RoomEvent, now: ServerInstant? = nil, awaited: Int? = nil,
                             addressed: Bool = false) -> [String] {
        switch event {
        case .welcome(let welcome):
            let names = welcome.participants.map(\.name.text).joined(separator: ", ")
            return [
                "* welcome to \(welcome.room), \(welcome.you.name) (\(roleWord(welcome.you))); \(welcome.participants.count) here: \(names)",
                "* to come back as yourself: cowatch connect --resume \(welcome.resume) (or ?resume=\(welcome.resume) in the room's address)",
            ] + (welcome.ownerKey.map { key in
                ["* you created this room: your owner key is \(key) (shown once: keep it)",
                 "* to come back as its owner from any device: cowatch connect <this room's address> --owner \(key) (or ?owner=\(key) in the room's address)"]
            } ?? []) + welcome.chat.suffix(recentChatLines).flatMap { lines(.chat($0)) }
        case .state(let state):
            // A change sent to everyone for these causes comes with a notice that
            // says who made it, in words.
            switch state.playback.cause {
            case .policy, .lock, .password, .queue:
                return addressed ? [stateLine(state, now: now, awaited: awaited)] : []
            default: return [stateLine(state, now: now, awaited: awaited)]
            }
        case .participant(let member, let change):
            return participantLine(member, change).map { [$0] } ?? []
        case .participantLeft(_, let name, let reason):
            switch reason {
            case .left: return ["- \(name) left"]
            case .kicked: return ["- \(name) was kicked"]
            case .banned: return ["- \(name) was banned"]
            }
        case .chat(let line):
            // `*<alice> waves`: a notice's `* ` can never be followed by `<`, so no
            // action line reads as something the server said.
            return [line.me ? "*<\(line.name)> \(line.text)" : "<\(line.name)> \(line.text)"]
        case .notice(let notice):
            return ["* \(notice.text)"]
        case .reply(let reply):
            return replyLines(reply, awaited: awaited)
        case .error(let error):
            return ["! \(error.message)"]
        case .time(let client, let server):
            return ["= time client \(NumberText.decimal(client, places: 6)) server \(server.milliseconds)"]
        case .catchup(let catchup):
            let length = now.map { " for " + Room.duration(catchup.until.interval(since: $0)) } ?? ""
            return ["* catching up: replaying from \(catchup.from) at \(catchup.rate)x\(length), then back with the group"]
        case .voice(let roster):
            return voiceLine(roster, addressed: addressed).map { [$0] } ?? []
        case .voiceTicket(let ticket):
            let servers = ticket.iceServers.flatMap(\.urls).joined(separator: " ")
            return ["= voice ticket: ICE servers \(servers.isEmpty ? "none" : servers); send /voice offer <session description in base64>"]
        case .voiceAnswer(let sdp):
            return ["= voice answer: \(sdp.utf8.count) bytes of session description (a page plays it)"]
        }
    }

    /// The roster in words. Speaking and its end are left out but when asked
    /// (`/voice`): a line each time someone draws breath would drown the chat; a
    /// mode change comes with a notice that says who made it.
    public static func voiceLine(_ roster: VoiceRoster, addressed: Bool) -> String? {
        let name = roster.name?.text
        switch roster.change {
        case .list:
            let who = roster.seats.map { seat in
                seat.name.text + (seat.speaking ? " (speaking)" : seat.muted ? " (muted)" : "")
            }
            let mode = switch roster.mode {
            case .on: "open to everyone"
            case .off: "off"
            case .hosts: "for hosts only"
            }
            return "* voice is \(mode); " + (who.isEmpty ? "nobody is in it" : "in it: " + who.joined(separator: ", "))
        case .joined: return name.map { "* \($0) joined voice" }
        case .left: return name.map { "* \($0) left voice" }
        case .muted: return name.map { "* \($0) is muted in voice" }
        case .unmuted: return name.map { "* \($0) can be heard in voice" }
        case .speaking, .quiet, .mode: return nil
        }
    }

    /// How much of the room's recent chat a text client is shown on arrival.
    static let recentChatLines = 10

    /// `= playing "Episode 1" at 0:12:03, rate 1`, the position as of `now`; with
    /// `of 0:45:00` once a player told the item's length, and `(live)` after the
    /// title of a live stream.
    static func stateLine(_ state: RoomState, now: ServerInstant? = nil, awaited: Int? = nil) -> String {
        var playback = state.playback
        if let now, playback.status == .playing { playback.position = playback.position(at: now) }
        guard let session = state.session, playback.status != .idle else {
            if state.session?.state == .invalidated { return "= the session ended; /watch <url> starts a new one" }
            return "= nothing is playing; /watch <url> starts a session"
        }
        let activity = session.activity
        let live = activity.live ? " (live)" : ""
        let length = activity.duration.map { " of \($0)" } ?? ""
        let title = "\(ShownText.quoted(activity.title))\(live) at \(playback.position)\(length), rate \(playback.rate)"
        switch playback.status {
        case .idle, .paused: return "= paused \(title)"
        case .playing: return "= playing \(title)"
        case .waiting:
            let players = switch awaited {
            case 1?: "1 player"
            case let count? where count > 1: "\(count) players"
            default: "the players"
            }
            return "= waiting for \(players) to be ready: \(title)"
        }
    }

    /// Nil when a notice says the same with who did it (roles, mutes).
    static func participantLine(_ member: Participant, _ change: ParticipantChange) -> String? {
        let name = member.name.text
        switch change {
        case .arrived: return "+ \(name) arrived"
        case .reconnected: return "+ \(name) is back"
        case .disconnected: return "- \(name) disconnected (may come back)"
        case .renamed(let old): return "* \(old) is now known as \(name)"
        case .role, .muted, .unmuted: return nil
        case .joinedSession: return "* \(name) joined the session"
        case .leftSession: return "* \(name) left the session"
        case .player: return member.player ? "* \(name) is a player" : "* \(name) is no longer a player"
        case .autoplay: return "* \(name) turned autoplay \(member.autoplay ? "on" : "off")"
        case .ready: return "* \(name) is ready"
        case .suspended(let reason): return "* \(name) \(doing(reason))"
        case .resumed:
            if member.suspensions.isEmpty { return "* \(name) rejoined the group" }
            return "* \(name) \(member.suspensions.map(doing).joined(separator: ", and "))"
        case .stalled: return "* \(name) is buffering"
        case .copy:
            switch member.copy {
            case true?: return "* \(name) has a copy and watches"
            case false?: return "* \(name) has no copy: not watching, still in the room"
            case nil: return nil
            }
        }
    }

    /// What a member is doing while suspended for this reason, in words.
    static func doing(_ reason: SuspensionReason) -> String {
        switch reason {
        case .stallRecovery: "is buffering"
        case .userIsChangingCurrentTime: "is scrubbing"
        case .userActionRequired: "stepped out"
        case .catchup: "is catching up"
        case .audioSessionInterrupted: "was interrupted"
        case .playingInterstitial: "is watching an interstitial"
        case .away: "is away (their page is in the background)"
        case .pausedForMe: "paused just for themselves"
        // Said by a player that cannot play the item at all (a provider's player
        // refused it, a format it lacks): the room does not wait for them.
        case .coordinatedPlaybackNotPossible: "cannot play this item in their player, so the room does not wait for them"
        default: "stepped out (\(reason))"
        }
    }

    static func replyLines(_ reply: Reply, awaited: Int? = nil) -> [String] {
        switch reply {
        case .help(let lines):
            return lines.map { "= \($0)" }
        case .who(let participants):
            return ["= \(participants.count) here:"] + participants.map { "=   \(describe($0))" }
        case .status(let state, let position, _):
            var status = state
            status.playback.position = position
            var lines = [stateLine(status, awaited: awaited)]
            if !state.queue.isEmpty { lines.append("= \(state.queue.count) queued; /queue lists them") }
            return lines
        case .queue(let items):
            guard !items.isEmpty else { return ["= the queue is empty"] }
            return ["= queue:"] + items.enumerated().map { "=   \($0 + 1). \(ShownText.quoted($1.title)) \($1.url)" }
        case .bans(let bans, let now):
            guard !bans.isEmpty else { return ["= nobody is banned or kept out"] }
            return ["= kept out:"] + bans.map { ban in
                let kind = ban.kind == .kick ? "kicked" : "banned"
                let until = ban.until.map { "for " + Room.duration($0.interval(since: now)) } ?? "until /unban"
                let reason = ban.reason.map { " (\($0))" } ?? ""
                return "=   #\(ban.number) \(ban.name): \(kind) by \(ban.by) \(until)\(reason)"
            }
        case .invite(let invite, let token, let now):
            return ["= invite #\(invite.number): add ?invite=\(token) to the room's link; it lets in \(uses(invite.usesLeft)) for "
                    + Room.duration(invite.expires.interval(since: now))]
        case .invites(let invites, let now):
            guard !invites.isEmpty else { return ["= no invite links are in force; /invite makes one"] }
            return ["= invite links:"] + invites.map { invite in
                "=   #\(invite.number) by \(invite.by): \(uses(invite.usesLeft)) left, for " + Room.duration(invite.expires.interval(since: now))
            }
        case .token(let bot, let token):
            return ["= token #\(bot.number) for \(bot.name) (\(bot.scope.rawValue)): \(token) (shown once; a bot connects with ?token= or Authorization: Bearer)"]
        case .tokens(let bots):
            guard !bots.isEmpty else { return ["= no bot tokens; /token <name> makes one"] }
            return ["= bot tokens:"] + bots.map { "=   #\($0.number) \($0.name) (\($0.scope.rawValue)) by \($0.by)" }
        case .policy(let policy):
            var words = "= policy: control \(policy.control.rawValue), stall \(policy.stall.rawValue), wait \(NumberText.decimal(policy.wait.seconds, places: 1)) s"
            if policy.locked { words += ", locked" }
            if policy.password { words += ", password" }
            return [words]
        }
    }

    /// One word per role, the page's words too: the owner (the room's creator, or
    /// whoever holds its owner key, a host above the hosts), a host, a member.
    static func roleWord(_ member: Participant) -> String {
        member.owner ? "owner" : member.role.rawValue
    }

    static func uses(_ count: Int) -> String { count == 1 ? "1 person" : "\(count) people" }

    static func describe(_ member: Participant) -> String {
        var parts = [roleWord(member)]
        if let scope = member.scope { parts.append("bot: \(scope.rawValue)") }
        if let software = member.software { parts.append("with \(software)") }
        if member.muted { parts.append("muted") }
        parts.append(member.joined ? "in session" : "not in session")
        if member.player { parts.append(member.ready ? "player, ready" : "player") }
        if member.copy == true { parts.append("has the file") }
        if member.copy == false { parts.append("no copy, not watching") }
        if !member.suspensions.isEmpty {
            parts.append(member.suspensions.map(doing).joined(separator: ", "))
        }
        if member.autoplay { parts.append("autoplay") }
        if !member.connected { parts.append("disconnected") }
        return "\(member.name) (\(parts.joined(separator: "; ")))"
    }
}
