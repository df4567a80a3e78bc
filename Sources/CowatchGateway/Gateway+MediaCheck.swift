import CowatchConnection
import CowatchCore
import SlashCommands

/// Links shared with `/watch` and `/queue` are looked at before the room sees
/// them (`MediaCheck`, `MediaProbe`): the command waits for the answer, and so do
/// the sender's later lines, kept in order (a bot's `/watch` then `/play` must
/// stay in that order). A link that is certainly not media is refused with
/// `not-media`; one that cannot be checked is shared with a word to the sender.
extension Gateway {
    /// A check in flight for a connection, with the lines that came after it.
    struct PendingMediaCheck {
        var input: InputLine
        /// Whose place among `maximumPerAddress` the check takes.
        var address: String
        var held: [Result<InputLine, CommandError>] = []
    }

    /// The link to check before `input` reaches the room, if any.
    func linkToCheck(_ input: InputLine) -> String? {
        guard configuration.mediaCheck.enabled, case .command(let command) = input else { return nil }
        let url: MediaURL?
        switch command {
        case .watch(let link, _): url = link
        case .queue(let link, _): url = link
        default: url = nil
        }
        guard let text = url?.text, text.hasPrefix("http://") || text.hasPrefix("https://") else { return nil }
        return text
    }

    /// One parsed line from a connection: held behind a check in flight, the start
    /// of a check, or handed to the room.
    func deliver(_ parsed: Result<InputLine, CommandError>, on connection: Connection) {
        if connection.mediaCheck != nil {
            guard (connection.mediaCheck?.held.count ?? 0) < configuration.mediaCheck.maximumHeldLines else {
                send(.error(CommandError(.rateLimited, command: nil,
                                         message: "too many lines while a link is checked; this one was dropped")), to: connection)
                return
            }
            connection.mediaCheck?.held.append(parsed)
            return
        }
        switch parsed {
        case .failure(let error):
            send(.error(error), to: connection)
        case .success(let input):
            // The room decides first: a line it would refuse or ignore reaches it
            // at once and is answered there, and nobody's link is fetched for it.
            if let link = linkToCheck(input), roomWouldChange(input, from: connection) {
                startCheck(link, input: input, on: connection)
            } else {
                toRoom(input, from: connection)
            }
        }
    }

    private func roomWouldChange(_ input: InputLine, from connection: Connection) -> Bool {
        guard let name = connection.room, let member = connection.member, let entry = rooms[name] else { return false }
        return entry.room.wouldChange(input, from: member, now: ServerClock.now())
    }

    private func toRoom(_ input: InputLine, from connection: Connection) {
        guard let name = connection.room, let member = connection.member, let entry = rooms[name],
              entry.connections[member] === connection, connection.state.isOpen else { return }
        run(entry.room.receive(input, from: member, now: ServerClock.now()), in: entry)
    }

    private func startCheck(_ link: String, input: InputLine, on connection: Connection) {
        // One address's checks take at most a few of the server's places, so that
        // a stranger with a slow link cannot leave other rooms' links unchecked.
        guard mediaChecksByAddress[connection.address, default: 0] < configuration.mediaCheck.maximumPerAddress else {
            metrics.mediaChecks["address-busy", default: 0] += 1
            let command: CommandName? = if case .command(let command) = input { command.name } else { nil }
            send(.error(CommandError(.rateLimited, command: command, message:
                "/\(command?.rawValue ?? "watch"): links from your address are already being checked; send it again once they are done")),
                 to: connection)
            return
        }
        guard mediaChecksInFlight < configuration.mediaCheck.maximumConcurrent else {
            metrics.mediaChecks["busy", default: 0] += 1
            toRoom(input, from: connection)
            send(.notice(Notice(text: "that link was not checked (the server is checking many others); shared anyway",
                                cause: nil, by: nil)), to: connection)
            return
        }
        mediaChecksInFlight += 1
        mediaChecksByAddress[connection.address, default: 0] += 1
        connection.mediaCheck = PendingMediaCheck(input: input, address: connection.address)
        let id = connection.id
        let started = ServerClock.monotonic()
        let address = connection.address
        MediaProbe.check(link, settings: configuration.mediaCheck) { [weak self] verdict in
            self?.mediaCheckFinished(id, verdict: verdict, started: started, address: address)
        }
    }

    /// On the service thread: a check's answer, posted by `mediaCheckFinished`.
    func applyMediaCheck(_ id: UInt64, verdict: MediaCheck.Verdict, started: MonotonicInstant, address: String) {
        mediaChecksInFlight -= 1
        if let count = mediaChecksByAddress[address] { mediaChecksByAddress[address] = count > 1 ? count - 1 : nil }
        metrics.mediaChecks[verdict.label, default: 0] += 1
        metrics.mediaCheckTime.observe(seconds: Double((ServerClock.monotonic() - started).microseconds) / 1e6)
        guard let connection = connections[id], var pending = connection.mediaCheck else { return }
        connection.mediaCheck = nil
        let command: CommandName? = if case .command(let command) = pending.input { command.name } else { nil }
        switch verdict {
        case .media:
            toRoom(pending.input, from: connection)
        case .mediaWithoutSeeking(let why):
            toRoom(pending.input, from: connection)
            send(.notice(Notice(text: "that link is shared, but seeking in it will not work: \(why)", cause: nil, by: nil)), to: connection)
        case .unchecked(let why):
            logger.info("link not checked", metadata: ["room": "\(connection.room.map { "\($0)" } ?? "-")", "why": "\(why)"])
            toRoom(pending.input, from: connection)
            send(.notice(Notice(text: "that link could not be checked (\(why)); shared anyway: if it does not play, it is not a video file",
                                cause: nil, by: nil)), to: connection)
        case .notMedia(let why):
            logger.info("link refused", metadata: ["room": "\(connection.room.map { "\($0)" } ?? "-")", "why": "\(why)"])
            send(.error(CommandError(.notMedia, command: command, message: "/\(command?.rawValue ?? "watch"): \(why)")), to: connection)
        }
        // The lines that waited, in order, until one of them starts another check.
        while connection.mediaCheck == nil, !pending.held.isEmpty {
            deliver(pending.held.removeFirst(), on: connection)
        }
        if !pending.held.isEmpty { connection.mediaCheck?.held.insert(contentsOf: pending.held, at: 0) }
    }
}
