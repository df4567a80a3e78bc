import CowatchCore
import CowatchTime
import SlashCommands

// The randomized test's and the room fuzzer's driver: it feeds a room steps
// (`RoomStep.swift`) through `RoomHost`, which carries out the room's actions as
// the gateway does, and checks the room's invariants (`RoomDriver+Invariants.swift`)
// after every input and on every event delivered.
//
// Deterministic: nothing here iterates a dictionary where the order could change a
// decision, so a sequence of steps always runs the same way.

/// A room driven as the gateway drives it, checking invariants after every input.
/// Slot i is the host's connection i.
public struct RoomDriver {
    public struct Slot {
        public var id: MemberID?
        public var token: String?
        public var connected = false
        /// Highest state seq received since the connection opened.
        public var lastSeq: Int64?
        /// A welcome was delivered and its state has not followed yet.
        public var awaitingState = false
    }

    public private(set) var host: RoomHost
    public private(set) var slots: [Slot]
    public internal(set) var violation: InvariantViolation?
    /// Invariants already reported by this run: still checked, but breaking them
    /// again does not stop the sequence, so the rest of the rules keep being exercised.
    public var tolerated: Set<String> = []
    /// When set, only this invariant stops the run (used while minimising).
    public var focus: String?
    /// When set, a line per input and per published state, for reports.
    public var trace: [String]?
    /// When set, every event an open connection received, in order.
    public var received: [RoomEvent]?

    var lastPublished: RoomState
    var statesBySeq: [Int64: RoomState] = [:]
    var publishedAt: [Int64: ServerInstant] = [:]
    var tokenNumber = 0
    var input = CurrentInput.start
    /// The current input published a start (a playing state with a new `at`).
    var startedDuringInput = false
    /// A member arrived or was renamed since names were last checked.
    var namesMayHaveChanged = false
    var eventNumber = 0
    /// Every `jsonEvery`-th frequent event (state, participant, notice, chat) is parsed
    /// back with JSONSerialization; every rarer event always is.
    let jsonEvery: Int

    static let roomName = RoomName("random-room")!

    public init(_ setup: RoomSetup, jsonEvery: Int = 1, startingAt milliseconds: Int64 = 1_700_000_000_000) {
        let now = ServerInstant(milliseconds: milliseconds)
        host = RoomHost(Room(name: Self.roomName, configuration: setup.configuration, now: now), now: now)
        self.slots = Array(repeating: Slot(), count: setup.slots)
        lastPublished = host.room.state
        statesBySeq[host.room.state.seq] = host.room.state
        publishedAt[host.room.state.seq] = now
        self.jsonEvery = max(1, jsonEvery)
    }

    public var room: Room { host.room }
    public var now: ServerInstant { host.now }
    public var connectedSlots: [Int] { slots.indices.filter { slots[$0].connected } }
    public var offlineSlots: [Int] { slots.indices.filter { !slots[$0].connected } }

    // MARK: Inputs

