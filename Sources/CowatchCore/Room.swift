import CowatchTime
import SlashCommands

/// A room: its members, its group session and its playback coordinator.
///
/// A pure value. Each entry point takes the inputs and `now`, changes the room,
/// and returns the actions for the gateway to carry out, in order. Nothing here
/// reads a clock, sleeps or performs I/O, so every rule is tested with plain values.
///
/// Counters (`eligibleCount`, `readyCount`...) are kept up to date as members
/// change, so no command costs work per member unless it really concerns every
/// member (ending a session, suspending stragglers, listing `/who`).
public struct Room: Sendable {
    public let name: RoomName
    public let configuration: RoomConfiguration
    /// The state as last published: what every member has been sent.
    public internal(set) var state: RoomState
    public internal(set) var members: [MemberID: Member] = [:]

    /// Lowercased display name to member, for `/op bob`.
    var nameIndex: [String: MemberID] = [:]
    /// Each member's `DisplayName.lookalikeKeys` to the member: a name is taken
    /// when any of its keys is here for someone else (UTS #39 skeletons).
    var lookalikeIndex: [String: MemberID] = [:]
    var tokenIndex: [String: MemberID] = [:]

    /// Connected, joined, unsuspended players: those a coordinated start waits for.
    var eligibleCount = 0
    /// Eligible members whose readiness answers the current anchor.
    var readyCount = 0
    /// Connected, joined players, suspended or not: when none remain, a waiting
    /// room pauses instead of starting (docs/concepts.md, rule 10).
    var playerCount = 0
    var hostCount = 0
    /// Members with an open connection: what a room's capacity counts.
    var connectedCount = 0
    /// Connected, joined members with autoplay on.
    var autoplayCount = 0
    /// The slowest round trip among connected, joined members, or nil when it must
    /// be found again (its holder left or got faster). Cached so a start does not
    /// scan every member.
    var slowestRoundTrip: ServerInterval? = .zero

    /// The seq of the last state that moved the held position or the item:
    /// `/ready` for an older seq answers a question no longer asked.
    var readinessAnchor: Int64 = 0
    /// The seq of the state that made the current item current (for `/ended`).
    var itemSeq: Int64 = 0
    /// The coordinated start in progress: set exactly while the group is `waiting`.
    var waiting: WaitingEpisode?

    var nextMemberNumber: Int64 = 1
    var nextActivityNumber: Int64 = 1
    var nextQueueNumber: Int64 = 1

    /// Owner, bans, slow mode, password and invites (`Room+Moderation.swift`, `Room+Access.swift`).
    public internal(set) var protection = RoomProtection()
    /// Recent wrong passwords by address; not kept across restarts.
    var passwordFailures: [String: [ServerInstant]] = [:]

    /// The latest chat lines, oldest first, for newcomers and for restarts.
    public internal(set) var recentChat: [ChatLine] = []
    /// The bytes of text in `recentChat`.
    public internal(set) var recentChatBytes = 0

    var actions: [RoomAction] = []
    var needsPersisting = false

    public init(name: RoomName, configuration: RoomConfiguration = RoomConfiguration(), now: ServerInstant) {
        self.name = name
        self.configuration = configuration
        self.state = RoomState(
            seq: 0, session: nil, playback: .idle(at: now, cause: .create, by: nil),
            queue: [], policy: configuration.defaultPolicy)
    }

    public var isEmpty: Bool { members.isEmpty }

    public func member(_ id: MemberID) -> Member? { members[id] }

    /// While the group waits for players, how many it still waits for (0 otherwise):
    /// what text lines say instead of the report players send.
    public var playersAwaited: Int {
        state.playback.status == .waiting ? max(0, eligibleCount - readyCount) : 0
    }

    /// Every member as others see it, longest present first.
    public var participants: [Participant] {
        members.values.sorted { $0.arrival < $1.arrival }.map(participant)
    }

    // MARK: - Plumbing

    /// Runs one entry point: collects its actions and appends a snapshot to persist
    /// when the published state changed.
    mutating func collect(now: ServerInstant, _ body: (inout Room) -> Void) -> [RoomAction] {
        actions.removeAll(keepingCapacity: true)
        needsPersisting = false
        body(&self)
        if needsPersisting { actions.append(.persist(snapshot(at: now))) }
        return actions
    }

    /// The room-level state as a restart needs it.
    public func snapshot(at now: ServerInstant) -> RoomSnapshot {
        RoomSnapshot(room: name, state: state, savedAt: now, nextMemberNumber: nextMemberNumber,
                     nextActivityNumber: nextActivityNumber, nextQueueNumber: nextQueueNumber, itemSeq: itemSeq,
                     protection: protection)
    }

    /// Sends the current state to every member with the next seq.
    mutating func publish(_ cause: Cause, by: MemberID?) {
        state.seq += 1
        state.playback.cause = cause
        state.playback.by = by
        actions.append(.broadcast(.state(state)))
        needsPersisting = true
    }

    /// Marks the held position as new: readiness reported before counts no more.
    /// Call just before `publish`, whose seq becomes the anchor.
    mutating func renewReadinessAnchor() {
        readinessAnchor = state.seq + 1
        readyCount = 0
    }

    func isEligible(_ member: Member) -> Bool {
        member.connected && member.joined && playsCurrentItem(member) && !member.isSuspended
    }

    /// A player that can play the item: for an own copy, one that said it has it
    /// (a player without it is like a member with no player, for that item).
    func playsCurrentItem(_ member: Member) -> Bool {
        guard member.player else { return false }
        guard state.session?.activity.source.ownCopy != nil else { return true }
        return member.copy == true
    }

