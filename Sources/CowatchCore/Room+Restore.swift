import CowatchTime
import SlashCommands

extension Room {
    /// A room brought back after a restart, from what was persisted.
    ///
    /// A room that was playing continues from its anchor as if the server had
    /// never stopped, unless it was down (since `downSince`, the last sign of life
    /// of the server that saved it) longer than `maximumDowntime`: then it is
    /// paused at the position it has reached. A waiting room is paused (none of
    /// its players is connected yet). Every member comes back disconnected, with a
    /// fresh resume grace; `seq` goes on from where it was. The returned actions
    /// arm the members' grace timers and publish a changed state.
    public static func restore(
        _ snapshot: RoomSnapshot, members records: [MemberRecord], chat: [ChatLine],
        configuration: RoomConfiguration = RoomConfiguration(), downSince: ServerInstant,
        maximumDowntime: ServerInterval, now: ServerInstant
    ) -> (Room, [RoomAction]) {
        var room = Room(name: snapshot.room, configuration: configuration, now: now)
        room.state = snapshot.state
        room.nextMemberNumber = snapshot.nextMemberNumber
        room.nextActivityNumber = snapshot.nextActivityNumber
        room.nextQueueNumber = snapshot.nextQueueNumber
        room.itemSeq = snapshot.itemSeq
        room.protection = snapshot.protection ?? RoomProtection()
        room.readinessAnchor = snapshot.state.seq + 1
        room.recentChat = Array(chat.suffix(configuration.chatHistory))
        room.recentChatBytes = room.recentChat.reduce(0) { $0 + $1.text.utf8.count }
        room.forgetChat(keepingBytes: configuration.chatHistoryBytes)
        let actions = room.collect(now: now) { room in
            for record in records.sorted(by: { $0.arrival < $1.arrival }) {
                room.readmit(record, now: now)
                // A member that arrived after the snapshot was last saved: newcomers
                // are numbered after it, or one would take its id (and its place).
                if let number = record.id.memberNumber, number >= room.nextMemberNumber {
                    room.nextMemberNumber = number + 1
                }
            }
            let downtime = now.interval(since: Swift.max(downSince, snapshot.savedAt))
            switch room.state.playback.status {
            case .playing where downtime > maximumDowntime:
                room.holdPaused(at: room.state.playback.position(at: now), cause: .restore, by: nil, now: now)
            case .waiting:
                room.holdPaused(at: room.state.playback.position, cause: .restore, by: nil, now: now)
            case .idle, .paused, .playing:
                break
            }
            if room.hostCount == 0 && !room.members.isEmpty { room.promoteLongestPresent() }
            if room.members.isEmpty {
                // Kept since it emptied (or from now, for a room saved before rooms outlived that).
                let since = room.protection.emptySince ?? now
                room.protection.emptySince = since
                room.actions.append(.schedule(.roomExpires(emptySince: since), at: since.advanced(by: room.expiry)))
            }
        }
        return (room, actions)
    }

    /// A node taking a room over in a cluster goes on numbering states after every
    /// `seq` its predecessor may have sent, written or not, so that no `seq` is
    /// ever seen twice (docs/cluster.md, "Numbering"). Called before anyone is
    /// connected: the next state published carries `seq + 1`.
    public mutating func continueNumbering(after seq: Int64) {
        guard seq > state.seq else { return }
        state.seq = seq
        readinessAnchor = seq + 1
    }

    /// A persisted member, back as disconnected within a fresh grace period.
    mutating func readmit(_ record: MemberRecord, now: ServerInstant) {
        var member = Member(
            id: record.id, name: uniqueName(record.name, for: record.id), role: record.role,
            joined: record.joined && state.session?.isActive == true, joinsNewSessions: record.joinsNewSessions,
            player: record.player, autoplay: record.autoplay, suspensions: record.suspensions, readySeq: -1,
            connected: false, arrival: record.arrival, resumeToken: record.resumeToken, joinedSeq: state.seq,
            roundTrip: .zero, disconnectSerial: 1, catchupSerial: 0)
        member.owner = record.owner
        member.muted = record.muted
        member.deviceDigest = record.deviceDigest
        member.scope = record.scope
        member.tokenNumber = record.tokenNumber
        insertMember(member, stored: record)
        actions.append(.schedule(.resumeExpires(record.id, serial: 1), at: now.advanced(by: configuration.grace(for: member))))
    }
}