    public mutating func perform(_ step: RoomStep) {
        guard violation == nil else { return }
        switch step {
        case .connect(let slot, let name, let player, let join, let resume):
            guard slots.indices.contains(slot) else { return }
            connect(slot, name: name, player: player, join: join, resume: resume)
        case .message(let slot, let text):
            guard slots.indices.contains(slot) else { return }
            for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
                guard violation == nil, slots[slot].connected, let id = slots[slot].id else { return }
                say(resolve(raw), from: id, slot: slot)
            }
        case .disconnect(let slot):
            guard slots.indices.contains(slot), slots[slot].connected, let id = slots[slot].id else { return }
            input = .disconnect(slot: slot, id: id)
            noteInput()
            observe(host.close(slot))
            checkAfterInput()
        case .measure(let slot, let milliseconds):
            guard slots.indices.contains(slot), let id = slots[slot].id else { return }
            input = .measure(slot: slot, id: id, milliseconds: milliseconds)
            observe(host.roundTripMeasured(ServerInterval(milliseconds: milliseconds), for: id))
            checkAfterInput()
        case .advance(let milliseconds, let lateness):
            advance(by: milliseconds, lateness: lateness)
        case .refireRetiredTimer(let pick):
            guard !host.retired.isEmpty else { return }
            // Sorted, so the pick does not depend on the order the room cancelled them in.
            let candidates = host.retired.map { ($0, "\($0)") }.sorted { $0.1 < $1.1 }
            let timer = candidates[pick % candidates.count].0
            // Firing an armed timer early would be a gateway bug, not a race.
            guard !host.isArmed(timer) else { return }
            input = .staleTimer(timer, at: now.milliseconds)
            noteInput()
            observe(host.fireAgain(timer))
            checkAfterInput()
        case .ghostLine(let text):
            let ghost = slots.compactMap(\.id).first { room.member($0) == nil } ?? MemberID("m0")
            let line = resolve(text[...])
            input = .ghost(ghost, line)
            noteInput()
            let before = room.state
            let (parsed, outcome) = host.say(line, from: ghost)
            if parsed != nil, !outcome.actions.isEmpty || room.state != before {
                fail("a line from a forgotten member is ignored", "got \(outcome.actions.count) actions")
            }
            checkAfterInput()
        }
    }

    private mutating func connect(_ slot: Int, name: String?, player: Bool, join: Bool, resume: RoomStep.Resume) {
        if slots[slot].connected && resume != .own { return }
        tokenNumber += 1
        let token: String?
        switch resume {
        case .none: token = nil
        case .own: token = slots[slot].token
        case .garbage: token = "garbage-\(tokenNumber)"
        case .slot(let other): token = slots.indices.contains(other) ? slots[other].token : nil
        }
        if slots[slot].connected && token == nil { return }
        let request = ConnectRequest(name: name, player: player, join: join, resume: token,
                                     newToken: "token-\(tokenNumber)")
        input = .connect(slot: slot, name: name, player: player, join: join, resume: token, id: nil)
        noteInput()
        let (result, outcome) = host.open(slot, request)
        switch result {
        case .accepted(let id, let actions):
            // The host closed any other connection of this member (replaced).
            for other in slots.indices where other != slot && slots[other].connected && !host.isOpen(other) {
                goOffline(other)
            }
            slots[slot] = Slot(id: id, token: slots[slot].token, connected: true)
            input = .connect(slot: slot, name: name, player: player, join: join, resume: token, id: id)
            for action in actions {
                if case .send(.welcome(let welcome), let to) = action, to == id { slots[slot].token = welcome.resume }
                if case .broadcast(.state(let state), _) = action {
                    fail("a late joiner's arrival never moves the group", "connecting published \(Self.summary(state))")
                }
            }
            observe(outcome)
        case .refused(let error):
            let full = error.code == .roomFull
                && room.members.values.filter(\.connected).count >= room.configuration.maximumMembers
            let banned = error.code == .banned && room.protection.bans.contains { ban in ban.until.map { now < $0 } ?? true }
            let locked = error.code == .locked && room.state.policy.locked
            let asked = [.passwordRequired, .wrongPassword, .tooManyAttempts].contains(error.code) && room.protection.password != nil
            if !full && !banned && !locked && !asked {
                fail("only a full room, a ban or kick in force, a lock or a password refuses a connection",
                     "refused (\(error.code.rawValue)) with \(room.members.count) of \(room.configuration.maximumMembers) members, "
                        + "\(room.protection.bans.count) bans: \(error.message)")
            }
        }
        checkAfterInput()
    }

    private mutating func say(_ line: String, from id: MemberID, slot: Int) {
        input = .line(slot: slot, id: id, text: line)
        noteInput()
        let before = room.state
        let wasSuspended = room.member(id)?.isSuspended ?? false
        let (parsed, outcome) = host.say(line, from: id)
        observe(outcome)
        if case .command(let command)? = parsed {
            let published = outcome.actions.compactMap { action -> RoomState? in
                if case .broadcast(.state(let state), _) = action { state } else { nil }
            }
            if wasSuspended, [.play, .pause, .seek, .rate].contains(command.name),
               !published.isEmpty || room.state != before {
                fail("a suspended member's transport command changes nothing for the group",
                     "seq \(before.seq) -> \(room.state.seq), \(Self.summary(before.playback)) -> \(Self.summary(room.state.playback))")
            }
            if command == .join, !published.isEmpty {
                fail("a late joiner's arrival never moves the group", "/join published \(Self.summary(published[0]))")
            }
            checkLanding(command, by: id, before: before, published: published)
        }
        checkAfterInput()
    }

    private mutating func advance(by milliseconds: Int64, lateness: Int64) {
        let target = now.advanced(by: ServerInterval(milliseconds: milliseconds))
        var fired = 0
        while violation == nil,
              let (timer, due, outcome) = host.fireNextTimer(dueBy: target, lateness: ServerInterval(milliseconds: lateness)) {
            input = .timer(timer, due: due.milliseconds, at: now.milliseconds)
            noteInput()
            observe(outcome)
            checkAfterInput()
            fired += 1
            if fired > 10_000 {
                fail("timers do not re-arm themselves endlessly", "more than 10,000 timers fired in one clock advance")
            }
        }
        guard violation == nil else { return }
        host.setClock(target)
        input = .clock(now.milliseconds)
        checkAfterInput()
    }

    /// `{seq}`, `{seq-N}`, `{seq+N}`, `{name:K}`, `{NAME:K}`.
    func resolve(_ raw: Substring) -> String {
        guard raw.contains("{") else { return String(raw) }
        var out = ""
        var rest = raw
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            out += rest[rest.startIndex..<open]
            let token = rest[rest.index(after: open)..<close]
            out += placeholder(token) ?? String(rest[open...close])
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    private func placeholder(_ token: Substring) -> String? {
        if token == "seq" { return String(room.state.seq) }
        if token.hasPrefix("seq+"), let delta = Int64(token.dropFirst(4)) { return String(room.state.seq + delta) }
        if token.hasPrefix("seq-"), let delta = Int64(token.dropFirst(4)) { return String(room.state.seq - delta) }
        if token.lowercased().hasPrefix("name:"), let slot = Int(token.dropFirst(5)), slots.indices.contains(slot) {
            let name = slots[slot].id.flatMap { room.member($0)?.name.text } ?? "nobody"
            return token.hasPrefix("NAME") ? name.uppercased() : name
        }
        return nil
    }

    // MARK: What the host delivered

    /// Checks what one input did, action by action with the events each one
    /// delivered, then follows the host's connections: a slot whose connection
    /// the host closed (kicked, replaced) is offline.
    private mutating func observe(_ outcome: RoomHost.Outcome) {
        var deliveries = outcome.deliveries[...]
        for (index, action) in outcome.actions.enumerated() {
            guard violation == nil else { return }
            switch action {
            case .broadcast(let event, let except):
                if case .state(let state) = event { published(state, except: except) }
                checkEncodings(event)
            case .send(let event, _):
                checkEncodings(event)
            default:
                break
            }
            while let delivery = deliveries.first, delivery.action == index {
                deliveries.removeFirst()
                receive(delivery.event, slot: delivery.connection)
            }
        }
        for index in slots.indices where slots[index].connected && !host.isOpen(index) {
            goOffline(index)
        }
    }

    private mutating func goOffline(_ slot: Int) {
        slots[slot].connected = false
        slots[slot].lastSeq = nil
        slots[slot].awaitingState = false
    }

    private mutating func published(_ state: RoomState, except: MemberID?) {
        if trace != nil { note("  state \(Self.summary(state))") }
        if state.seq <= lastPublished.seq {
            fail("state seq strictly increasing room-wide", "broadcast seq \(state.seq) after \(lastPublished.seq)")
        }
        if let except, slots.contains(where: { $0.connected && $0.id == except }) {
            fail("no member misses a broadcast state while connected", "state \(state.seq) broadcast except connected \(except)")
        }
        if state.playback.status == .playing, state.playback.cause != .rate,
           lastPublished.playback.status != .playing || lastPublished.playback.at != state.playback.at {
            checkLead(state)
            startedDuringInput = true
        }
        lastPublished = state
        if let known = statesBySeq[state.seq] {
            if known != state {
                fail("a state with a given seq is identical for everyone",
                     "seq \(state.seq) broadcast as \(Self.summary(state)) but seen before as \(Self.summary(known))")
            }
        } else {
            statesBySeq[state.seq] = state
            publishedAt[state.seq] = now
        }
        check(state, publishedAt: publishedAt[state.seq] ?? now, context: "broadcast state")
    }

    private mutating func receive(_ event: RoomEvent, slot index: Int) {
        received?.append(event)
        switch event {
        case .state(let state):
            let who = slots[index].id.map(\.rawValue) ?? "?"
            if let last = slots[index].lastSeq, state.seq < last {
                fail("each member receives states in non-decreasing seq order",
                     "\(who) received seq \(state.seq) after seq \(last)")
            }
            slots[index].lastSeq = state.seq
            slots[index].awaitingState = false
            if let known = statesBySeq[state.seq] {
                if known != state {
                    fail("a state with a given seq is identical for everyone",
                         "\(who) was sent seq \(state.seq) as \(Self.summary(state)) but it was published as \(Self.summary(known))")
                }
            } else {
                statesBySeq[state.seq] = state
                publishedAt[state.seq] = now
                check(state, publishedAt: now, context: "state sent to \(who)")
            }
        case .participant(_, .renamed), .participant(_, .arrived):
            namesMayHaveChanged = true
        case .welcome(let welcome):
            namesMayHaveChanged = true
            slots[index].lastSeq = nil
            slots[index].awaitingState = true
            checkUnique(welcome.participants, context: "welcome to \(welcome.you.id)")
            if !welcome.participants.contains(where: { $0.id == welcome.you.id }) {
                fail("the welcome lists every member", "\(welcome.you.id) is not in its own welcome's participants")
            }
        default:
            break
        }
    }

}


