import SlashCommands

/// The `cowatch.v1.json` encoding: one JSON object per event, as `docs/protocol.md` says.
public enum JSONEventEncoding {
    public static func encode(_ event: RoomEvent) -> [UInt8] {
        var json = JSONWriter()
        json.object { json in
            json.key("type"); json.string(event.type)
            switch event {
            case .welcome(let welcome):
                json.key("you"); participant(welcome.you, into: &json)
                json.key("room"); json.string(welcome.room.rawValue)
                json.key("serverTime"); json.integer(welcome.serverTime.milliseconds)
                json.key("resume"); json.string(welcome.resume)
                if let key = welcome.ownerKey { json.key("ownerKey"); json.string(key) }
                json.key("participants"); json.array(welcome.participants) { participant($1, into: &$0) }
                json.key("chat"); json.array(welcome.chat) { json, line in json.object { chatMembers(line, into: &$0) } }
                json.key("limits"); json.object { json in
                    json.key("lineBytes"); json.integer(Int64(welcome.limits.lineBytes))
                    json.key("messageBytes"); json.integer(Int64(welcome.limits.messageBytes))
                }
            case .state(let state):
                stateMembers(state, into: &json)
            case .participant(let member, let change):
                json.key("participant"); participant(member, into: &json)
                json.key("change"); json.string(change.name)
                if case .renamed(let old) = change { json.key("from"); json.string(old.text) }
            case .participantLeft(let id, let name, let reason):
                json.key("id"); json.string(id.rawValue)
                json.key("name"); json.string(name.text)
                json.key("reason"); json.string(reason.rawValue)
            case .chat(let line):
                chatMembers(line, into: &json)
            case .notice(let notice):
                json.key("text"); json.string(notice.text)
                json.key("cause"); json.string(notice.cause?.rawValue)
                json.key("by"); json.string(notice.by?.rawValue)
            case .reply(let reply):
                replyMembers(reply, into: &json)
            case .error(let error):
                json.key("code"); json.string(error.code.rawValue)
                json.key("message"); json.string(error.message)
                json.key("command"); json.string(error.command?.rawValue)
            case .time(let client, let server):
                json.key("client"); json.number(client, places: 6)
                json.key("server"); json.integer(server.milliseconds)
            case .catchup(let catchup):
                json.key("from"); json.number(catchup.from.seconds)
                json.key("rate"); json.number(catchup.rate.value)
                json.key("until"); json.integer(catchup.until.milliseconds)
            case .voice(let roster):
                json.key("change"); json.string(roster.change.rawValue)
                json.key("member"); json.string(roster.member?.rawValue)
                json.key("name"); json.string(roster.name?.text)
                json.key("mode"); json.string(roster.mode.rawValue)
                json.key("seats"); json.array(roster.seats) { json, seat in
                    json.object { json in
                        json.key("id"); json.string(seat.id.rawValue)
                        json.key("name"); json.string(seat.name.text)
                        json.key("muted"); json.bool(seat.muted)
                        json.key("speaking"); json.bool(seat.speaking)
                    }
                }
            case .voiceTicket(let ticket):
                json.key("iceServers"); json.array(ticket.iceServers) { json, server in
                    json.object { json in
                        json.key("urls"); json.array(server.urls) { $0.string($1) }
                        if let username = server.username { json.key("username"); json.string(username) }
                        if let credential = server.credential { json.key("credential"); json.string(credential) }
                    }
                }
                json.key("expires"); json.integer(ticket.expires.milliseconds)
            case .voiceAnswer(let sdp):
                json.key("sdp"); json.string(sdp)
            }
        }
        return json.bytes
    }

    static func chatMembers(_ line: ChatLine, into json: inout JSONWriter) {
        json.key("from"); json.string(line.from.rawValue)
        json.key("name"); json.string(line.name.text)
        json.key("text"); json.string(line.text)
        json.key("at"); json.integer(line.at.milliseconds)
        json.key("me"); json.bool(line.me)
    }

    static func stateMembers(_ state: RoomState, into json: inout JSONWriter) {
        json.key("seq"); json.integer(state.seq)
        json.key("session")
        if let session = state.session {
            json.object { json in
                json.key("state"); json.string(session.state.rawValue)
                if let reason = session.reason { json.key("reason"); json.string(reason) }
                json.key("activity")
                json.object { json in
                    json.key("id"); json.string(session.activity.id)
                    json.key("url"); json.string(session.activity.url?.text)
                    json.key("title"); json.string(session.activity.title)
                    json.key("identifier"); json.string(session.activity.identifier)
                    json.key("source")
                    json.object { json in
                        json.key("kind"); json.string(session.activity.source.kind)
                        if let id = session.activity.source.providerID { json.key("id"); json.string(id) }
                        if let copy = session.activity.source.ownCopy {
                            json.key("hash"); json.string(copy.hashText)
                            json.key("size"); json.integer(copy.size)
                        }
                    }
                    json.key("live"); json.bool(session.activity.live)
                    json.key("duration")
                    if let duration = session.activity.duration { json.number(duration.seconds) } else { json.null() }
                    json.key("subtitles")
                    json.array(session.activity.subtitles) { json, track in
                        json.object { json in
                            json.key("id"); json.string(track.id)
                            json.key("url"); json.string(track.url.text)
                            json.key("label"); json.string(track.label)
                        }
                    }
                }
            }
        } else {
            json.null()
        }
        json.key("playback")
        json.object { json in
            let playback = state.playback
            json.key("status"); json.string(playback.status.rawValue)
            json.key("item"); json.string(playback.item)
            json.key("rate"); json.number(playback.rate.value)
            json.key("position"); json.number(playback.position.seconds)
            json.key("at"); json.integer(playback.at.milliseconds)
            json.key("by"); json.string(playback.by?.rawValue)
            json.key("cause"); json.string(playback.cause.rawValue)
        }
        json.key("queue"); json.array(state.queue) { queueItem($1, into: &$0) }
        json.key("policy"); policy(state.policy, into: &json)
        access(state.policy, into: &json)
    }

