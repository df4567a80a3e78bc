import CowatchConnection
import CowatchCore
import CowatchTime
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
    }

    /// The link to check before `input` reaches the room, if any. A provider's
    /// video (`MediaSource`) is known by its form: its page is not a media file,
    /// and its provider's player on each page plays it, so it is not fetched.
    func linkToCheck(_ input: InputLine) -> String? {
        guard configuration.mediaCheck.enabled, case .command(let command) = input else { return nil }
        guard let url = Self.sharedLink(command), MediaSource.classify(url) == .accepted(.file) else { return nil }
        let text = url.text
        guard text.hasPrefix("http://") || text.hasPrefix("https://") else { return nil }
        return text
    }

    /// One parsed line from a connection: held behind a check in flight, the start
    /// of a check, or handed to the room.
    func deliver(_ parsed: Result<InputLine, CommandError>, on connection: Connection) {
        if case .checking = connection.route {
            hold(.parsed(parsed), on: connection)
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
        return entry.room.wouldChange(input, from: member, now: eventTime.server)
    }

    private func toRoom(_ input: InputLine, from connection: Connection) {
        guard let name = connection.room, let member = connection.member, let entry = rooms[name],
              entry.connections[member] === connection, connection.state.isOpen else { return }
        if isHeld(name), entry.room.wouldChangeOrRecord(input, from: member, now: eventTime.server) {
            cluster?.linesRefusedWhileHeld += 1
            let command: CommandName? = if case .command(let command) = input { command.name } else { nil }
            send(.error(CommandError(.unavailable, command: command, message:
                "the database is out of reach, so the room cannot change until it is back; the line was not applied, send it again then")),
                 to: connection)
            return
        }
        run(entry.room.receive(input, from: member, now: eventTime.server), in: entry)
    }

    private func startCheck(_ link: String, input: InputLine, on connection: Connection) {
        // One address's checks take at most a few of the server's places, so that
        // a stranger with a slow link cannot leave other rooms' links unchecked.
        switch state.linkCheckOffered(from: connection.address) {
        case .addressBusy:
            metrics.mediaChecks["address-busy", default: 0] += 1
            let command: CommandName? = if case .command(let command) = input { command.name } else { nil }
            send(.error(CommandError(.rateLimited, command: command, message:
                "/\(command?.rawValue ?? "watch"): links from your address are already being checked; send it again once they are done")),
                 to: connection)
            return
        case .serverBusy:
            metrics.mediaChecks["busy", default: 0] += 1
            decide(input, verdict: .unchecked("the server is checking many others"), on: connection)
            return
        case .granted:
            break
        }
        tables.routed(connection, .checking(PendingMediaCheck(input: input, address: connection.address)))
        emit(.checkMedia(link, connection: connection.id, address: connection.address))
    }

    /// Carries out what `LinkDecision` makes of a checked (or unchecked) link.
    private func decide(_ input: InputLine, verdict: MediaCheck.Verdict, on connection: Connection) {
        guard case .command(let command) = input, let link = Self.sharedLink(command) else {
            toRoom(input, from: connection)
            return
        }
        // Another item is playing that this link would replace (the same item, by
        // any link to it, is only renamed).
        let session = connection.room.flatMap { rooms[$0]?.room.state.session }
        let identifier = (MediaSource.classify(link).source ?? .file).identifier(for: link)
        let replacesItem = session?.isActive == true && session?.activity.identifier != identifier
        switch LinkDecision.after(verdict, link: link, command: command.name, replacesItem: replacesItem) {
        case .share:
            toRoom(input, from: connection)
        case .shareWithNotice(let text):
            toRoom(input, from: connection)
            send(.notice(Notice(text: text, cause: .unchecked, by: nil)), to: connection)
        case .refuse(let code, let message):
            send(.error(CommandError(code, command: command.name, message: message)), to: connection)
        }
    }

    static func sharedLink(_ command: SlashCommand) -> MediaURL? {
        switch command {
        case .watch(let link, _): link
        case .queue(let link, _): link
        default: nil
        }
    }

    /// On the service thread: a check's answer, posted by `mediaCheckFinished`.
    func applyMediaCheck(_ id: UInt64, verdict: MediaCheck.Verdict, started: MonotonicInstant, address: String) {
        state.linkCheckFinished(for: address)
        metrics.mediaChecks[verdict.label, default: 0] += 1
        metrics.mediaCheckTime.observe(seconds: Double((eventTime.monotonic - started).microseconds) / 1e6)
        guard let connection = connections[id] ?? carried[id], case .checking(let pending) = connection.route else { return }
        tables.routed(connection, .local)
        switch verdict {
        case .media, .mediaWithoutSeeking: break
        case .unchecked(let why):
            logger.info("link not checked", metadata: ["room": "\(connection.room.map { "\($0)" } ?? "-")", "why": "\(why)"])
        case .notMedia(let why):
            logger.info("link refused", metadata: ["room": "\(connection.room.map { "\($0)" } ?? "-")", "why": "\(why)"])
        }
        decide(pending.input, verdict: verdict, on: connection)
        // The lines that waited, in order, until one of them starts another check.
        releaseHeld(connection)
    }
}
