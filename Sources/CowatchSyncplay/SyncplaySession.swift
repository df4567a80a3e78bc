import CowatchCore
import CowatchTime
import Foundation
import SlashCommands

/// One Syncplay client, as the room sees it: a member of the room whose player is
/// theirs. It reads the client's lines (Syncplay's protocol, `docs/syncplay.md`)
/// and the room's events on the member's own connection, and decides what each
/// side is told: the client's pause, play, seek, chat, readiness, file and
/// playlist become the room's commands, with the member's role; the room's
/// states, chat, people and refusals become Syncplay's messages. Pure: time and
/// inputs in, actions out (`SyncplayFront` carries them out), so every rule is
/// tested without a socket.
public struct SyncplaySession {
    public struct Settings: Sendable {
        /// Whether a TLS upgrade (`TLS startTLS`) is offered: a certificate is configured.
        public var tlsAvailable = false
        /// The message of the day, shown by the client on joining.
        public var motd = ""
        /// A client that has not said Hello by then is let go.
        public var helloTimeout = MonotonicDuration.seconds(10)
        /// A client that sends nothing for this long is gone (it answers every `State`,
        /// sent each `stateInterval`; Syncplay's own server waits 12.5 s).
        public var idleTimeout = MonotonicDuration.seconds(30)
        /// How often the room's state is sent, as Syncplay's server does (`SERVER_STATE_INTERVAL`).
        public var stateInterval = MonotonicDuration.seconds(1)
        /// Lines a client may send per second on average, and in a burst.
        public var linesPerSecond = 20.0
        public var lineBurst = 60.0
        /// Entries of a shared playlist read at most (Syncplay's `PLAYLIST_MAX_ITEMS`).
        public var maximumPlaylistEntries = 250
        /// Links one playlist change adds to the room's queue at most (the room
        /// takes 40 commands in a burst).
        public var maximumLinksAdded = 10
        /// How often the member's connection to the room is opened again after an
        /// outage of the node (a room that moved, a node draining) before the client is told.
        public var maximumReconnects = 5

        public init() {}
    }

    /// The instant of an event on both clocks: the monotonic one for timeouts, the
    /// server's for positions (the room's anchors are on it).
    public struct Now: Sendable, Hashable {
        public var monotonic: MonotonicInstant
        public var server: ServerInstant

        public init(monotonic: MonotonicInstant, server: ServerInstant) {
            self.monotonic = monotonic
            self.server = server
        }
    }

    public enum Event: Sendable {
        /// One line from the client, its line end taken off.
        case line(String)
        /// The client sent a line longer than the front takes.
        case lineTooLong
        /// The client's connection is gone.
        case clientGone
        /// The state interval passed.
        case tick
        /// A timer the session asked for.
        case timer(Timer)
        /// The member's connection `link` to the room opened, brought an event, or closed.
        case memberOpened(link: Int)
        case memberReceived(link: Int, RoomEvent)
        case memberClosed(link: Int, code: UInt16?, reason: String)
    }

    public enum Timer: Hashable, Sendable {
        /// The room's coordinated start of state `seq`: the client is told to play then.
        case start(seq: Int64)
    }

    /// How the member's connection to the room is opened.
    public struct MemberLink: Hashable, Sendable {
        public var link: Int
        public var room: RoomName
        public var name: String
        public var resume: String?
        public var owner: String?
        public var password: String?
        /// How the member's program is shown to others: Syncplay and its version.
        public var software: String
    }

    public enum Action: Hashable, Sendable {
        /// One message to the client, as a line.
        case write(SyncplayJSON)
        /// After what is written so far, the connection turns to TLS (server side).
        case startTLS
        /// After what is written so far, the connection closes.
        case close
        case openMember(MemberLink)
        /// A line for the room, on the member's connection.
        case sendRoom(String)
        /// Close the member's connection; `leaving`: with 1000, so that the member is gone at once.
        case closeMember(leaving: Bool)
        case schedule(Timer, after: MonotonicDuration)
        case log(String, [String: String])
    }

