import CowatchTime
import Foundation

/// What one `/sync` answer means for the bridge.
extension MatrixSession {
    mutating func synced(_ object: [String: Any], initial: Bool, now: MonotonicInstant) -> [Action] {
        var actions: [Action] = []
        let roomsObject = object["rooms"] as? [String: Any] ?? [:]
        for (roomID, value) in Self.sorted(roomsObject["invite"]) {
            actions += invited(roomID, value)
        }
        for (roomID, value) in Self.sorted(roomsObject["join"]) {
            guard let index = roomIndex(id: roomID) else { continue }
            actions += joinedRoom(index, roomID: roomID, value, initial: initial, now: now)
        }
        for (roomID, value) in Self.sorted(roomsObject["leave"]) {
            guard let index = roomIndex(id: roomID), rooms[index].joined else { continue }
            actions += leftRoom(index, value)
        }
        if let next = object["next_batch"] as? String, next != saved.since {
            // Kept only now that this answer's events were handed on.
            saved.since = next
            actions.append(.keep(saved))
        }
        return actions + pump(now: now)
    }

    func roomIndex(id: String) -> Int? {
        rooms.firstIndex { $0.id == id }
    }

    // MARK: - Invites, joins and leaves

    private mutating func invited(_ roomID: String, _ value: [String: Any]) -> [Action] {
        let events = Self.events(value["invite_state"])
        let aliases = events.filter { $0["type"] as? String == "m.room.canonical_alias" }.flatMap { event -> [String] in
            let content = event["content"] as? [String: Any] ?? [:]
            return [content["alias"] as? String].compactMap { $0 } + (content["alt_aliases"] as? [String] ?? [])
        }
        let index = roomIndex(id: roomID) ?? rooms.firstIndex { room in room.id == nil && aliases.contains(room.name) }
        guard let index else {
            let inviter = events.first { $0["type"] as? String == "m.room.member" && $0["state_key"] as? String == settings.user }?["sender"] as? String
            return [.log(LogEntry(.info, "declining an invite to a Matrix room that is not configured", ["room_id": roomID, "inviter": inviter ?? "?"])),
                    request(.decline(roomID), "POST", "/_matrix/client/v3/rooms/\(Self.escape(roomID))/leave", body: "{}", authorized: true)]
        }
        guard !rooms[index].joined, !inFlight.values.contains(.join(rooms[index].name)) else { return [] }
        rooms[index].id = roomID
        return [.log(LogEntry(.info, "invited to a configured Matrix room; joining", ["room": rooms[index].name, "room_id": roomID])),
                request(.join(rooms[index].name), "POST", "/_matrix/client/v3/join/" + Self.escape(roomID), body: "{}", authorized: true)]
    }

    private mutating func joinedRoom(_ index: Int, roomID: String, _ value: [String: Any], initial: Bool, now: MonotonicInstant) -> [Action] {
        var actions: [Action] = []
        let wasReported = rooms[index].reported
        // The state before the timeline: who is in, names, encryption. In a
        // limited (gappy) sync of a room already reported, the renames and
        // leaves that happened in the gap are here, not in the timeline: told.
        for event in Self.events(value["state"]) { actions += apply(state: event, index) }
        let timeline = Self.events(value["timeline"])
        rooms[index].joined = true
        if !wasReported {
            // Newly in: the timeline's changes of membership are part of who is
            // present, not news; its lines are news unless this is the first sync.
            // (Nothing is told of them: the room is not reported yet.)
            for event in timeline where event["state_key"] != nil { actions += apply(state: event, index) }
            actions += encryptionChecked(index)
            guard !rooms[index].encrypted else { return actions }
            rooms[index].reported = true
            actions.append(.deliver(.joined(channel: rooms[index].name)))
            actions.append(.deliver(.present(channel: rooms[index].name, speakers: present(index))))
            guard !initial else { return actions }
            // A room just joined comes with some of its history: only what was
            // said after the bot's join is news.
            let ownJoin = timeline.lastIndex { event in
                event["type"] as? String == "m.room.member" && event["state_key"] as? String == settings.user
                    && (event["content"] as? [String: Any])?["membership"] as? String == "join"
            }
            let news = ownJoin.map { Array(timeline[($0 + 1)...]) } ?? timeline
            for event in news where event["state_key"] == nil { actions += message(event, index) }
            return actions
        }
        for event in timeline {
            if event["state_key"] != nil {
                actions += apply(state: event, index)
            } else if !initial {
                actions += message(event, index)
            }
        }
        return actions + encryptionChecked(index)
    }

    private mutating func leftRoom(_ index: Int, _ value: [String: Any]) -> [Action] {
        let own = (Self.events(value["timeline"]) + Self.events(value["state"])).last {
            $0["type"] as? String == "m.room.member" && $0["state_key"] as? String == settings.user
        }
        let content = own?["content"] as? [String: Any] ?? [:]
        let membership = content["membership"] as? String ?? "leave"
        let by = own?["sender"] as? String
        var reason = membership == "ban" ? "banned" : (by != nil && by != settings.user ? "removed" : "left")
        if let by, by != settings.user { reason += " by \(by)" }
        if let words = content["reason"] as? String, !words.isEmpty { reason += ": \(words)" }
        let room = rooms[index]
        rooms[index].joined = false
        rooms[index].reported = false
        rooms[index].members = [:]
        let delay = rooms[index].joinBackoff.next()
        var actions: [Action] = [.log(LogEntry(.warning, "the bot is out of a Matrix room; it tries to join again",
                                               ["room": room.name, "why": reason, "retry_in": Self.seconds(delay)])),
                                 .schedule(.rejoin(room.name), after: delay)]
        if room.reported { actions.insert(.deliver(.parted(channel: room.name, reason: reason)), at: 0) }
        return actions
    }

