import CowatchCore
import CowatchCoreChecks
import CowatchTime
import SlashCommands

/// A room driven like the gateway drives it, with a manual clock and named
/// members, so each rule reads as a few sentences:
///
///     var room = Scenario()
///     room.connect("alice"); room.connect("bob", player: true)
///     room.say("alice", "/watch https://example.org/a.mp4 A")
///     room.say("alice", "/play")
///     #expect(room.playback.status == .waiting)
///
/// The room's actions are carried out by `RoomHost` (Tools/CowatchCoreChecks),
/// as for the randomized test: lines are parsed with the real `LineParser` and a
/// parse error goes to the sender; broadcasts reach every connected member's inbox;
/// timers fire when `advance` passes them.
struct Scenario {
    private(set) var host: RoomHost
    private(set) var ids: [String: MemberID] = [:]
    /// The actions of the last input.
    private(set) var last: [RoomAction] = []
    /// Every event each member received, in order.
    private(set) var inbox: [MemberID: [RoomEvent]] = [:]
    private(set) var tokens: [String: String] = [:]
    /// Each name's latest connection, as the host knows it.
    private var connectionOf: [String: Int] = [:]
    private var connectionNumber = 0

    init(configuration: RoomConfiguration = RoomConfiguration(), startingAt milliseconds: Int64 = 1_700_000_000_000) {
        let now = ServerInstant(milliseconds: milliseconds)
        host = RoomHost(Room(name: RoomName("lobby")!, configuration: configuration, now: now), now: now)
    }

    var room: Room { host.room }
    var now: ServerInstant { host.now }

    // MARK: - Inputs

    /// Connects a member under `name` (the key tests use, even if the room gives
    /// it a suffixed display name).
    @discardableResult
    mutating func connect(_ name: String, player: Bool = false, join: Bool = true,
                          resume: String? = nil, displayName: String? = nil, device: String? = nil,
                          address: String? = nil, ownerKey: String? = nil, newOwnerKey: String? = nil,
                          invite: String? = nil, password: String? = nil, token: String? = nil) -> MemberID? {
        connectionNumber += 1
        let request = ConnectRequest(name: displayName ?? name, player: player, join: join,
                                     resume: resume, newToken: "token-\(connectionNumber)", ownerKey: ownerKey,
                                     newOwnerKey: newOwnerKey, device: device, address: address, invite: invite,
                                     password: password, token: token)
        let (result, outcome) = host.open(connectionNumber, request)
        switch result {
        case .accepted(let id, let actions):
            ids[name] = id
            connectionOf[name] = connectionNumber
            if case .welcome(let welcome)? = actions.firstEvent(to: id) { tokens[name] = welcome.resume }
            record(outcome)
            return id
        case .refused(let error):
            last = [.send(.error(error), to: MemberID("refused"))]
            return nil
        }
    }

    /// Sends lines of text from a member, as typed, one after another; `last`
    /// holds the actions of the last line.
    mutating func say(_ name: String, _ lines: String...) {
        for text in lines { record(host.say(text, from: id(name)).outcome) }
    }

    mutating func disconnect(_ name: String) {
        _ = id(name)
        guard let connection = connectionOf[name] else { return }
        record(host.close(connection))
    }

    /// The member's client closes with 1000: it is leaving.
    mutating func leave(_ name: String) {
        _ = id(name)
        guard let connection = connectionOf[name] else { return }
        record(host.close(connection, leaving: true))
    }

    /// Reconnects a member with the resume token it was welcomed with.
    @discardableResult
    mutating func reconnect(_ name: String, player: Bool = false) -> MemberID? {
        connect(name, player: player, resume: tokens[name])
    }

    /// The media server's link reports to the room (`Room.voiceJoined`...).
    mutating func voiceReport(_ report: (inout Room, ServerInstant) -> [RoomAction]) {
        record(host.voiceReport(report))
    }

    /// The orders the room gave the media server's link in the last step.
    var voiceOrders: [VoiceOrder] {
        last.compactMap { if case .voice(let order) = $0 { order } else { nil } }
    }

    mutating func measure(_ name: String, roundTrip milliseconds: Int64) {
        record(host.roundTripMeasured(ServerInterval(milliseconds: milliseconds), for: id(name)))
    }