    enum Phase: Hashable {
        /// Before Hello: a TLS upgrade may come first.
        case greeting
        /// Hello read; the member's connection is opening.
        case joining
        /// Welcomed by the room.
        case inRoom
        case closed
    }

    let settings: Settings
    var phase = Phase.greeting
    let openedAt: MonotonicInstant
    var lastHeard: MonotonicInstant
    var tlsStarted = false
    /// Lines the client may still send now (a token bucket), and when it was filled.
    var lineTokens: Double
    var tokensAt: MonotonicInstant

    // The client, as its Hello and Set said.
    var askedName = ""
    var clientVersion = "1.2.255"
    var clientFeatures: SyncplayJSON = [:]
    var password: String?
    /// Its own readiness (`Set ready`): nil until it says.
    var ready: Bool?
    /// Its file (`Set file`): name, size and duration, each maybe hashed or left out.
    var file: SyncplayJSON?
    /// Its last report: position, paused, and when the report came.
    var reported: (position: Double, paused: Bool, at: ServerInstant)?

    // The member's connection to the room.
    var link = 0
    var room: RoomName?
    var memberID: MemberID?
    var shownName = ""
    var resume: String?
    var ownerKey: String?
    var reconnects = 0
    var participants: [Participant] = []
    var state: RoomState?
    /// The last playlist told to the client, so that it is told again only when it changes.
    var toldPlaylist: [String]?
    /// The seq this member last said `/ready` for, and the own-copy item it last answered `/have` for.
    var readySent: Int64 = -1
    var haveSent: (item: String, yes: Bool)?
    /// Told once per connection: that the shared playlist takes links.
    var toldAboutFiles = false
    /// The owner key it came back with (`controllerAuth`), until the room answers.
    var claimedOwnership: String?

    // Syncplay's ping and "ignoring on the fly" bookkeeping (`protocols.py`).
    /// Forced states sent and not yet acknowledged: the client's playstate is not read meanwhile.
    var serverIgnoring = 0
    /// The client's own counter of changes, echoed once in the next state.
    var clientIgnoring = 0
    var clientLatency: (value: Double, arrived: ServerInstant)?
    var roundTrip = 0.0

    // What the room's clock does for a Syncplay player (docs/syncplay.md, "Timing").
    /// The coordinated start told early (by `startLead`): from then on the client is shown playing.
    var startSent: Int64?
    /// A start whose lateness the client's next report measures, from this instant on.
    var lagSample: (seq: Int64, from: ServerInstant)?
    /// How late the client's player left its starts, seconds, the latest first (at most `lagSamples`).
    var startLags: [Double] = []
    /// The seq whose held position the client was last put back to.
    var correctedSeq: Int64 = -1
    /// The client's clock against the server's, from its send times.
    var clientClock = ClientClock()

    public init(settings: Settings, now: MonotonicInstant) {
        self.settings = settings
        openedAt = now
        lastHeard = now
        lineTokens = settings.lineBurst
        tokensAt = now
    }

    /// Whether the session is over (its connection closes after what is written).
    public var isClosed: Bool { phase == .closed }

    public mutating func handle(_ event: Event, now: Now) -> [Action] {
        guard phase != .closed else { return [] }
        switch event {
        case .line(let line):
            lastHeard = now.monotonic
            guard spendLine(now: now.monotonic) else {
                return drop("too many messages: at most \(Int(settings.linesPerSecond)) a second")
            }
            return received(line, now: now)
        case .lineTooLong:
            return drop("a line longer than this server takes")
        case .clientGone:
            phase = .closed
            return memberID != nil || link > 0 ? [.closeMember(leaving: true)] : []
        case .tick:
            return tick(now: now)
        case .timer(let timer):
            return fired(timer, now: now)
        case .memberOpened:
            // Nothing to do before the room's welcome.
            return []
        case .memberReceived(let number, let roomEvent):
            guard number == link else { return [] }
            return roomSaid(roomEvent, now: now)
        case .memberClosed(let number, let code, let reason):
            guard number == link else { return [] }
            return memberClosed(code: code, reason: reason, now: now)
        }
    }

