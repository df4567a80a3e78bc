import CowatchTime

/// What the bridge says in Matrix rooms: queued, paced, sent one at a time.
extension MatrixSession {
    /// `now` nil: queued only; the caller pumps.
    mutating func perform(_ command: NetworkCommand, now: MonotonicInstant?) -> [Action] {
        let roomName: String
        var text: String
        let notice: Bool
        switch command {
        case .say(let channel, let line):
            (roomName, text, notice) = (channel, line, false)
        case .notice(let channel, let line):
            (roomName, text, notice) = (channel, line, true)
        case .tell(let speaker, let line):
            // Matrix has no line for one person inside a room: said where they
            // last spoke, addressed to them (a mention).
            guard let channel = lastRoom[speaker.id] else {
                return [.log(LogEntry(.debug, "a line for a person who has not spoken in a Matrix room is not sent", ["user": speaker.id]))]
            }
            (roomName, text, notice) = (channel, "\(speaker.name): \(line)", true)
        }
        guard let index = rooms.firstIndex(where: { $0.name == roomName }), let roomID = rooms[index].id,
              rooms[index].joined, !rooms[index].encrypted else {
            return [.log(LogEntry(.debug, "a line for a Matrix room the bot is not in is not sent", ["room": roomName]))]
        }
        text = String(text.unicodeScalars.filter { $0 == "\n" || $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
        let accepted = enqueue(Outbound(roomID: roomID, transaction: transaction(),
                                        content: MatrixText.content(text, notice: notice, members: rooms[index].members,
                                                                 recent: rooms[index].recentSpeakers)))
        var actions: [Action] = []
        if !accepted {
            actions.append(.log(LogEntry(.warning, "the queue for Matrix is full; a line was dropped",
                                         ["room": roomName, "queued": "\(settings.pacing.maximumQueued)"])))
        }
        guard let now else { return actions }
        return actions + pump(now: now)
    }

    @discardableResult
    mutating func enqueue(_ outbound: Outbound) -> Bool {
        pacer.enqueue(outbound)
    }

    mutating func transaction() -> String {
        nextTransaction += 1
        return "\(transactionPrefix).\(nextTransaction)"
    }

    /// Sends the next line when none is on its way and the pace allows.
    mutating func pump(now: MonotonicInstant) -> [Action] {
        guard phase == .syncing else { return [] }
        ready += pacer.release(now: now)
        var actions: [Action] = []
        if sending == nil, held == nil, !ready.isEmpty {
            actions += send(ready.removeFirst())
        }
        if !paceArmed, let delay = pacer.delayUntilNext(now: now) {
            paceArmed = true
            actions.append(.schedule(.pace, after: max(.milliseconds(1), delay)))
        }
        return actions
    }

    mutating func send(_ outbound: Outbound) -> [Action] {
        let action = request(.send(outbound), "PUT",
                             "/_matrix/client/v3/rooms/\(Self.escape(outbound.roomID))/send/m.room.message/\(Self.escape(outbound.transaction))",
                             body: outbound.content, authorized: true)
        if case .request(let request) = action { sending = request.id }
        return [action]
    }
}