    /// Moves the clock forward, firing every timer that comes due on the way, in
    /// order. `last` holds the actions of all of them.
    mutating func advance(milliseconds: Int64) {
        let target = now.advanced(by: ServerInterval(milliseconds: milliseconds))
        var collected: [RoomAction] = []
        while let (_, _, outcome) = host.fireNextTimer(dueBy: target) {
            deliver(outcome)
            collected += outcome.actions
        }
        host.setClock(target)
        last = collected
    }

    mutating func advance(seconds: Double) {
        advance(milliseconds: Int64((seconds * 1000).rounded()))
    }

    /// A timer that was cancelled or has fired fires (again) `milliseconds` from
    /// now, without moving the clock: the actions it gave.
    mutating func fireStale(_ timer: RoomTimer, inMilliseconds milliseconds: Int64) -> [RoomAction] {
        let outcome = host.fireAgain(timer, at: now.advanced(by: ServerInterval(milliseconds: milliseconds)))
        record(outcome)
        return outcome.actions
    }

    /// Every member says `/ready` for the current seq.
    mutating func allReady(_ names: String...) {
        for name in names { say(name, "/ready \(room.state.seq)") }
    }

    private mutating func record(_ outcome: RoomHost.Outcome) {
        last = outcome.actions
        deliver(outcome)
    }

    private mutating func deliver(_ outcome: RoomHost.Outcome) {
        for delivery in outcome.deliveries { inbox[delivery.member, default: []].append(delivery.event) }
    }

    // MARK: - What happened

    func id(_ name: String) -> MemberID {
        guard let id = ids[name] else { fatalError("no member \(name) in this scenario") }
        return id
    }

    var state: RoomState { room.state }
    var playback: Playback { room.state.playback }
    func member(_ name: String) -> Member? { room.member(id(name)) }
    /// The group's position at the scenario's now.
    var position: Double { room.state.playback.position(at: now).seconds }

    /// States the last input broadcast.
    var published: [RoomState] {
        last.compactMap { if case .broadcast(.state(let state), _) = $0 { state } else { nil } }
    }

    /// The error the last input sent to `name`, if any.
    func error(for name: String) -> CommandError? {
        sentAlone(to: id(name)) { if case .error(let error) = $0 { error } else { nil } }.first
    }

    /// What `pick` finds in the events the last input sent to `id` alone, in order.
    private func sentAlone<Found>(to id: MemberID, _ pick: (RoomEvent) -> Found?) -> [Found] {
        last.compactMap { action in
            if case .send(let event, let to) = action, to == id { pick(event) } else { nil }
        }
    }

    /// Events the last input sent to `name` alone or broadcast to it.
    func events(for name: String) -> [RoomEvent] {
        let id = self.id(name)
        return last.compactMap { action in
            switch action {
            case .send(let event, let to) where to == id: event
            case .broadcast(let event, let except) where except != id && host.isConnected(id): event
            default: nil
            }
        }
    }

    /// Notices broadcast by the last input.
    var notices: [Notice] {
        last.compactMap { if case .broadcast(.notice(let notice), _) = $0 { notice } else { nil } }
    }

    /// Participant events broadcast by the last input, with what changed.
    var participantChanges: [(Participant, ParticipantChange)] {
        last.compactMap { if case .broadcast(.participant(let p, let change), _) = $0 { (p, change) } else { nil } }
    }

    func isArmed(_ timer: RoomTimer) -> Bool { host.isArmed(timer) }
    var armedWaitLimits: [RoomTimer] {
        host.timers.map(\.timer).filter { if case .waitLimit = $0 { true } else { false } }
    }
}

extension Array where Element == RoomAction {
    func firstEvent(to id: MemberID) -> RoomEvent? {
        for action in self {
            if case .send(let event, let to) = action, to == id { return event }
        }
        return nil
    }
}

// MARK: - Helpers for the rule and command suites

extension Scenario {
    /// The lead of a coordinated start when no round trip was measured (the minimum).
    static let minimumLead = ServerInterval(milliseconds: 150)