    // MARK: The client's lines

    private mutating func spendLine(now: MonotonicInstant) -> Bool {
        let elapsed = Double((now - tokensAt).microseconds) / 1e6
        tokensAt = now
        lineTokens = min(settings.lineBurst, lineTokens + elapsed * settings.linesPerSecond)
        guard lineTokens >= 1 else { return false }
        lineTokens -= 1
        return true
    }

    private mutating func received(_ line: String, now: Now) -> [Action] {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return [] }
        let message: SyncplayJSON
        do {
            message = try SyncplayJSON.parse(trimmed)
        } catch {
            // Syncplay's own server drops a client for this; a client of ours
            // that sent one bad line is told and carries on.
            return [.write(Self.error("not a JSON message: \(error)"))]
        }
        guard let members = message.members else {
            return [.write(Self.error("a message is a JSON object: {\"Hello\": {...}}, {\"State\": {...}}..."))]
        }
        var actions: [Action] = []
        for key in members.keys.sorted(by: Self.messageOrder) {
            guard phase != .closed, let body = members[key] else { break }
            actions += handle(message: key, body, now: now)
        }
        return actions
    }

    /// Hello before everything else in one line, as Syncplay reads them in order of its keys.
    private static func messageOrder(_ a: String, _ b: String) -> Bool {
        let first = ["TLS", "Hello"]
        let rankA = first.firstIndex(of: a) ?? first.count, rankB = first.firstIndex(of: b) ?? first.count
        return rankA != rankB ? rankA < rankB : a < b
    }

    private mutating func handle(message key: String, _ body: SyncplayJSON, now: Now) -> [Action] {
        switch key {
        case "TLS":
            return tls(body)
        case "Hello":
            return hello(body, now: now)
        case "Error":
            // The client gives up on us: it closes, and so do we.
            phase = .closed
            return [.close] + (link > 0 ? [.closeMember(leaving: true)] : [])
        default:
            break
        }
        guard phase == .inRoom || phase == .joining else {
            guard phase == .greeting else { return [] }
            return drop("say Hello first: {\"Hello\": {\"username\": ..., \"room\": {\"name\": ...}, \"version\": ...}}")
        }
        switch key {
        case "State": return clientState(body, now: now)
        case "Set": return set(body, now: now)
        case "Chat": return chat(body)
        case "List": return phase == .inRoom ? [.write(list())] : []
        default: return [.write(Self.error("unknown message \(Self.excerpt(key)): this server reads Hello, Set, State, List, Chat, TLS and Error"))]
        }
    }

    private mutating func tls(_ body: SyncplayJSON) -> [Action] {
        guard body["startTLS"]?.string == "send" else { return [] }
        guard phase == .greeting, !tlsStarted, settings.tlsAvailable else {
            return [.write(["TLS": ["startTLS": "false"]])]
        }
        tlsStarted = true
        return [.write(["TLS": ["startTLS": "true"]]), .startTLS]
    }

    private mutating func hello(_ body: SyncplayJSON, now: Now) -> [Action] {
        guard phase == .greeting else { return [.write(Self.error("Hello was already said"))] }
        guard let name = body["username"]?.string?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty,
              let roomText = body["room"]?["name"]?.string?.trimmingCharacters(in: .whitespacesAndNewlines), !roomText.isEmpty,
              body["version"]?.string != nil || body["realversion"]?.string != nil else {
            return drop("Hello needs a username, a room and a version")
        }
        guard let room = Self.roomName(roomText) else {
            return drop("\"\(Self.excerpt(roomText))\" is not a room here: a room name is 1 to 64 characters of A-Z a-z 0-9 . _ - (a managed room's +NAME:CODE is the room NAME)")
        }
        askedName = name
        clientVersion = body["realversion"]?.string ?? body["version"]?.string ?? clientVersion
        clientFeatures = body["features"] ?? [:]
        password = body["password"]?.string
        phase = .joining
        return open(room, resume: nil, owner: nil, now: now)
    }

    mutating func open(_ room: RoomName, resume: String?, owner: String?, now: Now) -> [Action] {
        link += 1
        self.room = room
        return [.openMember(MemberLink(link: link, room: room, name: memberName, resume: resume, owner: owner,
                                       password: password, software: "Syncplay \(clientVersion.prefix(20))"))]
    }

    /// The name asked for, as the room takes names: its spaces made single, cut to the room's 32 characters.
    var memberName: String {
        let words = askedName.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        return String(words.prefix(32))
    }

    /// Syncplay's room, as a Cowatch room: a managed room's `+NAME:CODE` is NAME
    /// (the room's hosts and owner key say who controls it, not the name).
    static func roomName(_ text: String) -> RoomName? {
        var name = Substring(text)
        if name.hasPrefix("+") {
            name = name.dropFirst()
            if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        }
        return RoomName(String(name))
    }

    // MARK: Their player's state

    private mutating func clientState(_ body: SyncplayJSON, now: Now) -> [Action] {
        // Its client counts the changes its person made to the player, and sends the
        // count (`ignoringOnTheFly.client`) until we echo it.
        var ownChange = false
        if let ignoring = body["ignoringOnTheFly"] {
            if let server = ignoring["server"]?.number, Int(server) == serverIgnoring { serverIgnoring = 0 }
            if let client = ignoring["client"]?.number {
                clientIgnoring = Int(client)
                ownChange = client > 0
            }
        }
        var measuredAge: Double?
        if let ping = body["ping"] {
            let sent = ping["latencyCalculation"]?.number
            if let sent {
                let measured = Self.seconds(now.server) - sent
                if measured >= 0, measured < 60 { roundTrip = measured }
            }
            if let value = ping["clientLatencyCalculation"]?.number {
                clientLatency = (value, now.server)
                measuredAge = clientClock.age(sentAt: value, echoing: sent, arrived: Self.seconds(now.server))
            }
        }
        guard let play = body["playstate"], let position = play["position"]?.number, let paused = play["paused"]?.bool
        else { return [] }
        let doSeek = play["doSeek"]?.bool ?? false
        // Its position now: when it sent this, on its clock read against ours;
        // without its send time, half the round trip ago, as Syncplay's server reckons it.
        let age = measuredAge ?? roundTrip / 2
        let reportedPosition = paused ? position : position + age
        let before = reported
        reported = (max(0, reportedPosition), paused, now.server)
        // A report sent before our last forced state reached it says nothing new,
        // unless it carries a change the person made meanwhile: Syncplay's server
        // drops that too, and its client then puts the player back as the forced
        // state says, so a play pressed just as the room corrected a held player
        // would be lost.
        guard serverIgnoring == 0 || ownChange, phase == .inRoom, let state else { return [] }
        var actions: [Action] = measureStart(state, position: reportedPosition, paused: paused, now: now)
            + keepHeld(state, position: reportedPosition, paused: paused, doSeek: doSeek, now: now)
        guard serverIgnoring == 0 || ownChange else { return actions }
        let roomPaused = shownPaused(state, now: now.server)
        if doSeek {
            actions.append(.sendRoom("/seek \(Self.clock(max(0, reportedPosition)))"))
        }
        if paused != roomPaused, before?.paused != paused || doSeek || before == nil {
            // A change of its own: the room decides, with the member's rights.
            actions.append(.sendRoom(paused ? "/pause" : "/play"))
        }
        return actions + readiness(now: now)
    }

    /// Whether a Syncplay player shows this playback paused: anything but playing,
    /// and a coordinated start until its instant.
    static func clientPaused(_ playback: Playback, now: ServerInstant) -> Bool {
        playback.status != .playing || now < playback.at
    }

    /// The same, for this client: a start it was told of early is playing already.
    func shownPaused(_ state: RoomState, now: ServerInstant) -> Bool {
        startSent == state.seq ? state.playback.status != .playing : Self.clientPaused(state.playback, now: now)
    }

    // MARK: Set

    private mutating func set(_ body: SyncplayJSON, now: Now) -> [Action] {
        guard let members = body.members else { return [.write(Self.error("Set takes an object"))] }
        var actions: [Action] = []
        for key in members.keys.sorted() {
            guard let value = members[key] else { continue }
            switch key {
            case "room":
                actions += switchRoom(value, now: now)
            case "file":
                file = value
                actions += ownCopyAnswer()
            case "ready":
                if let isReady = value["isReady"]?.bool {
                    // Not ready counts when the person said so; a client says it by
                    // itself on connecting (Syncplay's readyAtStart), which is no one's word.
                    let manual = value["manuallyInitiated"]?.bool ?? true
                    ready = isReady ? true : manual ? false : nil
                    // Its client shows its own readiness as the server tells it back.
                    actions.append(.write(["Set": ["ready": ["username": .string(shownName), "isReady": .bool(isReady),
                                                             "manuallyInitiated": value["manuallyInitiated"] ?? true]]]))
                    actions += readiness(now: now)
                }
            case "controllerAuth":
                actions += controllerAuth(value, now: now)
            case "playlistChange":
                actions += playlistChange(value["files"]?.elements ?? [])
            case "playlistIndex":
                if let index = value["index"]?.number { actions += playlistIndex(Int(index)) }
            case "features":
                clientFeatures = value
            default:
                actions.append(.write(Self.error("Set \(Self.excerpt(key)) is not something this server sets")))
            }
        }
        return actions
    }

    private mutating func switchRoom(_ value: SyncplayJSON, now: Now) -> [Action] {
        guard let text = value["name"]?.string?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return [] }
        guard let target = Self.roomName(text) else {
            return [.write(Self.error("\"\(Self.excerpt(text))\" is not a room here: a room name is 1 to 64 characters of A-Z a-z 0-9 . _ -"))]
                + (room.map { [.write(["Set": ["room": ["name": .string($0.rawValue)]]])] } ?? [])
        }
        if target == room {
            // The same room (a managed room's name for it): the client is told where it is.
            return [.write(["Set": ["room": ["name": .string(target.rawValue)]]])] + stateActions(forced: true, doSeek: true, now: now)
        }
        if let given = value["password"]?.string { password = given }
        // Leaving one room for another: the member goes, a new one arrives there.
        var actions: [Action] = [.closeMember(leaving: true)]
        memberID = nil
        resume = nil
        ownerKey = nil
        participants = []
        state = nil
        toldPlaylist = nil
        readySent = -1
        haveSent = nil
        serverIgnoring = 0
        phase = .joining
        actions += open(target, resume: nil, owner: nil, now: now)
        return actions
    }

    /// A controller password: Syncplay's managed rooms are the room's owner and
    /// hosts. The password that controls a room is its owner key (letters and
    /// digits as Syncplay writes them, in upper case).
    private mutating func controllerAuth(_ value: SyncplayJSON, now: Now) -> [Action] {
        guard phase == .inRoom, let room else { return [] }
        let given = (value["password"]?.string ?? "").lowercased().filter { $0.isHexDigit }
        let asked = value["room"]?.string.flatMap(Self.roomName)
        if let asked, asked != room {
            return [.write(["Set": ["controllerAuth": ["user": .string(shownName), "room": .string(asked.rawValue), "success": false]]])]
        }
        if let ownerKey {
            if given == ownerKey {
                return [.write(["Set": ["controllerAuth": ["user": .string(shownName), "room": .string(room.rawValue), "success": true]]])]
            }
            // It holds the key, and asks for a managed room with a password of
            // Syncplay's making (`c`): the room's password is its owner key.
            return [.write(["Set": ["newControlledRoom": ["roomName": .string(room.rawValue), "password": .string(ownerKey.uppercased())]]])]
        }
        guard given.count == 64 else {
            // Syncplay's `c` (create a managed room) sends a password of its own making.
            return [.write(["Set": ["controllerAuth": ["user": .string(shownName), "room": .string(room.rawValue), "success": false]]]),
                    notice("The room \(room.rawValue) already has an owner. Its owner key, given with /a KEY (Syncplay's \"identify as room operator\"), makes you its owner; a host can also make you one (/op).")]
        }
        // Come back with the key: the room makes the holder of the right one its owner.
        claimedOwnership = given
        return open(room, resume: resume, owner: given, now: now)
    }

    // MARK: The shared playlist

    private mutating func playlistChange(_ entries: [SyncplayJSON]) -> [Action] {
        guard phase == .inRoom, let state else { return [] }
        let files = entries.prefix(settings.maximumPlaylistEntries).compactMap(\.string)
        let known = Set(Self.playlist(state))
        var actions: [Action] = []
        var hasCurrent = state.session?.isActive == true
        var skippedFiles: [String] = []
        var added = 0
        for entry in files where !known.contains(entry) {
            guard Self.isLink(entry) else {
                skippedFiles.append(entry)
                continue
            }
            // A few at a time, within the room's own burst of commands; the rest
            // is shown not taken, as the room's playlist comes back without it.
            guard added < settings.maximumLinksAdded else { break }
            added += 1
            actions.append(.sendRoom(hasCurrent ? "/queue \(entry)" : "/watch \(entry)"))
            hasCurrent = true
        }
        // Its client adds the file it plays to an empty list by itself: that one
        // needs no words when it is the room's own copy.
        if let copy = state.session?.activity.source.ownCopy, Self.matches(file, copy) {
            skippedFiles.removeAll { $0.split(separator: "/").last.map(String.init) == file?["name"]?.string }
        }
        if !skippedFiles.isEmpty, !toldAboutFiles {
            toldAboutFiles = true
            actions.append(notice("This room's shared playlist takes links (http:// or https://). A file of your own is shared with cowatch watch ROOM FILE --share or from the room's page; it plays here for everyone who has it."))
        }
        // What it did not add (files, removals) is put back as the room has it.
        toldPlaylist = nil
        return actions + playlistActions()
    }

    private mutating func playlistIndex(_ index: Int) -> [Action] {
        guard phase == .inRoom, let state else { return [] }
        let current = state.session?.isActive == true ? 1 : 0
        let queued = index - current + 1
        guard index >= current, queued >= 1, queued <= state.queue.count else {
            toldPlaylist = nil
            return playlistActions()
        }
        return (queued == 1 ? [] : [.sendRoom("/move \(queued) 1")]) + [.sendRoom("/next")]
    }

    static func isLink(_ entry: String) -> Bool {
        let lower = entry.lowercased()
        return (lower.hasPrefix("http://") || lower.hasPrefix("https://")) && !entry.contains(" ") && entry.utf8.count <= 2048
    }

    /// The room's current item, then its queue, as names a Syncplay client looks for:
    /// a link is itself, an own copy its title.
    static func playlist(_ state: RoomState) -> [String] {
        var names: [String] = []
        if let activity = state.session?.activity, state.session?.isActive == true {
            names.append(activity.url?.text ?? activity.title)
        }
        return names + state.queue.map(\.url.text)
    }

    mutating func playlistActions() -> [Action] {
        guard let state else { return [] }
        let names = Self.playlist(state)
        guard names != toldPlaylist else { return [] }
        toldPlaylist = names
        let setBy: SyncplayJSON = setByName(state.playback).map { .string($0) } ?? .null
        // The index always follows, null for an empty list: a client loads the
        // file it was started with only once it has had the room's first index.
        return [.write(["Set": ["playlistChange": ["user": setBy, "files": .array(names.map { .string($0) })]]]),
                .write(["Set": ["playlistIndex": ["user": setBy, "index": names.isEmpty ? .null : 0]]])]
    }

    // MARK: Chat

    private mutating func chat(_ body: SyncplayJSON) -> [Action] {
        guard phase == .inRoom, let text = body.string ?? body["message"]?.string else { return [] }
        let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).joined(separator: " ").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !line.isEmpty else { return [] }
        // A chat line is chat: one starting with "/" is written "//" (docs/protocol.md).
        return [.sendRoom(line.hasPrefix("/") ? "/" + line : line)]
    }

    // MARK: Time passing

    private mutating func tick(now: Now) -> [Action] {
        switch phase {
        case .greeting where now.monotonic - openedAt > settings.helloTimeout:
            return drop("no Hello within \(Int(settings.helloTimeout.seconds)) seconds")
        case .inRoom, .joining:
            if now.monotonic - lastHeard > settings.idleTimeout {
                phase = .closed
                return [.log("syncplay client silent, let go", ["seconds": "\(Int(settings.idleTimeout.seconds))"]),
                        .close, .closeMember(leaving: true)]
            }
            return phase == .inRoom ? stateActions(forced: false, doSeek: false, now: now) : []
        default:
            return []
        }
    }

    private mutating func fired(_ timer: Timer, now: Now) -> [Action] {
        switch timer {
        case .start(let seq):
            guard phase == .inRoom, let state, state.seq == seq, state.playback.status == .playing else { return [] }
            startSent = seq
            // Its next report, once the player has had time to start, says how late it did.
            lagSample = (seq, state.playback.at.advanced(by: ServerInterval(milliseconds: Self.lagSampleAfterMilliseconds)))
            return stateActions(forced: true, doSeek: false, now: now)
        }
    }

    // MARK: Helpers

    mutating func drop(_ message: String) -> [Action] {
        let hadMember = link > 0 && phase != .closed
        phase = .closed
        return [.write(Self.error(message)), .close] + (hadMember ? [.closeMember(leaving: true)] : [])
    }

    static func error(_ message: String) -> SyncplayJSON {
        ["Error": ["message": .string(message)]]
    }

    /// Words from the room (or this server) for the person: Syncplay shows chat from "Cowatch".
    func notice(_ text: String) -> Action {
        .write(["Chat": ["username": .string(Self.noticeName), "message": .string(text)]])
    }

    static let noticeName = "Cowatch"

    static func excerpt(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }

    static func seconds(_ instant: ServerInstant) -> Double {
        Double(instant.milliseconds) / 1000
    }

    /// A position as the room's commands take it, to the millisecond.
    static func clock(_ seconds: Double) -> String {
        let millis = Int64((seconds * 1000).rounded())
        let whole = millis / 1000, fraction = millis % 1000
        let digits = String(fraction)
        return "\(whole)." + String(repeating: "0", count: 3 - digits.count) + digits
    }
}