    /// Says once, in the room and in the log, that an encrypted room is not read;
    /// a room that became encrypted is reported left.
    private mutating func encryptionChecked(_ index: Int) -> [Action] {
        let room = rooms[index]
        guard room.encrypted, let roomID = room.id else { return [] }
        var actions: [Action] = []
        if room.reported {
            rooms[index].reported = false
            actions.append(.deliver(.parted(channel: room.name, reason: "the room is end-to-end encrypted")))
        }
        guard !saved.toldEncrypted.contains(roomID) else { return actions }
        saved.toldEncrypted.append(roomID)
        let words = "This room is end-to-end encrypted, and the Cowatch bridge does not read encrypted rooms: "
            + "nothing said here reaches Cowatch, and Cowatch says nothing here. Bridge an unencrypted room instead."
        actions.append(.log(LogEntry(.warning, "a configured Matrix room is end-to-end encrypted; the bridge does not read it",
                                     ["room": room.name, "room_id": roomID])))
        actions.append(.keep(saved))
        enqueue(Outbound(roomID: roomID, transaction: transaction(), content: Self.json(["msgtype": "m.notice", "body": words])))
        return actions
    }

    // MARK: - State

    /// Applies a state event (members and their names, encryption); returns
    /// what the bridge is told when the room is already reported.
    private mutating func apply(state event: [String: Any], _ index: Int) -> [Action] {
        let type = event["type"] as? String
        let content = event["content"] as? [String: Any] ?? [:]
        if type == "m.room.encryption" {
            rooms[index].encrypted = true
            return []
        }
        guard type == "m.room.member", let user = event["state_key"] as? String, user != settings.user else { return [] }
        let membership = content["membership"] as? String
        let displayName = Self.displayName(content["displayname"])
        let channel = rooms[index].name
        let before = rooms[index].members[user]
        let reported = rooms[index].reported
        switch membership {
        case "join":
            rooms[index].members[user] = .some(displayName)
            if reported, let before, before != displayName {
                return [.deliver(.renamed(from: NetworkSpeaker(id: user, name: Self.name(user, before)),
                                          to: NetworkSpeaker(id: user, name: Self.name(user, displayName))))]
            }
            return []
        default:
            guard let before else { return [] }
            rooms[index].members[user] = nil
            return reported ? [.deliver(.left(channel: channel, speaker: NetworkSpeaker(id: user, name: Self.name(user, before))))] : []
        }
    }

    func present(_ index: Int) -> [NetworkSpeaker] {
        rooms[index].members.keys.sorted().map { speaker($0, index) }
    }

    func speaker(_ user: String, _ index: Int) -> NetworkSpeaker {
        NetworkSpeaker(id: user, name: Self.name(user, rooms[index].members[user] ?? nil))
    }

    /// A person's name: their display name, else their id's localpart.
    static func name(_ user: String, _ displayName: String?) -> String {
        if let displayName, !displayName.isEmpty { return displayName }
        let local = user.dropFirst().prefix { $0 != ":" }
        return local.isEmpty ? user : String(local)
    }

    static func displayName(_ value: Any?) -> String? {
        guard let text = value as? String else { return nil }
        let cleaned = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
            .trimmingCharacters(in: .whitespaces)
        return cleaned.isEmpty ? nil : cleaned
    }

    // MARK: - Messages

    private mutating func message(_ event: [String: Any], _ index: Int) -> [Action] {
        guard let text = MatrixText.lines(of: event, ownUser: settings.user, members: rooms[index].members) else { return [] }
        guard let sender = event["sender"] as? String, !rooms[index].encrypted else { return [] }
        let person = speaker(sender, index)
        let channel = rooms[index].name
        lastRoom[sender] = channel
        rooms[index].recentSpeakers[person.name] = sender
        var lines = text.lines
        var actions: [Action] = []
        if lines.count > settings.maximumMessageLines {
            let left = lines.count - settings.maximumMessageLines
            lines = Array(lines.prefix(settings.maximumMessageLines))
            actions += perform(.tell(speaker: person, text: "Only the first \(settings.maximumMessageLines) lines of a message reach the room; \(left) were left out."),
                               now: nil)
        }
        return lines.map { .deliver(.message(channel: channel, from: person, text: $0, action: text.emote)) } + actions
    }

    // MARK: - JSON

    static func sorted(_ value: Any?) -> [(String, [String: Any])] {
        guard let object = value as? [String: Any] else { return [] }
        return object.keys.sorted().compactMap { key in (object[key] as? [String: Any]).map { (key, $0) } }
    }

    /// The `events` of a sync section (`state`, `timeline`, `invite_state`).
    static func events(_ value: Any?) -> [[String: Any]] {
        (value as? [String: Any])?["events"] as? [[String: Any]] ?? []
    }
}