    /// Members connected in the order given (the first is the host), those in
    /// `players` as player connections, and the first sharing
    /// `https://example.org/a.mp4` titled "Episode 1": everyone joined, paused at 0.
    static func sharing(_ names: String..., players: Set<String> = [],
                        configuration: RoomConfiguration = RoomConfiguration()) -> Scenario {
        var room = Scenario(configuration: configuration)
        for name in names { room.connect(name, player: players.contains(name)) }
        if let first = names.first { room.say(first, "/watch https://example.org/a.mp4 Episode 1") }
        return room
    }

    /// The test name a member was connected under.
    func name(of id: MemberID) -> String? {
        ids.first { $0.value == id }?.key
    }

    /// Every connected, joined, unsuspended player reports ready for the current seq.
    mutating func everyoneReady() {
        let seq = state.seq
        for participant in room.participants
        where participant.connected && participant.joined && participant.player && participant.suspensions.isEmpty {
            if let name = name(of: participant.id) { say(name, "/ready \(seq)") }
        }
    }

    /// `/play` from `name`, then every eligible player ready: the group plays from
    /// a start instant a lead ahead.
    mutating func playTogether(by name: String) {
        say(name, "/play")
        everyoneReady()
    }

    /// Moves the clock to the start instant when it lies ahead, then `seconds`
    /// further, so a playing group has advanced exactly `rate * seconds`.
    mutating func watchFor(seconds: Double) {
        let untilStart = Swift.max(0, playback.at.interval(since: now).milliseconds)
        advance(milliseconds: untilStart + Int64((seconds * 1000).rounded()))
    }

    /// A member as others see it now (nil once it left the room).
    func participant(_ name: String) -> Participant? {
        let id = self.id(name)
        return room.participants.first { $0.id == id }
    }

    /// Every state a member received since it connected, in order.
    func states(receivedBy name: String) -> [RoomState] {
        (inbox[id(name)] ?? []).compactMap { if case .state(let state) = $0 { state } else { nil } }
    }

    /// The state the last input sent to this member alone (a hand-over), if any.
    func handedState(to name: String) -> RoomState? {
        sentAlone(to: id(name)) { if case .state(let state) = $0 { state } else { nil } }.first
    }

    /// The reply the last input sent to this member, if any.
    func reply(for name: String) -> Reply? {
        events(for: name).lazy.compactMap { if case .reply(let reply) = $0 { reply } else { nil } }.first
    }

    /// Texts of the notices the last input sent to this member alone.
    func told(_ name: String) -> [String] {
        sentAlone(to: id(name)) { if case .notice(let notice) = $0 { notice.text } else { nil } }
    }

    /// Chat lines the last input delivered to this member.
    func chats(for name: String) -> [ChatLine] {
        events(for: name).compactMap { if case .chat(let line) = $0 { line } else { nil } }
    }

    /// The catch-up instructions the last input sent to this member, if any.
    func catchup(for name: String) -> Catchup? {
        events(for: name).lazy.compactMap { if case .catchup(let catchup) = $0 { catchup } else { nil } }.first
    }

    /// Departures the last input broadcast.
    var departures: [(MemberID, DepartureReason)] {
        last.compactMap { if case .broadcast(.participantLeft(let id, _, let reason), _) = $0 { (id, reason) } else { nil } }
    }

    /// Connections the last input asked the gateway to close.
    var disconnections: [MemberID] {
        last.compactMap { if case .closeConnection(let id, _) = $0 { id } else { nil } }
    }

    /// Timers the last input scheduled, with their instants.
    var scheduled: [(RoomTimer, ServerInstant)] {
        last.compactMap { if case .schedule(let timer, let due) = $0 { (timer, due) } else { nil } }
    }

    /// The refusal of the last `connect`, if it was refused.
    var connectRefusal: CommandError? {
        sentAlone(to: MemberID("refused")) { if case .error(let error) = $0 { error } else { nil } }.first
    }

    /// Whether the last input announced this change of this member.
    func announced(_ name: String, _ change: ParticipantChange) -> Bool {
        let id = self.id(name)
        return participantChanges.contains { $0.0.id == id && $0.1 == change }
    }

    var armedCatchupEnds: [RoomTimer] {
        host.timers.map(\.timer).filter { if case .catchupEnds = $0 { true } else { false } }
    }
}
