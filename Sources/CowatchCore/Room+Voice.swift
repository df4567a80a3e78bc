import CowatchTime
import SlashCommands

/// The room's voice (docs/voice.md): the room decides who may take a seat, who
/// is heard and who is told; the gateway's media server link carries out its
/// orders (`RoomAction.voice`) and reports back through the entry points below.
extension Room {
    public var voiceMode: VoiceMode { protection.voiceMode ?? .on }

    mutating func voice(_ command: VoiceCommand, from id: MemberID) {
        switch command {
        case .list:
            actions.append(.send(.voice(roster(.list, about: nil)), to: id))
        case .join:
            guard mayTakeSeat(id, .voice) else { return }
            actions.append(.voice(.ticket(id)))
        case .offerPart(let part):
            guard mayTakeSeat(id, .voice), let member = members[id] else { return }
            guard member.voiceOfferParts.utf8.count + part.utf8.count < CommandTable.maximumVoiceOfferCharacters else {
                modify(id) { $0.voiceOfferParts = "" }
                refuse(id, .badArguments, .voice, "voice: an offer is at most \(CommandTable.maximumVoiceOfferCharacters) characters in all")
                return
            }
            modify(id) { $0.voiceOfferParts += part }
        case .offer(let last):
            let offer = (members[id]?.voiceOfferParts ?? "") + last
            modify(id) { $0.voiceOfferParts = "" }
            guard offer.utf8.count <= CommandTable.maximumVoiceOfferCharacters else {
                refuse(id, .badArguments, .voice, "voice: an offer is at most \(CommandTable.maximumVoiceOfferCharacters) characters in all")
                return
            }
            offerVoice(offer, from: id)
        case .leave:
            guard members[id]?.voice != nil else {
                tell(id, "you are not in voice")
                return
            }
            leaveVoice(id)
        case .mute(let on):
            muteVoice(on, from: id)
        case .mode(let mode):
            setVoiceMode(mode, from: id)
        }
    }

    // MARK: - What the media server link reports

    /// The media server answered the member's offer: the member hears the room,
    /// and the room is told it is in voice. A seat given up meanwhile is let go.
    public mutating func voiceJoined(_ id: MemberID, answer: String, now: ServerInstant) -> [RoomAction] {
        collect(now: now) { room in
            guard let seat = room.members[id]?.voice, !seat.seated else {
                room.actions.append(.voice(.leave(id)))
                return
            }
            room.modify(id) { $0.voice?.seated = true }
            room.actions.append(.send(.voiceAnswer(sdp: answer), to: id))
            room.actions.append(.broadcast(.voice(room.roster(.joined, about: id))))
        }
    }

    /// The media server could not seat the member, or lost it (its connection
    /// failed, the server went away): the seat is given up and the member told why.
    public mutating func voiceFailed(_ id: MemberID, reason: String, now: ServerInstant) -> [RoomAction] {
        collect(now: now) { room in
            guard room.members[id]?.voice != nil else { return }
            room.refuse(id, .voiceUnavailable, .voice, "voice: \(reason)")
            room.leaveVoice(id)
        }
    }

    /// The media server hears the member start or stop speaking.
    public mutating func voiceSpeaking(_ id: MemberID, _ speaking: Bool, now: ServerInstant) -> [RoomAction] {
        collect(now: now) { room in
            guard let seat = room.members[id]?.voice, seat.seated, seat.speaking != speaking else { return }
            room.modify(id) { $0.voice?.speaking = speaking }
            room.actions.append(.broadcast(.voice(room.roster(speaking ? .speaking : .quiet, about: id))))
        }
    }

    /// Every seat is gone (the media server went away): each holder is told.
    public mutating func voiceEnded(reason: String, now: ServerInstant) -> [RoomAction] {
        collect(now: now) { room in
            for member in room.members.values where member.voice != nil {
                room.refuse(member.id, .voiceUnavailable, .voice, "voice: \(reason)")
                room.leaveVoice(member.id, tellingServer: false)
            }
        }
    }

    /// Whom the media server should have seated: its own reckoning after it
    /// reconnects is checked against this.
    public var voiceSeats: [MemberID] {
        members.values.filter { $0.voice != nil }.sorted { $0.arrival < $1.arrival }.map(\.id)
    }

    // MARK: - The room's own changes that reach voice

    /// A member leaving the room, or its connection, leaves voice with it: its
    /// page's call went with the page.
    mutating func leaveVoiceOnDeparture(_ id: MemberID) {
        guard members[id]?.voice != nil else { return }
        leaveVoice(id)
    }

    /// A host's `/mute` reaches voice at once, and `/unmute` gives back the
    /// member's own choice.
    mutating func voiceMuteFollows(_ id: MemberID) {
        guard let member = members[id], let seat = member.voice else { return }
        actions.append(.voice(.mute(id, member.muted || seat.selfMuted)))
        if seat.seated {
            actions.append(.broadcast(.voice(roster(member.muted || seat.selfMuted ? .muted : .unmuted, about: id))))
        }
    }

    /// After a role change: a member the mode no longer lets in loses its seat.
    mutating func voiceRoleFollows(_ id: MemberID) {
        guard let member = members[id], member.voice != nil, !passesVoiceMode(member) else { return }
        tell(id, "you left voice: it is for hosts only in this room")
        leaveVoice(id)
    }

