import CowatchCore
import Foundation
import SlashCommands
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A randomized driver for `Room`: a seeded generator of member inputs, a gateway
// simulation that delivers the room's actions, and invariant checks after every
// step. Used by `RandomizedRoomTests`.
//
// Everything is deterministic for a given seed: the generator draws from its own
// SplitMix64, never from the system generator, and nothing here iterates a
// dictionary where the order could change a decision.

// MARK: - Random numbers

/// SplitMix64 (Steele, Lea and Flood): tiny, fast, and the same on every platform.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 0..<bound. The modulo bias is irrelevant for test input.
    mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next() % UInt64(bound))
    }

    mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.upperBound - range.lowerBound + 1)
    }

    mutating func int64(in range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / 9_007_199_254_740_992.0 < probability
    }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// An index into `weights`, chosen in proportion to the weights.
    mutating func weighted(_ weights: [Int]) -> Int {
        var roll = below(weights.reduce(0, +))
        for (index, weight) in weights.enumerated() {
            if roll < weight { return index }
            roll -= weight
        }
        return weights.count - 1
    }

    /// The seed of sequence `index` of a run started from `base`.
    static func derive(_ base: UInt64, _ index: Int) -> UInt64 {
        var generator = SplitMix64(seed: base ^ (UInt64(truncatingIfNeeded: index) &* 0xD1B5_4A32_D192_ED03))
        return generator.next()
    }
}

// MARK: - Steps

/// One input of a random session, symbolic so that a sequence can be replayed and
/// shortened: `{seq}`, `{seq-2}`, `{seq+1}`, `{name:3}` and `{NAME:3}` in a
/// message are resolved when the step runs (the room's current seq; slot 3's
/// current display name, as is or upper-cased).
enum RandomStep: Hashable, Sendable, CustomStringConvertible {
    enum Resume: Hashable, Sendable {
        /// No `resume` parameter: a new member.
        case none
        /// The token this slot was last welcomed with.
        case own
        /// A token the room never issued.
        case garbage
        /// The token another slot was welcomed with (a resume link opened in a
        /// second tab): that slot's connection is replaced, as the gateway does.
        case slot(Int)
    }

    /// A connection opens for a slot (one browser tab, say). Only a slot whose
    /// connection is closed connects, except with `.own`, which models the same
    /// page reconnecting before the server noticed the old connection dropped.
    case connect(slot: Int, name: String?, player: Bool, join: Bool, resume: Resume)
    /// One WebSocket message; several lines are separated by `\n`.
    case message(slot: Int, text: String)
    case disconnect(slot: Int)
    case measure(slot: Int, milliseconds: Int64)
    /// The clock moves on; timers that come due fire in time order, each `lateness`
    /// after its due instant (but never after the target).
    case advance(milliseconds: Int64, lateness: Int64)
    /// A timer that was cancelled or already fired fires (again): the gateway's
    /// cancel raced with the timer. The room must recognise it as stale.
    case refireRetiredTimer(pick: Int)
    /// A line arrives for a member the room no longer knows (it raced with a kick).
    case ghostLine(text: String)

    var description: String {
        switch self {
        case .connect(let slot, let name, let player, let join, let resume):
            var parts = ["s\(slot) connects"]
            parts.append(name.map { "name=\(Self.quoted($0))" } ?? "(no name)")
            if player { parts.append("player=1") }
            if !join { parts.append("join=0") }
            switch resume {
            case .none: break
            case .own: parts.append("resume=<its token>")
            case .garbage: parts.append("resume=<garbage>")
            case .slot(let other): parts.append("resume=<token of s\(other)>")
            }
            return parts.joined(separator: " ")
        case .message(let slot, let text):
            return "s\(slot) says \(Self.quoted(text))"
        case .disconnect(let slot):
            return "s\(slot) disconnects"
        case .measure(let slot, let milliseconds):
            return "s\(slot) round trip measured: \(milliseconds) ms"
        case .advance(let milliseconds, let lateness):
            return lateness == 0 ? "clock +\(milliseconds) ms" : "clock +\(milliseconds) ms (timers fire \(lateness) ms late)"
        case .refireRetiredTimer(let pick):
            return "a retired timer fires again (pick \(pick))"
        case .ghostLine(let text):
            return "a forgotten member says \(Self.quoted(text))"
        }
    }