    /// Kept apart from `policy`, whose three fields the contract lists.
    static func access(_ policy: RoomPolicy, into json: inout JSONWriter) {
        json.key("access")
        json.object { json in
            json.key("locked"); json.bool(policy.locked)
            json.key("password"); json.bool(policy.password)
            json.key("public"); json.bool(policy.listed)
        }
    }

    static func participant(_ member: Participant, into json: inout JSONWriter) {
        json.object { json in
            json.key("id"); json.string(member.id.rawValue)
            json.key("name"); json.string(member.name.text)
            json.key("role"); json.string(member.role.rawValue)
            json.key("joined"); json.bool(member.joined)
            json.key("player"); json.bool(member.player)
            json.key("ready"); json.bool(member.ready)
            json.key("suspensions"); json.array(member.suspensions) { $0.string($1.rawValue) }
            json.key("autoplay"); json.bool(member.autoplay)
            json.key("connected"); json.bool(member.connected)
            json.key("owner"); json.bool(member.owner)
            json.key("muted"); json.bool(member.muted)
            // Only while it is known: absent means not asked (every item but an own copy).
            if let copy = member.copy { json.key("copy"); json.bool(copy) }
            if let scope = member.scope { json.key("bot"); json.string(scope.rawValue) }
            if let software = member.software { json.key("software"); json.string(software) }
        }
    }

    static func queueItem(_ item: QueueItem, into json: inout JSONWriter) {
        json.object { json in
            json.key("id"); json.string(item.id)
            json.key("url"); json.string(item.url.text)
            json.key("title"); json.string(item.title)
        }
    }

    static func policy(_ policy: RoomPolicy, into json: inout JSONWriter) {
        json.object { json in
            json.key("control"); json.string(policy.control.rawValue)
            json.key("stall"); json.string(policy.stall.rawValue)
            json.key("wait"); json.number(policy.wait.seconds)
        }
    }

    static func inviteObject(_ invite: Invite, into json: inout JSONWriter) {
        json.object { json in
            json.key("number"); json.integer(invite.number)
            json.key("usesLeft"); json.integer(Int64(invite.usesLeft))
            json.key("expires"); json.integer(invite.expires.milliseconds)
            json.key("by"); json.string(invite.by.text)
        }
    }

    static func botObject(_ bot: BotToken, into json: inout JSONWriter) {
        json.object { json in
            json.key("number"); json.integer(bot.number)
            json.key("name"); json.string(bot.name.text)
            json.key("scope"); json.string(bot.scope.rawValue)
            json.key("by"); json.string(bot.by.text)
        }
    }

    static func replyMembers(_ reply: Reply, into json: inout JSONWriter) {
        json.key("command"); json.string(reply.command.rawValue)
        switch reply {
        case .help(let lines):
            json.key("lines"); json.array(lines) { $0.string($1) }
        case .who(let participants):
            json.key("participants"); json.array(participants) { participant($1, into: &$0) }
        case .status(let state, let position, let now):
            json.key("state"); json.object { stateMembers(state, into: &$0) }
            json.key("position"); json.number(position.seconds)
            json.key("serverTime"); json.integer(now.milliseconds)
        case .queue(let items):
            json.key("queue"); json.array(items) { queueItem($1, into: &$0) }
        case .policy(let value):
            json.key("policy"); policy(value, into: &json)
            access(value, into: &json)
        case .bans(let bans, let now):
            json.key("serverTime"); json.integer(now.milliseconds)
            json.key("bans")
            json.array(bans) { json, ban in
                json.object { json in
                    json.key("number"); json.integer(ban.number)
                    json.key("kind"); json.string(ban.kind.rawValue)
                    json.key("name"); json.string(ban.name.text)
                    json.key("until"); if let until = ban.until { json.integer(until.milliseconds) } else { json.null() }
                    json.key("reason"); json.string(ban.reason)
                    json.key("by"); json.string(ban.by.text)
                    json.key("address"); json.bool(ban.address != nil)
                }
            }
        case .invite(let invite, let token, let now):
            json.key("serverTime"); json.integer(now.milliseconds)
            json.key("invite"); inviteObject(invite, into: &json)
            json.key("token"); json.string(token)
        case .invites(let invites, let now):
            json.key("serverTime"); json.integer(now.milliseconds)
            json.key("invites"); json.array(invites) { inviteObject($1, into: &$0) }
        case .token(let bot, let token):
            json.key("bot"); botObject(bot, into: &json)
            json.key("token"); json.string(token)
        case .tokens(let bots):
            json.key("tokens"); json.array(bots) { botObject($1, into: &$0) }
        }
        // The same words a text client sees, for clients that just print replies.
        json.key("text"); json.string(TextEventEncoding.lines(.reply(reply)).joined(separator: "\n"))
    }
}

extension ParticipantChange {
    /// The `change` field: what happened to the participant.
    public var name: String {
        switch self {
        case .arrived: "arrived"
        case .reconnected: "reconnected"
        case .disconnected: "disconnected"
        case .renamed: "renamed"
        case .role: "role"
        case .joinedSession: "joined"
        case .leftSession: "left"
        case .player: "player"
        case .autoplay: "autoplay"
        case .ready: "ready"
        case .suspended: "suspended"
        case .resumed: "resumed"
        case .stalled: "buffering"
        case .muted: "muted"
        case .unmuted: "unmuted"
        case .copy: "copy"
        }
    }
}