/// What the driver is handling, described only when a report needs it.
enum CurrentInput: CustomStringConvertible {
    case start
    case line(slot: Int, id: MemberID, text: String)
    case connect(slot: Int, name: String?, player: Bool, join: Bool, resume: String?, id: MemberID?)
    case disconnect(slot: Int, id: MemberID)
    case measure(slot: Int, id: MemberID, milliseconds: Int64)
    case staleTimer(RoomTimer, at: Int64)
    case ghost(MemberID, String)
    case timer(RoomTimer, due: Int64, at: Int64)
    case clock(Int64)

    /// Whether the line is `/play now` as the parser reads it (any case, spaces or
    /// tabs), not as a text pattern that would miss `/play \t now`.
    var isPlayNow: Bool {
        guard case .line(_, _, let text) = self else { return false }
        return LineParser().parse(text) == .success(.command(.play(now: true)))
    }

    var description: String {
        switch self {
        case .start:
            return "(start)"
        case .line(let slot, let id, let text):
            return "s\(slot) (\(id)): \(RoomStep.quoted(text))"
        case .connect(let slot, let name, let player, let join, let resume, let id):
            let outcome = id.map { " -> \($0)" } ?? ""
            return "s\(slot) connects name=\(name.map(RoomStep.quoted) ?? "nil") player=\(player) join=\(join) resume=\(resume ?? "nil")\(outcome)"
        case .disconnect(let slot, let id):
            return "s\(slot) (\(id)) disconnects"
        case .measure(let slot, let id, let milliseconds):
            return "s\(slot) (\(id)) round trip \(milliseconds) ms"
        case .staleTimer(let timer, let at):
            return "stale timer \(timer) fires again at \(at)"
        case .ghost(let id, let line):
            return "forgotten \(id): \(RoomStep.quoted(line))"
        case .timer(let timer, let due, let at):
            return "timer \(timer) due \(due) fires at \(at)"
        case .clock(let now):
            return "clock now \(now)"
        }
    }
}