    /// Swift-literal quoting, so a report can be pasted into a test.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
                    || scalar.properties.generalCategory == .format
                    || scalar.properties.generalCategory == .lineSeparator
                    || scalar.properties.generalCategory == .paragraphSeparator
                    || scalar.properties.generalCategory == .nonspacingMark {
                    out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

/// The room a sequence runs in: how many member slots, and the room's limits
/// (sometimes small, so full rooms, full queues and expired resume graces happen).
struct RandomSetup: Hashable, Sendable, CustomStringConvertible {
    var slots: Int
    var configuration: RoomConfiguration

    var description: String {
        "\(slots) slots, at most \(configuration.maximumMembers) members, queue of \(configuration.maximumQueueLength), "
            + "resume grace \(configuration.resumeGrace.milliseconds) ms"
    }
}

/// A broken invariant: which one, and what was seen.
struct InvariantViolation: Hashable, Sendable {
    /// A short stable name, used to tell violations apart when minimising.
    var invariant: String
    var detail: String
    /// The input being handled (resolved), e.g. `s2 (m3): /ready 17`.
    var input: String
}

// MARK: - Gateway simulation and invariants

/// A room driven as the gateway drives it, checking invariants after every input.
struct RoomDriver {
    struct Slot {
        var id: MemberID?
        var token: String?
        var connected = false
        /// Highest state seq received since the connection opened.
        var lastSeq: Int64?
        /// A welcome was delivered and its state has not followed yet.
        var awaitingState = false
    }

    let parser = LineParser()
    private(set) var room: Room
    private(set) var now: ServerInstant
    private(set) var slots: [Slot]
    /// Armed timers in the order they were scheduled (ties fire in that order).
    private(set) var timers: [(timer: RoomTimer, due: ServerInstant)] = []
    /// Every timer cancelled or fired so far.
    private(set) var retired: Set<RoomTimer> = []
    private(set) var violation: InvariantViolation?
    /// Invariants already reported by this run: still checked, but breaking them
    /// again does not stop the sequence, so the rest of the rules keep being exercised.
    var tolerated: Set<String> = []
    /// When set, only this invariant stops the run (used while minimising).
    var focus: String?
    /// When set, a line per input and per published state, for reports.
    var trace: [String]?

    private var lastPublished: RoomState
    private var statesBySeq: [Int64: RoomState] = [:]
    private var publishedAt: [Int64: ServerInstant] = [:]
    private var tokenNumber = 0
    private var input = CurrentInput.start
    /// The current input published a start (a playing state with a new `at`).
    private var startedDuringInput = false
    /// A member arrived or was renamed since names were last checked.
    private var namesMayHaveChanged = false
    private var eventNumber = 0
    /// Every `jsonEvery`-th frequent event (state, participant, notice, chat) is parsed
    /// back with JSONSerialization; every rarer event always is.
    private let jsonEvery: Int

    static let roomName = RoomName("random-room")!

    init(_ setup: RandomSetup, jsonEvery: Int = 1, startingAt milliseconds: Int64 = 1_700_000_000_000) {
        now = ServerInstant(milliseconds: milliseconds)
        room = Room(name: Self.roomName, configuration: setup.configuration, now: now)
        self.slots = Array(repeating: Slot(), count: setup.slots)
        lastPublished = room.state
        statesBySeq[room.state.seq] = room.state
        publishedAt[room.state.seq] = now
        self.jsonEvery = max(1, jsonEvery)
    }

    var connectedSlots: [Int] { slots.indices.filter { slots[$0].connected } }
    var offlineSlots: [Int] { slots.indices.filter { !slots[$0].connected } }

    // MARK: Inputs

    mutating func perform(_ step: RandomStep) {
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
            slots[slot].connected = false
            slots[slot].lastSeq = nil
            slots[slot].awaitingState = false
            deliver(room.disconnect(id, now: now))
            checkAfterInput()
        case .measure(let slot, let milliseconds):
            guard slots.indices.contains(slot), let id = slots[slot].id else { return }
            input = .measure(slot: slot, id: id, milliseconds: milliseconds)
            room.measured(roundTrip: ServerInterval(milliseconds: milliseconds), for: id)
            checkAfterInput()
        case .advance(let milliseconds, let lateness):
            advance(by: milliseconds, lateness: lateness)
        case .refireRetiredTimer(let pick):
            guard !retired.isEmpty else { return }
            // Sorted, so the pick does not depend on the order the room cancelled them in.
            let candidates = retired.map { ($0, "\($0)") }.sorted { $0.1 < $1.1 }
            let timer = candidates[pick % candidates.count].0
            // Firing an armed timer early would be a gateway bug, not a race.
            guard !timers.contains(where: { $0.timer == timer }) else { return }
            input = .staleTimer(timer, at: now.milliseconds)
            noteInput()
            deliver(room.timerFired(timer, now: now))
            checkAfterInput()
        case .ghostLine(let text):
            let ghost = slots.compactMap(\.id).first { room.member($0) == nil } ?? MemberID("m0")
            let line = resolve(text[...])
            input = .ghost(ghost, line)
            noteInput()
            let before = room.state
            if case .success(let parsed) = parser.parse(line) {
                let actions = room.receive(parsed, from: ghost, now: now)
                if !actions.isEmpty || room.state != before {
                    fail("a line from a forgotten member is ignored", "got \(actions.count) actions")
                }
            }
            checkAfterInput()
        }
    }

    private mutating func connect(_ slot: Int, name: String?, player: Bool, join: Bool, resume: RandomStep.Resume) {
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
        switch room.connect(request, now: now) {
        case .accepted(let id, let actions):
            // The gateway closes an older connection of the same member without
            // telling the room (it is replaced, not gone).
            for other in slots.indices where other != slot && slots[other].connected && slots[other].id == id {
                slots[other].connected = false
                slots[other].lastSeq = nil
                slots[other].awaitingState = false
            }
            slots[slot].id = id
            slots[slot].connected = true
            slots[slot].lastSeq = nil
            slots[slot].awaitingState = false
            input = .connect(slot: slot, name: name, player: player, join: join, resume: token, id: id)
            for action in actions {
                if case .send(.welcome(let welcome), let to) = action, to == id { slots[slot].token = welcome.resume }
                if case .broadcast(.state(let state), _) = action {
                    fail("a late joiner's arrival never moves the group", "connecting published \(Self.summary(state))")
                }
            }
            deliver(actions)
        case .refused(let error):
            if error.code != .roomFull || room.members.count < room.configuration.maximumMembers {
                fail("only a full room refuses a connection",
                     "refused (\(error.code.rawValue)) with \(room.members.count) of \(room.configuration.maximumMembers) members: \(error.message)")
            }
        }
        checkAfterInput()
    }

    private mutating func say(_ line: String, from id: MemberID, slot: Int) {
        input = .line(slot: slot, id: id, text: line)
        noteInput()
        let before = room.state
        let wasSuspended = room.member(id)?.isSuspended ?? false
        switch parser.parse(line) {
        case .success(let parsed):
            let actions = room.receive(parsed, from: id, now: now)
            deliver(actions)
            guard case .command(let command) = parsed else { break }
            let published = actions.compactMap { action -> RoomState? in
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
        case .failure(let error):
            deliver([.send(.error(error), to: id)])
        }
        checkAfterInput()
    }

    /// CONCEPTS rule 12 and the transport commands' meaning: the first state a
    /// command publishes lands where the command says, computed from the group's
    /// position when the command is handled.
    private mutating func checkLanding(_ command: SlashCommand, by id: MemberID, before: RoomState, published: [RoomState]) {
        guard let first = published.first, first.playback.by == id else { return }
        let groupPosition = before.playback.position(at: now)
        let expected: MediaTime
        switch command {
        case .seek(let time) where first.playback.cause == .seek:
            expected = time.resolved(from: groupPosition)
        case .resume(_, let time?) where first.playback.cause == .resume:
            expected = time.resolved(from: groupPosition)
        case .pause where first.playback.cause == .pause:
            expected = groupPosition
        case .rate where first.playback.cause == .rate && before.playback.status == .playing:
            // A rate change re-anchors without a jump.
            let after = first.playback.position(at: now)
            if abs(after.seconds - groupPosition.seconds) > 1e-6 {
                fail("a rate change keeps the group's position continuous",
                     "position at now \(groupPosition.seconds) before, \(after.seconds) after (\(Self.summary(first)))")
            }
            return
        default:
            return
        }
        if abs(first.playback.position.seconds - expected.seconds) > 1e-6 {
            fail("a transport command lands where it says",
                 "expected position \(expected.seconds) (group at \(groupPosition.seconds)), published \(Self.summary(first))")
        }
    }

    private mutating func advance(by milliseconds: Int64, lateness: Int64) {
        let target = now.advanced(by: ServerInterval(milliseconds: milliseconds))
        var fired = 0
        while violation == nil, let index = earliestTimer(dueBy: target) {
            let (timer, due) = timers.remove(at: index)
            retire(timer)
            now = Swift.min(target, Swift.max(now, due.advanced(by: ServerInterval(milliseconds: lateness))))
            input = .timer(timer, due: due.milliseconds, at: now.milliseconds)
            noteInput()
            deliver(room.timerFired(timer, now: now))
            checkAfterInput()
            fired += 1
            if fired > 10_000 {
                fail("timers do not re-arm themselves endlessly", "more than 10,000 timers fired in one clock advance")
            }
        }
        guard violation == nil else { return }
        now = target
        input = .clock(now.milliseconds)
        checkAfterInput()
    }

    private func earliestTimer(dueBy target: ServerInstant) -> Int? {
        var best: Int?
        for index in timers.indices where timers[index].due <= target {
            if let current = best, timers[current].due <= timers[index].due { continue }
            best = index
        }
        return best
    }

    private mutating func retire(_ timer: RoomTimer) {
        retired.insert(timer)
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

    // MARK: Delivery (the gateway)

    private mutating func deliver(_ actions: [RoomAction]) {
        // Matched case by case rather than with an exhaustive switch: persistence
        // actions are the store's business, and new ones must not break this test.
        for action in actions {
            guard violation == nil else { return }
            if case .broadcast(let event, let except) = action {
                if case .state(let state) = event { published(state, except: except) }
                checkEncodings(event)
                for index in slots.indices where slots[index].connected && slots[index].id != except {
                    receive(event, slot: index)
                }
            } else if case .send(let event, let id) = action {
                guard let index = slots.firstIndex(where: { $0.connected && $0.id == id }) else { continue }
                checkEncodings(event)
                receive(event, slot: index)
            } else if case .schedule(let timer, let due) = action {
                timers.removeAll { $0.timer == timer }
                timers.append((timer, due))
            } else if case .cancel(let timer) = action {
                if let index = timers.firstIndex(where: { $0.timer == timer }) {
                    timers.remove(at: index)
                    retire(timer)
                }
            } else if case .disconnect(let id, _) = action {
                if let index = slots.firstIndex(where: { $0.connected && $0.id == id }) {
                    slots[index].connected = false
                    slots[index].lastSeq = nil
                    slots[index].awaitingState = false
                }
                // The closed socket reports back, as it would in the gateway; the
                // room has already forgotten the member.
                deliver(room.disconnect(id, now: now))
            }
        }
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

    // MARK: Invariants

    private mutating func fail(_ invariant: String, _ detail: String) {
        guard violation == nil, !tolerated.contains(invariant), focus == nil || focus == invariant else { return }
        violation = InvariantViolation(invariant: invariant, detail: detail, input: input.description)
        if trace != nil { note("  VIOLATION [\(invariant)] \(detail)") }
    }

    private mutating func note(_ line: String) {
        trace?.append(line)
    }

    private mutating func noteInput() {
        if trace != nil { note(input.description) }
    }

    /// Rules every state must keep, checked when it is first seen.
    private mutating func check(_ state: RoomState, publishedAt published: ServerInstant, context: String) {
        let playback = state.playback
        let held = playback.position.seconds
        let current = playback.position(at: now).seconds
        if !(held.isFinite && held >= 0) || !(current.isFinite && current >= 0) {
            fail("positions are never negative", "\(context) seq \(state.seq): position \(held), at now \(current)")
        }
        if !(playback.rate.value >= PlaybackRate.minimum && playback.rate.value <= PlaybackRate.maximum) {
            fail("the rate stays within 0.25...4", "\(context) seq \(state.seq): rate \(playback.rate.value)")
        }
        if playback.status == .playing {
            let lead = playback.at.interval(since: published).milliseconds
            if playback.at.milliseconds <= 0 || lead > 1_000 {
                fail("a playing state's at lies at most 1 s after it was published",
                     "\(context) seq \(state.seq): at \(playback.at.milliseconds), published at \(published.milliseconds) (lead \(lead) ms)")
            }
        }
        switch playback.status {
        case .idle:
            if playback.item != nil {
                fail("idle has no item", "\(context) seq \(state.seq): item \(playback.item ?? "")")
            }
        case .paused, .waiting, .playing:
            guard let session = state.session, session.isActive, let item = playback.item else {
                fail("waiting, paused and playing have an item and an active session",
                     "\(context) seq \(state.seq): \(Self.summary(state))")
                return
            }
            if item != session.activity.identifier {
                fail("the playback item is the session's activity",
                     "\(context) seq \(state.seq): item \(item), activity \(session.activity.identifier)")
            }
        }
    }

    /// A start's `at` is the lead the configuration promises: the slowest round trip
    /// of the connected, joined members plus the margin, within the minimum and
    /// maximum lead.
    private mutating func checkLead(_ state: RoomState) {
        let configuration = room.configuration
        var slowest: Int64 = 0
        for member in room.members.values where member.connected && member.joined {
            slowest = Swift.max(slowest, member.roundTrip.milliseconds)
        }
        let expected = Swift.min(configuration.maximumLead.milliseconds,
                                 Swift.max(configuration.minimumLead.milliseconds, slowest + configuration.leadMargin.milliseconds))
        let lead = state.playback.at.interval(since: now).milliseconds
        if lead != expected {
            fail("a start's lead covers the slowest connected member's round trip",
                 "lead \(lead) ms, expected \(expected) ms (slowest round trip \(slowest) ms): \(Self.summary(state))")
        }
    }

    private mutating func checkUnique(_ participants: [Participant], context: String) {
        var ids = Set<MemberID>()
        var names = Set<String>()
        for participant in participants {
            if !ids.insert(participant.id).inserted {
                fail("participant ids are unique", "\(context): \(participant.id) twice")
            }
            if !names.insert(participant.name.text.lowercased()).inserted {
                fail("participant names are unique", "\(context): \(RandomStep.quoted(participant.name.text)) twice (ignoring case)")
            }
        }
    }

    private mutating func checkEncodings(_ event: RoomEvent) {
        for line in TextEventEncoding.lines(event) where Self.hasLineBreak(line) {
            fail("every text-encoding line is one line",
                 "\(event.type) event gives the line \(RandomStep.quoted(line))")
        }
        eventNumber += 1
        switch event {
        case .state, .participant, .notice, .chat:
            guard eventNumber % jsonEvery == 0 else { return }
        default:
            break
        }
        let bytes = JSONEventEncoding.encode(event)
        let object = try? JSONSerialization.jsonObject(with: Data(bytes))
        guard let fields = object as? [String: Any], fields["type"] as? String == event.type else {
            fail("every JSON encoding parses as an object with its type",
                 "\(event.type) event encodes as \(String(decoding: bytes, as: UTF8.self).prefix(300))")
            return
        }
        if case .state(let state) = event, (fields["seq"] as? NSNumber)?.int64Value != state.seq {
            fail("every JSON encoding parses as an object with its type", "state \(state.seq) encodes seq \(fields["seq"] ?? "nil")")
        }
    }

    /// Whether a line holds anything that ends a line: LF, VT, FF, CR, NEL, LINE
    /// SEPARATOR or PARAGRAPH SEPARATOR (what `Character.isNewline` accepts), found by
    /// scanning UTF-8 bytes because this runs for every event.
    static func hasLineBreak(_ line: String) -> Bool {
        var previous: UInt8 = 0
        var beforePrevious: UInt8 = 0
        for byte in line.utf8 {
            switch byte {
            case 0x0A...0x0D: return true
            case 0x85 where previous == 0xC2: return true
            case 0xA8, 0xA9: if previous == 0x80 && beforePrevious == 0xE2 { return true }
            default: break
            }
            beforePrevious = previous
            previous = byte
        }
        return false
    }

    /// After every input (and every timer).
    private mutating func checkAfterInput() {
        guard violation == nil else { return }
        let state = room.state
        if state.seq != lastPublished.seq {
            fail("the room's state.seq is the last broadcast one", "room seq \(state.seq), last broadcast \(lastPublished.seq)")
        } else if state != lastPublished {
            fail("the room's state is the last published one",
                 "room \(Self.summary(state)), last published \(Self.summary(lastPublished))")
        }
        check(state, publishedAt: publishedAt[state.seq] ?? now, context: "room state")
        if !room.members.isEmpty && !room.members.values.contains(where: { $0.role == .host }) {
            fail("a room with members has a host", "\(room.members.count) members, none a host")
        }
        if namesMayHaveChanged {
            namesMayHaveChanged = false
            checkUnique(room.participants, context: "room participants")
        }
        for (index, slot) in slots.enumerated() where slot.awaitingState {
            fail("a welcome is followed by the state", "s\(index) (\(slot.id.map(\.rawValue) ?? "?")) got no state after its welcome")
        }
        if startedDuringInput {
            startedDuringInput = false
            // CONCEPTS rules 2 and 3: a start leaves no counted player unready (the
            // wait limit suspends stragglers first), except `/play now`.
            if !input.isPlayNow, let straggler = firstUnreadyCountedPlayer() {
                fail("a coordinated start waits for every counted player",
                     "\(Self.summary(state)) though \(straggler) is a connected, joined, unsuspended player and not ready")
            }
        }
        if state.playback.status == .waiting {
            // CONCEPTS rule 2: once every counted player is ready, the group starts.
            if firstUnreadyCountedPlayer() == nil {
                fail("a waiting room waits for someone", "waiting at seq \(state.seq) though every counted player is ready")
            }
            if !timers.contains(where: { if case .waitLimit = $0.timer { true } else { false } }) {
                fail("a waiting room has its wait limit armed", "waiting at seq \(state.seq) with no wait-limit timer")
            }
        }
    }

    /// A connected, joined, unsuspended player whose participant shows not ready.
    private func firstUnreadyCountedPlayer() -> MemberID? {
        room.participants.first { participant in
            guard let member = room.member(participant.id) else { return false }
            return member.connected && member.joined && member.player && !member.isSuspended && !participant.ready
        }?.id
    }

    static func summary(_ state: RoomState) -> String {
        let session = state.session.map { "\($0.state.rawValue) \($0.activity.identifier)" } ?? "no session"
        let policy = "control \(state.policy.control.rawValue), stall \(state.policy.stall.rawValue), wait \(state.policy.wait.milliseconds) ms"
        return "#\(state.seq) \(summary(state.playback)) [\(session); queue \(state.queue.count); \(policy)]"
    }

    static func summary(_ playback: Playback) -> String {
        "\(playback.status.rawValue) \(NumberText.decimal(playback.position.seconds, places: 3))s x\(playback.rate) at \(playback.at.milliseconds) by \(playback.by?.rawValue ?? "-") cause \(playback.cause.rawValue)"
    }
}

/// What the driver is handling, described only when a report needs it.
private enum CurrentInput: CustomStringConvertible {
    case start
    case line(slot: Int, id: MemberID, text: String)
    case connect(slot: Int, name: String?, player: Bool, join: Bool, resume: String?, id: MemberID?)
    case disconnect(slot: Int, id: MemberID)
    case measure(slot: Int, id: MemberID, milliseconds: Int64)
    case staleTimer(RoomTimer, at: Int64)
    case ghost(MemberID, String)
    case timer(RoomTimer, due: Int64, at: Int64)
    case clock(Int64)

    var isPlayNow: Bool {
        guard case .line(_, _, let text) = self else { return false }
        return text.split(separator: " ").map { $0.lowercased() } == ["/play", "now"]
    }

    var description: String {
        switch self {
        case .start:
            return "(start)"
        case .line(let slot, let id, let text):
            return "s\(slot) (\(id)): \(RandomStep.quoted(text))"
        case .connect(let slot, let name, let player, let join, let resume, let id):
            let outcome = id.map { " -> \($0)" } ?? ""
            return "s\(slot) connects name=\(name.map(RandomStep.quoted) ?? "nil") player=\(player) join=\(join) resume=\(resume ?? "nil")\(outcome)"
        case .disconnect(let slot, let id):
            return "s\(slot) (\(id)) disconnects"
        case .measure(let slot, let id, let milliseconds):
            return "s\(slot) (\(id)) round trip \(milliseconds) ms"
        case .staleTimer(let timer, let at):
            return "stale timer \(timer) fires again at \(at)"
        case .ghost(let id, let line):
            return "forgotten \(id): \(RandomStep.quoted(line))"
        case .timer(let timer, let due, let at):
            return "timer \(timer) due \(due) fires at \(at)"
        case .clock(let now):
            return "clock now \(now)"
        }
    }
}

// MARK: - Generator

/// Draws the steps of one random session, looking at the driver only to choose
/// sensible speakers (connected slots) and connections (closed slots).
struct RandomSessionGenerator {
    struct Persona {
        var name: String?
        var player: Bool
        var join: Bool
    }

    var rng: SplitMix64
    let setup: RandomSetup
    var slotCount: Int { setup.slots }
    let personas: [Persona]
    let names: [String]

    init(seed: UInt64, byteHeavyNames: Bool) {
        rng = SplitMix64(seed: seed)
        names = Self.names + (byteHeavyNames ? Self.byteHeavyNames : [])
        let slotCount = rng.int(in: 3...8)
        var configuration = RoomConfiguration()
        if rng.chance(0.3) { configuration.maximumMembers = rng.int(in: 2...(slotCount + 2)) }
        if rng.chance(0.3) { configuration.maximumQueueLength = rng.int(in: 1...4) }
        if rng.chance(0.4) { configuration.resumeGrace = ServerInterval(milliseconds: rng.int64(in: 500...8_000)) }
        setup = RandomSetup(slots: slotCount, configuration: configuration)
        var personas: [Persona] = []
        for _ in 0..<slotCount {
            let name: String? = rng.chance(0.08) ? nil : rng.pick(names)
            personas.append(Persona(name: name, player: rng.chance(0.6), join: rng.chance(0.8)))
        }
        self.personas = personas
    }

    mutating func nextStep(_ driver: RoomDriver) -> RandomStep {
        let connected = driver.connectedSlots
        let offline = driver.offlineSlots
        if connected.count < 2, !offline.isEmpty, rng.chance(0.7) {
            return connect(rng.pick(offline), driver)
        }
        switch rng.below(1000) {
        case 0..<760 where !connected.isEmpty:
            let slot = rng.pick(connected)
            // Idle rooms exercise little: share something more often.
            if driver.room.state.playback.status == .idle, rng.chance(0.2) {
                return .message(slot: slot, text: rng.chance(0.8) ? "/watch " + mediaItem() : "/next")
            }
            return .message(slot: slot, text: line(for: slot))
        case 760..<790 where !connected.isEmpty:
            let slot = rng.pick(connected)
            let count = rng.int(in: 2...4)
            return .message(slot: slot, text: (0..<count).map { _ in line(for: slot) }.joined(separator: "\n"))
        case 790..<890:
            return advance()
        case 890..<915 where !connected.isEmpty:
            return .disconnect(slot: rng.pick(connected))
        case 915..<950 where !offline.isEmpty:
            return connect(rng.pick(offline), driver)
        case 950..<955 where !connected.isEmpty:
            return connect(rng.pick(connected), driver, duplicate: true)
        case 955..<980:
            let milliseconds: Int64 = switch rng.below(10) {
            case 0: rng.pick([-50, 0, 5_000, 60_000, Int64.max / 4])
            case 1...5: rng.int64(in: 0...120)
            default: rng.int64(in: 100...2_500)
            }
            return .measure(slot: rng.below(slotCount), milliseconds: milliseconds)
        case 980..<990:
            return .refireRetiredTimer(pick: rng.below(1_000))
        case 990..<995:
            return .ghostLine(text: line(for: 0))
        default:
            return advance()
        }
    }

    private mutating func connect(_ slot: Int, _ driver: RoomDriver, duplicate: Bool = false) -> RandomStep {
        let persona = personas[slot]
        let name = rng.chance(0.8) ? persona.name : (rng.chance(0.1) ? nil : rng.pick(names))
        let player = rng.chance(0.85) ? persona.player : !persona.player
        let resume: RandomStep.Resume
        if duplicate || (driver.slots[slot].token != nil && rng.chance(0.75)) {
            resume = .own
        } else if rng.chance(0.1) {
            resume = .slot(rng.below(slotCount))
        } else {
            resume = rng.chance(0.15) ? .garbage : .none
        }
        return .connect(slot: slot, name: name, player: player, join: persona.join, resume: resume)
    }

    private mutating func advance() -> RandomStep {
        let milliseconds: Int64 = switch rng.below(20) {
        case 0: 0
        case 1...8: rng.int64(in: 1...250)
        case 9...14: rng.int64(in: 250...2_000)
        case 15...18: rng.int64(in: 2_000...8_000)
        default: rng.int64(in: 8_000...75_000)
        }
        let lateness: Int64 = rng.chance(0.3) ? rng.int64(in: 1...400) : 0
        return .advance(milliseconds: milliseconds, lateness: lateness)
    }

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private mutating func line(for slot: Int) -> String {
        let player = personas[slot].player
        let weights = [
            player ? 16 : 2, // 0 ready
            8, // 1 play
            4, // 2 pause
            6, // 3 seek
            3, // 4 rate
            4, // 5 watch
            3, // 6 queue
            2, // 7 next
            1, // 8 end
            2, // 9 join
            2, // 10 leave
            4, // 11 suspend
            4, // 12 resume
            2, // 13 catchup
            player ? 4 : 1, // 14 buffering
            player ? 3 : 1, // 15 ended
            2, // 16 autoplay
            2, // 17 player
            3, // 18 policy
            3, // 19 op / deop / kick
            1, // 20 nick
            3, // 21 chat and /me
            2, // 22 informational and malformed
        ]
        switch rng.weighted(weights) {
        case 0:
            return "/ready " + rng.pick(["{seq}", "{seq}", "{seq}", "{seq}", "{seq}", "{seq}", "{seq-1}", "{seq-2}",
                                         "{seq-10}", "{seq+1}", "{seq+100}", "0", "1", "999999999999999999",
                                         "9999999999999999999", "-1", "x", ""])
        case 1:
            return rng.pick(["/play", "/play", "/play", "/play now", "/play now", "/PLAY Now", "/play  now ", "/play later"])
        case 2:
            return rng.pick(["/pause", "/pause", "/pause", "/pause now"])
        case 3:
            return "/seek " + rng.pick(["0", "5", "95", "95.5", "1:35", "1:01:35", "999999", "+10", "-10", "+0", "-0",
                                        "+999999", "-999999", "+1:30", "-1:01:35", "0.001", "59:59", "1:60", "abc",
                                        "", "1000000", "+5.5", "-3.25", "12:34:56", "-0.0005", "+277:46:39"])
        case 4:
            return "/rate " + rng.pick(["1", "1.5", "2", "0.25", "4", "4x", "0.5X", "0.24", "4.001", "0", "5", "-1",
                                        "1e2", "nan", "inf", "1.2345678", "3.999", "0.250"])
        case 5:
            return "/watch " + mediaItem()
        case 6:
            return rng.chance(0.3) ? "/queue" : "/queue " + mediaItem()
        case 7:
            return rng.pick(["/next", "/next", "/next", "/next now"])
        case 8:
            return rng.pick(["/end", "/end", "/end please"])
        case 9:
            return rng.pick(["/join", "/join", "/join", "/JOIN", "/join now"])
        case 10:
            return rng.pick(["/leave", "/leave", "/leave", "/leave now"])
        case 11:
            return rng.chance(0.25) ? "/suspend" : "/suspend " + reason()
        case 12:
            switch rng.below(8) {
            case 0, 1: return "/resume"
            case 2, 3: return "/resume " + reason()
            case 4, 5: return "/resume at " + time()
            case 6: return "/resume \(reason()) at \(time())"
            default: return rng.pick(["/resume at", "/resume at abc", "/resume stallRecovery extra", "/resume AT 5", "/resume x at 1 2"])
            }
        case 13:
            return "/catchup" + rng.pick(["", "", " 5", " 10", " 0.5", " 600", " 601", " 0", " -5", " 9999", " 0.001", " 3.25"])
        case 14:
            return rng.pick(["/buffering", "/buffering", "/buffering", "/buffering now"])
        case 15:
            return "/ended " + rng.pick(["{seq}", "{seq}", "{seq}", "{seq-1}", "{seq-3}", "{seq+1}", "0", "abc"])
        case 16:
            return "/autoplay " + rng.pick(["on", "on", "off", "yes", "no", "maybe", ""])
        case 17:
            return "/player " + rng.pick(["on", "off", "1", "0", "maybe"])
        case 18:
            return "/policy" + rng.pick(["", " control hosts", " control everyone", " control everyone", " stall wait",
                                         " stall continue", " wait 0", " wait 0.5", " wait 2", " wait 300", " wait 301",
                                         " wait -1", " control hosts stall wait wait 0", " stall wait wait 1",
                                         " wait 0 wait 3", " bogus x", " control", " CONTROL Hosts"])
        case 19:
            let command = rng.pick(["/op", "/op", "/op", "/deop", "/deop", "/kick"])
            let target = rng.pick(["{name:\(rng.below(slotCount))}", "{name:\(rng.below(slotCount))}",
                                   "{NAME:\(rng.below(slotCount))}", "{name:\(slot)}", "nobody", ""])
            return target.isEmpty ? command : "\(command) \(target)"
        case 20:
            return "/nick " + (rng.chance(0.9) ? rng.pick(names) : rng.pick(["", "two words", String(repeating: "n", count: 33)]))
        case 21:
            let text = rng.pick(Self.chat)
            return rng.chance(0.2) ? "/me " + text : text
        default:
            return rng.pick(["/time 1700000000000", "/time -5.5", "/time 12345678901234567", "/time abc", "/who",
                             "/status", "/status", "/help", "/help seek", "/help /play", "/help nope", "/nope", "/",
                             "", "   ", "//", "//play", "/who now", "/queue", "/policy"])
        }
    }

    private mutating func mediaItem() -> String {
        let url = rng.pick(["https://example.org/a.mp4", "https://example.org/a.mp4", "https://example.org/b.mp4",
                            "https://example.org/b.mp4", "http://example.org/c.mp4?x=1#t", "https://EXAMPLE.org/a.mp4",
                            "https://user@example.org/v.mp4", "https://example.org/", "ftp://example.org/x",
                            "https://", "http://:80/x", "notaurl"])
        let title = rng.pick(["", "", "", " Episode 1", " Episode 1", " \"quoted\" \\ title", " 🎬 Movie night",
                              " " + String(repeating: "t", count: 201), " line\u{2028}break"])
        return url + title
    }

    private mutating func reason() -> String {
        rng.pick(["stallRecovery", "audioSessionInterrupted", "playingInterstitial", "coordinatedPlaybackNotPossible",
                  "userActionRequired", "userIsChangingCurrentTime", "catchup", "custom.reason-1", "bad!reason"])
    }

    private mutating func time() -> String {
        rng.pick(["0", "30", "95.5", "1:35", "+10", "-10", "-999999", "+999999", "abc"])
    }

    static let names = [
        "alice", "Alice", "bob", "BOB", "carol", "dave", "guest", "guest-2", "émile", "e\u{301}mile", "李雷", "🙂",
        "zoë", String(repeating: "x", count: 32), "a-very-long-name-with-32-chars-x", "o'brien", "\"quoted\"",
        "back\\slash", "名前-2", "has space", "", "\u{202E}evil", String(repeating: "y", count: 33),
        String(repeating: "😀", count: 32),
    ]

    /// Names at the 128-byte limit made of few characters (combining marks), where
    /// a `-2` suffix would push the name past the byte limit.
    static let byteHeavyNames = [
        String(repeating: "a\u{301}\u{301}\u{301}", count: 18) + "ab",
        String(repeating: "o\u{308}\u{308}\u{308}", count: 18) + "cd",
    ]

    static let chat = [
        "hello", "  spaced out  ", "tab\there", "quote \" and backslash \\", "emoji 🎬🍿", "rtl \u{202E}olleh",
        "line\u{2028}separator", "para\u{2029}graph", "//not a command", "<script>alert(1)</script>",
        "{\"type\":\"state\",\"seq\":999}", "carriage return\r", "nul\u{0}byte", "escape \u{1B}[31mred",
        "del\u{7F}", "c1 \u{85} next line", String(repeating: "long ", count: 1_000),
    ]
}

// MARK: - Runs

/// What a run found: each distinct invariant's first violation, minimised.
struct RandomRunReport: Sendable {
    var sequences = 0
    var steps = 0
    var findings: [String] = []
    var invariants: Set<String> = []
}

/// Shared between the worker thread and the test, which watches for a step that
/// never returns (a hang is as much a failure as a trap).
///
/// A step is judged by the processor time the worker spends on it where the
/// platform can tell (Linux), so a worker starved by a busy machine is not taken
/// for a hung one; elsewhere by wall-clock time.
final class RandomRunMonitor: @unchecked Sendable {
    private let lock = NSLock()
    /// Added to the replay hint, e.g. ` COWATCH_RANDOM_HEAVY=1`.
    private let replayEnvironment: String

    init(replayEnvironment: String = "") {
        self.replayEnvironment = replayEnvironment
    }

    private var stepSerial: UInt64 = 0
    private var stepRunning = false
    private var sequenceSeed: UInt64 = 0
    private var stepIndex = 0
    private var steps: [RandomStep] = []
    private var setup = RandomSetup(slots: 0, configuration: RoomConfiguration())
    private var report: RandomRunReport?
    /// The step the watcher last saw running, and the worker's clocks then.
    private var watched: (serial: UInt64, cpu: UInt64?, wall: UInt64)?
    #if os(Linux)
    private var workerClock: clockid_t?
    #endif
    /// This worker's slot in `CrashBreadcrumbs`.
    private var breadcrumb: Int?

    /// Call on the worker thread before its first step.
    func registerWorker() {
        let slot = CrashBreadcrumbs.register()
        lock.lock()
        breadcrumb = slot
        lock.unlock()
        #if os(Linux)
        var clock = clockid_t()
        if pthread_getcpuclockid(pthread_self(), &clock) == 0 {
            lock.lock(); defer { lock.unlock() }
            workerClock = clock
        }
        #endif
    }

    func beginSequence(seed: UInt64, setup: RandomSetup) {
        lock.lock(); defer { lock.unlock() }
        sequenceSeed = seed
        self.setup = setup
        steps.removeAll(keepingCapacity: true)
        if let breadcrumb {
            CrashBreadcrumbs.note(breadcrumb, message: "\nrandomized room: the room crashed in sequence seed \(RandomRoomRun.hex(seed)) "
                + "(replay with COWATCH_RANDOM_REPLAY=\(RandomRoomRun.hex(seed))\(replayEnvironment)) at step ")
        }
    }

    func beginStep(_ index: Int, _ step: RandomStep, record: Bool) {
        lock.lock(); defer { lock.unlock() }
        stepSerial &+= 1
        stepRunning = true
        stepIndex = index
        if record { steps.append(step) }
        if let breadcrumb { CrashBreadcrumbs.note(breadcrumb, step: index + 1) }
    }

    func endStep() {
        lock.lock(); defer { lock.unlock() }
        stepRunning = false
    }

    func finish(_ report: RandomRunReport) {
        lock.lock(); defer { lock.unlock() }
        self.report = report
        stepRunning = false
        if let breadcrumb { CrashBreadcrumbs.release(breadcrumb) }
        breadcrumb = nil
    }

    var finished: RandomRunReport? {
        lock.lock(); defer { lock.unlock() }
        return report
    }

    /// The worker's processor time in nanoseconds, where the platform tells.
    private func workerProcessorTime() -> UInt64? {
        #if os(Linux)
        guard let workerClock else { return nil }
        var time = timespec()
        guard clock_gettime(workerClock, &time) == 0 else { return nil }
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        #else
        return nil
        #endif
    }

    /// Called periodically by the watcher: a description of the current step if it
    /// has used more than `processorSeconds` of processor time (or, where that
    /// cannot be measured, `wallSeconds` of wall-clock time) without returning.
    func hungStep(processorSeconds: Double, wallSeconds: Double) -> String? {
        lock.lock(); defer { lock.unlock() }
        guard stepRunning else {
            watched = nil
            return nil
        }
        let wall = DispatchTime.now().uptimeNanoseconds
        let cpu = workerProcessorTime()
        guard let seen = watched, seen.serial == stepSerial else {
            watched = (stepSerial, cpu, wall)
            return nil
        }
        let limit: String
        if let cpu, let seenCPU = seen.cpu {
            guard Double(cpu &- seenCPU) / 1e9 > processorSeconds else { return nil }
            limit = "after \(NumberText.decimal(processorSeconds, places: 1)) s of processor time"
        } else {
            guard Double(wall &- seen.wall) / 1e9 > wallSeconds else { return nil }
            limit = "within \(NumberText.decimal(wallSeconds, places: 1)) s"
        }
        var text = "HANG: a step did not return \(limit) (invariant: no input traps or hangs the room)\n"
        text += "  sequence seed \(RandomRoomRun.hex(sequenceSeed)), \(setup), step \(stepIndex + 1)\n"
        text += "  steps so far (replay with COWATCH_RANDOM_REPLAY=\(RandomRoomRun.hex(sequenceSeed))\(replayEnvironment)):\n"
        for (index, step) in steps.enumerated() { text += "  \(index + 1). \(step)\n" }
        return text
    }
}

/// A trap in the room kills the test process before any report is printed, so
/// each worker leaves a breadcrumb (its sequence seed and step) that a signal
/// handler writes to standard error before handing the signal to the handler that
/// was there before (the Swift runtime's backtracer, or the default).
enum CrashBreadcrumbs {
    static let capacity = 64
    static let messageBytes = 256
    private static let lock = NSLock()
    private nonisolated(unsafe) static let used: UnsafeMutablePointer<Bool> = {
        let pointer = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
        pointer.initialize(repeating: false, count: capacity)
        return pointer
    }()
    private nonisolated(unsafe) static let threads = UnsafeMutablePointer<pthread_t>.allocate(capacity: capacity)
    private nonisolated(unsafe) static let steps: UnsafeMutablePointer<Int> = {
        let pointer = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        pointer.initialize(repeating: 0, count: capacity)
        return pointer
    }()
    private nonisolated(unsafe) static let lengths: UnsafeMutablePointer<Int> = {
        let pointer = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        pointer.initialize(repeating: 0, count: capacity)
        return pointer
    }()
    private nonisolated(unsafe) static let messages: UnsafeMutablePointer<UInt8> = {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * messageBytes)
        pointer.initialize(repeating: 0, count: capacity * messageBytes)
        return pointer
    }()
    /// The actions in place before ours, by signal number.
    nonisolated(unsafe) static let previous: UnsafeMutablePointer<sigaction> = {
        let pointer = UnsafeMutablePointer<sigaction>.allocate(capacity: 64)
        pointer.initialize(repeating: sigaction(), count: 64)
        return pointer
    }()
    static let signals: [Int32] = [SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGBUS, SIGSEGV]
    private static let installed: Bool = {
        for signal in signals {
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = randomRoomCrashHandler
            #else
            action.__sigaction_u.__sa_handler = randomRoomCrashHandler
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            _ = sigaction(signal, &action, previous + Int(signal))
        }
        return true
    }()

    /// A slot for the calling thread; installs the handler on first use.
    static func register() -> Int? {
        _ = installed
        lock.lock(); defer { lock.unlock() }
        guard let slot = (0..<capacity).first(where: { !used[$0] }) else { return nil }
        (threads + slot).initialize(to: pthread_self())
        steps[slot] = 0
        lengths[slot] = 0
        used[slot] = true
        return slot
    }

    static func release(_ slot: Int) {
        lock.lock(); defer { lock.unlock() }
        used[slot] = false
    }

    static func note(_ slot: Int, message: String) {
        let bytes = Array(message.utf8.prefix(messageBytes))
        lengths[slot] = 0
        for (index, byte) in bytes.enumerated() { messages[slot * messageBytes + index] = byte }
        lengths[slot] = bytes.count
    }

    static func note(_ slot: Int, step: Int) {
        steps[slot] = step
    }

    /// Runs in the signal handler: only async-signal-safe calls (write).
    static func report() {
        let me = pthread_self()
        for slot in 0..<capacity where used[slot] && pthread_equal(threads[slot], me) != 0 && lengths[slot] > 0 {
            _ = write(2, messages + slot * messageBytes, lengths[slot])
            var divisor = 1
            while divisor <= steps[slot] / 10 { divisor *= 10 }
            var rest = steps[slot]
            while divisor > 0 {
                var digit = UInt8(48 + rest / divisor)
                _ = write(2, &digit, 1)
                rest %= divisor
                divisor /= 10
            }
            var newline: UInt8 = 10
            _ = write(2, &newline, 1)
        }
    }
}

private func randomRoomCrashHandler(_ signal: Int32) {
    CrashBreadcrumbs.report()
    // Put the previous action back. Returning re-runs the faulting instruction (or
    // abort() raises again), which now reaches it.
    _ = sigaction(signal, CrashBreadcrumbs.previous + Int(signal), nil)
}

enum RandomRoomRun {
    struct Options: Sendable {
        var sequences: Int
        var steps: Int
        var byteHeavyNames = false
        /// Parse every `jsonEvery`-th frequent event back from JSON (1: all of them).
        var jsonEvery = 1
        /// Distinct invariants to report (each minimised) before the run stops.
        var maximumFindings = 4
    }

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16, uppercase: true) }

    /// Runs `options.sequences` sequences derived from `baseSeed`.
    static func run(baseSeed: UInt64, options: Options, monitor: RandomRunMonitor) -> RandomRunReport {
        var report = RandomRunReport()
        for index in 0..<options.sequences {
            let seed = SplitMix64.derive(baseSeed, index)
            let outcome = generate(seed: seed, options: options, tolerating: report.invariants, monitor: monitor)
            report.sequences += 1
            report.steps += outcome.steps.count
            guard let violation = outcome.violation, !report.invariants.contains(violation.invariant) else { continue }
            report.invariants.insert(violation.invariant)
            let minimal = minimise(outcome.steps, setup: outcome.setup, invariant: violation.invariant,
                                   options: options, monitor: monitor)
            report.findings.append(describe(violation, seed: seed, baseSeed: baseSeed, sequence: index,
                                            original: outcome.steps.count, minimal: minimal, setup: outcome.setup,
                                            options: options))
            if report.findings.count >= options.maximumFindings { break }
        }
        return report
    }

    /// Generates and runs one sequence, stopping at its first violation.
    static func generate(seed: UInt64, options: Options, tolerating tolerated: Set<String> = [],
                         monitor: RandomRunMonitor?, trace: Bool = false)
        -> (steps: [RandomStep], setup: RandomSetup, violation: InvariantViolation?, trace: [String]) {
        var generator = RandomSessionGenerator(seed: seed, byteHeavyNames: options.byteHeavyNames)
        var driver = RoomDriver(generator.setup, jsonEvery: options.jsonEvery)
        driver.tolerated = tolerated
        if trace { driver.trace = [] }
        monitor?.beginSequence(seed: seed, setup: generator.setup)
        var steps: [RandomStep] = []
        for index in 0..<options.steps {
            let step = generator.nextStep(driver)
            steps.append(step)
            if trace { driver.trace?.append("\(index + 1). \(step)") }
            monitor?.beginStep(index, step, record: true)
            driver.perform(step)
            monitor?.endStep()
            if driver.violation != nil { break }
        }
        return (steps, generator.setup, driver.violation, driver.trace ?? [])
    }

    /// Runs a fixed list of steps; returns the first violation and its step index.
    static func replay(_ steps: [RandomStep], setup: RandomSetup, focus: String? = nil, monitor: RandomRunMonitor?,
                       trace: Bool = false) -> (violation: InvariantViolation?, index: Int?, trace: [String]) {
        var driver = RoomDriver(setup, jsonEvery: 1)
        driver.focus = focus
        if trace { driver.trace = [] }
        for (index, step) in steps.enumerated() {
            if trace { driver.trace?.append("\(index + 1). \(step)") }
            monitor?.beginStep(index, step, record: false)
            driver.perform(step)
            monitor?.endStep()
            if let violation = driver.violation { return (violation, index, driver.trace ?? []) }
        }
        return (nil, nil, driver.trace ?? [])
    }

    /// Delta debugging: drops chunks of steps while the same invariant still breaks.
    static func minimise(_ steps: [RandomStep], setup: RandomSetup, invariant: String, options: Options,
                         monitor: RandomRunMonitor) -> [RandomStep] {
        func fails(_ candidate: [RandomStep]) -> Int? {
            let result = replay(candidate, setup: setup, focus: invariant, monitor: monitor)
            return result.violation?.invariant == invariant ? result.index : nil
        }
        guard var end = fails(steps) else { return steps }
        var current = Array(steps[...end])
        var chunk = max(1, current.count / 2)
        var attempts = 0
        while chunk >= 1 && attempts < 4_000 {
            var removedAny = false
            var start = 0
            while start < current.count && attempts < 4_000 {
                attempts += 1
                var candidate = current
                candidate.removeSubrange(start..<min(current.count, start + chunk))
                if let index = fails(candidate) {
                    end = index
                    current = Array(candidate[...index])
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny {
                if chunk == 1 { break }
                chunk /= 2
            }
        }
        return current
    }

    static func describe(_ violation: InvariantViolation, seed: UInt64, baseSeed: UInt64, sequence: Int,
                         original: Int, minimal: [RandomStep], setup: RandomSetup, options: Options) -> String {
        var text = "INVARIANT VIOLATED: \(violation.invariant)\n"
        text += "  \(violation.detail)\n"
        text += "  while handling: \(violation.input)\n"
        text += "  base seed \(hex(baseSeed)), sequence \(sequence), sequence seed \(hex(seed)) "
        text += "(replay with COWATCH_RANDOM_REPLAY=\(hex(seed))\(options.byteHeavyNames ? " COWATCH_RANDOM_HEAVY=1" : "")), "
        text += "failed at step \(original) of the sequence\n"
        text += "  minimal reproduction (\(minimal.count) steps, \(setup); {seq} is the room's seq when the line is sent):\n"
        let replayed = replay(minimal, setup: setup, focus: violation.invariant, monitor: nil, trace: true)
        for line in replayed.trace { text += "    \(line)\n" }
        return text
    }
}