/// A Syncplay client's clock against the server's, from the times in its
/// `State`: it stamps each with its own send time (`clientLatencyCalculation`)
/// and echoes the server's send time of the `State` it answers
/// (`latencyCalculation`). Its clock's offset lies between its send time minus
/// the arrival here and its send time minus the server's send it answers, and
/// the tightest of those bounds over the last exchanges pins it. The round trip
/// Syncplay itself uses for a message's age also holds the client's time
/// handling the message (mpv's answers, its 50 ms between commands to mpv),
/// which the offset leaves out.
struct ClientClock: Sendable {
    /// The bounds of each recent exchange, the newest last.
    private(set) var bounds: [(low: Double, high: Double)] = []
    static let exchanges = 30

    /// How long ago (seconds, server clock) the client sent a message it stamped
    /// `sentAt`, arriving at `arrived`, answering the server's of `echoing`; nil
    /// while the bounds say nothing sound.
    mutating func age(sentAt: Double, echoing: Double?, arrived: Double) -> Double? {
        if let echoing, echoing <= arrived, arrived - echoing < 60 {
            bounds.append((sentAt - arrived, sentAt - echoing))
            if bounds.count > Self.exchanges { bounds.removeFirst(bounds.count - Self.exchanges) }
        }
        guard let low = bounds.map(\.low).max(), let high = bounds.map(\.high).min(), low <= high else { return nil }
        let offset = (low + high) / 2
        let age = arrived - (sentAt - offset)
        return age >= 0 && age < 10 ? age : nil
    }
}
