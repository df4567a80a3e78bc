import CowatchCore
import CowatchTime
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SlashCommands

// The rules a room keeps whatever its members do, checked by `RoomDriver` after
// every input and on every event it delivers.

/// A broken invariant: which one, and what was seen.
public struct InvariantViolation: Hashable, Sendable {
    /// A short stable name, used to tell violations apart when minimising.
    public var invariant: String
    public var detail: String
    /// The input being handled (resolved), e.g. `s2 (m3): /ready 17`.
    public var input: String
}

extension RoomDriver {
    mutating func fail(_ invariant: String, _ detail: String) {
        guard violation == nil, !tolerated.contains(invariant), focus == nil || focus == invariant else { return }
        violation = InvariantViolation(invariant: invariant, detail: detail, input: input.description)
        if trace != nil { note("  VIOLATION [\(invariant)] \(detail)") }
    }

    mutating func note(_ line: String) {
        trace?.append(line)
    }

    mutating func noteInput() {
        if trace != nil { note(input.description) }
    }

    /// Rule 12 of docs/concepts.md and the transport commands' meaning: the first state a
    /// command publishes lands where the command says, computed from the group's
    /// position when the command is handled.
    mutating func checkLanding(_ command: SlashCommand, by id: MemberID, before: RoomState, published: [RoomState]) {
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

    /// Rules every state must keep, checked when it is first seen.
    mutating func check(_ state: RoomState, publishedAt published: ServerInstant, context: String) {
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
    mutating func checkLead(_ state: RoomState) {
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

    mutating func checkUnique(_ participants: [Participant], context: String) {
        var ids = Set<MemberID>()
        var names = Set<String>()
        for participant in participants {
            if !ids.insert(participant.id).inserted {
                fail("participant ids are unique", "\(context): \(participant.id) twice")
            }
            if !names.insert(participant.name.text.lowercased()).inserted {
                fail("participant names are unique", "\(context): \(RoomStep.quoted(participant.name.text)) twice (ignoring case)")
            }
        }
    }

    mutating func checkEncodings(_ event: RoomEvent) {
        for line in TextEventEncoding.lines(event) where Self.hasLineBreak(line) {
            fail("every text-encoding line is one line",
                 "\(event.type) event gives the line \(RoomStep.quoted(line))")
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
    /// SEPARATOR or PARAGRAPH SEPARATOR (what `Character.isNewline` accepts). This
    /// runs for every line of every event, and in the fuzzer's build a Swift loop
    /// over the bytes calls into the coverage instrumentation for each compare:
    /// the C library's `memchr` (not instrumented) finds the one-byte terminators
    /// and the lead bytes of the others, and only those are looked at further.
    static func hasLineBreak(_ line: String) -> Bool {
        var line = line
        return line.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            let count = bytes.count
            for terminator: Int32 in 0x0A...0x0D where memchr(base, terminator, count) != nil { return true }
            // NEL is C2 85; LINE and PARAGRAPH SEPARATOR are E2 80 A8 and E2 80 A9.
            return contains(base, count, lead: 0xC2) { $0.count >= 2 && $0[1] == 0x85 }
                || contains(base, count, lead: 0xE2) { $0.count >= 3 && $0[1] == 0x80 && ($0[2] == 0xA8 || $0[2] == 0xA9) }
        }
    }

    /// Whether some occurrence of `lead` in the bytes starts a sequence `matches`
    /// accepts (given the bytes from that occurrence to the end).
    private static func contains(_ base: UnsafePointer<UInt8>, _ count: Int, lead: UInt8,
                                 _ matches: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        var offset = 0
        while offset < count, let found = memchr(base + offset, Int32(lead), count - offset) {
            let index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            if matches(UnsafeBufferPointer(start: base + index, count: count - index)) { return true }
            offset = index + 1
        }
        return false
    }

    /// After every input (and every timer).
    mutating func checkAfterInput() {
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
            // docs/concepts.md, rules 2 and 3: a start leaves no counted player unready (the
            // wait limit suspends stragglers first), except `/play now`.
            if !input.isPlayNow, let straggler = firstUnreadyCountedPlayer() {
                fail("a coordinated start waits for every counted player",
                     "\(Self.summary(state)) though \(straggler) is a connected, joined, unsuspended player and not ready")
            }
        }
        if state.playback.status == .waiting {
            // docs/concepts.md, rule 2: once every counted player is ready, the group starts.
            if firstUnreadyCountedPlayer() == nil {
                fail("a waiting room waits for someone", "waiting at seq \(state.seq) though every counted player is ready")
            }
            if !host.timers.contains(where: { if case .waitLimit = $0.timer { true } else { false } }) {
                fail("a waiting room has its wait limit armed", "waiting at seq \(state.seq) with no wait-limit timer")
            }
        }
    }

    /// A connected, joined, unsuspended player whose participant shows not ready;
    /// for an own copy, only players that said they have it count.
    func firstUnreadyCountedPlayer() -> MemberID? {
        let ownCopy = room.state.session?.activity.source.ownCopy != nil
        return room.participants.first { participant in
            guard let member = room.member(participant.id) else { return false }
            return member.connected && member.joined && member.player && (!ownCopy || member.copy == true)
                && !member.isSuspended && !participant.ready
        }?.id
    }

    public static func summary(_ state: RoomState) -> String {
        let session = state.session.map { "\($0.state.rawValue) \($0.activity.identifier)" } ?? "no session"
        let policy = "control \(state.policy.control.rawValue), stall \(state.policy.stall.rawValue), wait \(state.policy.wait.milliseconds) ms"
        return "#\(state.seq) \(summary(state.playback)) [\(session); queue \(state.queue.count); \(policy)]"
    }

    public static func summary(_ playback: Playback) -> String {
        "\(playback.status.rawValue) \(NumberText.decimal(playback.position.seconds, places: 3))s x\(playback.rate) at \(playback.at.milliseconds) by \(playback.by?.rawValue ?? "-") cause \(playback.cause.rawValue)"
    }
}