    /// A newcomer learns who is in voice, on a server that has it.
    mutating func greetWithVoice(_ id: MemberID) {
        guard configuration.voice.available else { return }
        actions.append(.send(.voice(roster(.list, about: nil)), to: id))
    }

    // MARK: - Steps

    private mutating func offerVoice(_ offer: String, from id: MemberID) {
        guard mayTakeSeat(id, .voice), let member = members[id] else { return }
        // A new offer replaces the member's seat: its page reconnected its call.
        if member.voice != nil { leaveVoice(id) }
        let seats = members.values.filter { $0.voice != nil }
        guard seats.count < configuration.voice.seats else {
            refuse(id, .voiceUnavailable, .voice, "voice: all \(configuration.voice.seats) seats of this room are taken")
            return
        }
        let speakers = seats.filter { !$0.muted && $0.voice?.selfMuted == false }.count
        let full = speakers >= configuration.voice.speakers
        modify(id) { $0.voice = VoiceSeat(seated: false, selfMuted: full, speaking: false) }
        if full {
            tell(id, "you joined voice muted: \(configuration.voice.speakers) people can be heard at once, and that many are")
        }
        actions.append(.voice(.join(id, name: member.name, offer: offer, muted: full || member.muted)))
    }

    private mutating func muteVoice(_ on: Bool, from id: MemberID) {
        guard let member = members[id], let seat = member.voice else {
            tell(id, "you are not in voice")
            return
        }
        guard seat.selfMuted != on else {
            tell(id, on ? "your microphone is already off" : "your microphone is already on")
            return
        }
        if !on {
            let speakers = members.values.filter { $0.id != id && !$0.muted && $0.voice?.selfMuted == false }.count
            guard speakers < configuration.voice.speakers else {
                refuse(id, .voiceUnavailable, .voice,
                       "voice: \(configuration.voice.speakers) people can be heard at once, and that many are; wait for one to mute")
                return
            }
        }
        modify(id) { $0.voice?.selfMuted = on }
        actions.append(.voice(.mute(id, on || member.muted)))
        if seat.seated { actions.append(.broadcast(.voice(roster(on || member.muted ? .muted : .unmuted, about: id)))) }
    }

    private mutating func setVoiceMode(_ mode: VoiceMode, from id: MemberID) {
        guard requireHost(id, .voice) else { return }
        guard mode != voiceMode else {
            tell(id, "voice is already \(mode.rawValue)")
            return
        }
        protection.voiceMode = mode == .on ? nil : mode
        needsPersisting = true
        let sentence = switch mode {
        case .on: "opened voice to everyone"
        case .off: "turned voice off"
        case .hosts: "made voice for hosts only"
        }
        notify("\(displayName(id)) \(sentence)", cause: .voice, by: id)
        for member in members.values where member.voice != nil && !passesVoiceMode(member) {
            tell(member.id, "you left voice: \(mode == .off ? "it is off" : "it is for hosts only") in this room now")
            leaveVoice(member.id)
        }
        actions.append(.broadcast(.voice(roster(.mode, about: nil))))
    }

    /// Gives up the member's seat, tells the media server (unless it is the one
    /// that went away) and, for a seat it had answered, the room.
    mutating func leaveVoice(_ id: MemberID, tellingServer: Bool = true) {
        guard let member = members[id], let seat = member.voice else { return }
        modify(id) { $0.voice = nil }
        if tellingServer { actions.append(.voice(.leave(id))) }
        if seat.seated { actions.append(.broadcast(.voice(roster(.left, about: id, name: member.name)))) }
    }

    private func passesVoiceMode(_ member: Member) -> Bool {
        switch voiceMode {
        case .on: member.scope == nil
        case .off: false
        case .hosts: member.scope == nil && member.role == .host
        }
    }

    /// The refusals of a seat, in the order users meet them.
    private mutating func mayTakeSeat(_ id: MemberID, _ command: CommandName) -> Bool {
        guard let member = members[id] else { return false }
        guard configuration.voice.available else {
            refuse(id, .voiceUnavailable, command, "voice: this server has no media server for voice")
            return false
        }
        guard member.scope == nil else {
            refuse(id, .forbidden, command, "voice: bots do not take a seat in voice")
            return false
        }
        switch voiceMode {
        case .off:
            refuse(id, .forbidden, command, "voice: a host turned voice off in this room")
            return false
        case .hosts where member.role != .host:
            refuse(id, .forbidden, command, "voice: only hosts may join voice in this room (/voice hosts)")
            return false
        case .on, .hosts:
            return true
        }
    }

    func roster(_ change: VoiceChange, about id: MemberID?, name: DisplayName? = nil) -> VoiceRoster {
        let seats = members.values
            .filter { $0.voice?.seated == true }
            .sorted { $0.arrival < $1.arrival }
            .map { member in
                VoiceRoster.Seat(id: member.id, name: member.name,
                                 muted: member.muted || member.voice?.selfMuted == true,
                                 speaking: member.voice?.speaking == true)
            }
        return VoiceRoster(change: change, member: id, name: name ?? id.flatMap { members[$0]?.name },
                           mode: voiceMode, seats: seats)
    }
}