    func isReady(_ member: Member) -> Bool { member.readySeq >= readinessAnchor }

    func participant(_ member: Member) -> Participant {
        Participant(id: member.id, name: member.name, role: member.role, joined: member.joined,
                    player: member.player, ready: member.player && isReady(member),
                    suspensions: member.suspensions, autoplay: member.autoplay, connected: member.connected,
                    owner: member.owner, muted: member.muted, copy: member.copy, scope: member.scope,
                    software: member.software)
    }

    // MARK: - Member bookkeeping
    //
    // Three paths, and no other code touches `members`, the indexes or the
    // counters: `insertMember` when a member arrives or is restored, `modify` for
    // every change of a member present, `deleteMember` when it is forgotten. Each
    // keeps the counters, the name and token indexes and the store in step.

    /// Adds a member. `stored` is what the store already holds of it (a restored
    /// member), so that a record the store has is not written again.
    mutating func insertMember(_ member: Member, stored: MemberRecord? = nil) {
        members[member.id] = member
        count(member, sign: 1)
        nameIndex[Self.nameKey(member.name)] = member.id
        indexLookalikes(of: member.name, for: member.id)
        tokenIndex[member.resumeToken] = member.id
        if member.record != stored { actions.append(.persistMember(member.record)) }
    }

    /// Changes one member present.
    mutating func modify(_ id: MemberID, _ change: (inout Member) -> Void) {
        guard var member = members[id] else { return }
        let before = member
        count(member, sign: -1)
        change(&member)
        count(member, sign: 1)
        members[id] = member
        if member.name != before.name {
            nameIndex[Self.nameKey(before.name)] = nil
            nameIndex[Self.nameKey(member.name)] = id
            forgetLookalikes(of: before.name, for: id)
            indexLookalikes(of: member.name, for: id)
        }
        if member.record != before.record { actions.append(.persistMember(member.record)) }
    }

    /// Forgets a member for good, with the timers armed for it. Returns what it was.
    mutating func deleteMember(_ id: MemberID) -> Member? {
        guard let member = members.removeValue(forKey: id) else { return nil }
        count(member, sign: -1)
        nameIndex[Self.nameKey(member.name)] = nil
        forgetLookalikes(of: member.name, for: id)
        tokenIndex[member.resumeToken] = nil
        if !member.connected {
            actions.append(.cancel(.resumeExpires(id, serial: member.disconnectSerial)))
        }
        if member.suspensions.contains(.catchup) {
            actions.append(.cancel(.catchupEnds(id, serial: member.catchupSerial)))
        }
        actions.append(.forgetMember(id))
        // The snapshot carries the member counter: kept now, a restart numbers
        // newcomers after this member even once its record is gone.
        needsPersisting = true
        return member
    }

    /// Names are found ignoring case.
    static func nameKey(_ name: DisplayName) -> String { name.text.lowercased() }

    /// A key already held (a name restored from before the lookalike rules) stays
    /// with its holder; `uniqueName` keeps new names off every held key.
    mutating func indexLookalikes(of name: DisplayName, for id: MemberID) {
        for key in name.lookalikeKeys where lookalikeIndex[key] == nil { lookalikeIndex[key] = id }
    }

    mutating func forgetLookalikes(of name: DisplayName, for id: MemberID) {
        for key in name.lookalikeKeys where lookalikeIndex[key] == id { lookalikeIndex[key] = nil }
    }

    mutating func count(_ member: Member, sign: Int) {
        let eligible = isEligible(member)
        if eligible { eligibleCount += sign }
        if eligible && isReady(member) { readyCount += sign }
        if member.connected && member.joined && playsCurrentItem(member) { playerCount += sign }
        if member.role == .host { hostCount += sign }
        if member.connected { connectedCount += sign }
        if member.connected && member.joined && member.autoplay { autoplayCount += sign }
        if member.connected && member.joined, let slowest = slowestRoundTrip {
            if sign > 0 && member.roundTrip > slowest {
                slowestRoundTrip = member.roundTrip
            } else if sign < 0 && member.roundTrip >= slowest && slowest > .zero {
                slowestRoundTrip = nil
            }
        }
    }

    /// Announces a member's change to everyone.
    mutating func announce(_ id: MemberID, _ change: ParticipantChange) {
        guard let member = members[id] else { return }
        actions.append(.broadcast(.participant(participant(member), change: change)))
    }

    mutating func notify(_ text: String, cause: Cause?, by: MemberID?) {
        actions.append(.broadcast(.notice(Notice(text: text, cause: cause, by: by))))
    }

    mutating func tell(_ id: MemberID, _ text: String) {
        actions.append(.send(.notice(Notice(text: text, cause: nil, by: nil)), to: id))
    }

    mutating func refuse(_ id: MemberID, _ code: ErrorCode, _ command: CommandName?, _ message: String) {
        actions.append(.send(.error(CommandError(code, command: command, message: message)), to: id))
    }

    /// Gives a member the group's state again, e.g. when its last suspension ends
    /// and it rejoins at group time.
    mutating func handState(to id: MemberID) {
        actions.append(.send(.state(state), to: id))
    }

    func displayName(_ id: MemberID?) -> String {
        guard let id, let member = members[id] else { return "someone" }
        return member.name.text
    }
}

/// A coordinated start in progress (docs/concepts.md, rule 2): what began it,
/// reused when the group starts playing, and the wait limit armed for it.
struct WaitingEpisode: Hashable, Sendable {
    var cause: Cause
    var by: MemberID?
    var waitLimit: RoomTimer
}
