import CowatchCore
import CowatchTime
import SlashCommands

/// A room hosted the way the gateway hosts it (`Sources/CowatchGateway/Gateway/Gateway+Interpreter.swift`
/// and `Gateway+Connections.swift`), without sockets or a clock, for the scenario
/// tests, the randomized test and the room fuzzer alike. It is the one place
/// outside the gateway that carries out `RoomAction`s:
///
/// - events go to open connections: a broadcast to every one but the excepted
///   member's, a `send` to the member's;
/// - timers are kept in the order they were scheduled and fire, earliest first,
///   when the caller moves the clock;
/// - `closeConnection` closes the member's connections without telling the room,
///   which has already forgotten the member;
/// - a connection that resumes a member already connected elsewhere replaces
///   that other connection, silently for the room, as the gateway does;
/// - `forgetRoom` sets `forgotten`;
/// - persistence actions are the store's business and are only returned.
///
/// Connections are keyed by numbers the caller chooses (a test's member names, the
/// randomized test's slots). Everything here iterates in key or schedule order, so
/// a sequence of inputs always runs the same way.
public struct RoomHost {
    /// What one input did: the room's actions, in order, and the events they
    /// delivered to open connections.
    public struct Outcome {
        public var actions: [RoomAction] = []
        public var deliveries: [Delivery] = []

        public init() {}
    }

    /// An event that reached an open connection, and the index in `actions` of
    /// the action that sent it.
    public struct Delivery {
        public var connection: Int
        public var member: MemberID
        public var event: RoomEvent
        public var action: Int
    }

    public private(set) var room: Room
    public private(set) var now: ServerInstant
    /// Open connections and the member each one is bound to, in key order.
    public private(set) var connections: [(key: Int, member: MemberID)] = []
    /// Armed timers in the order they were scheduled (ties fire in that order).
    public private(set) var timers: [(timer: RoomTimer, due: ServerInstant)] = []
    /// Every timer cancelled or fired so far.
    public private(set) var retired: Set<RoomTimer> = []
    /// The room expired and asked to be forgotten (the gateway drops it and its store).
    public private(set) var forgotten = false

    let parser = LineParser()

    public init(_ room: Room, now: ServerInstant) {
        self.room = room
        self.now = now
    }

    public func member(on connection: Int) -> MemberID? {
        connections.first { $0.key == connection }?.member
    }

    public func isOpen(_ connection: Int) -> Bool { member(on: connection) != nil }

    /// Whether the member has an open connection.
    public func isConnected(_ member: MemberID) -> Bool {
        connections.contains { $0.member == member }
    }

    public func isArmed(_ timer: RoomTimer) -> Bool {
        timers.contains { $0.timer == timer }
    }

    // MARK: - Inputs

    /// A connection opens on `connection` (a key already open is bound afresh, as
    /// a socket the server never heard close). On acceptance, other connections of
    /// the same member are closed first, then the actions are carried out.
    public mutating func open(_ connection: Int, _ request: ConnectRequest) -> (ConnectOutcome, Outcome) {
        let outcome = room.connectionOpened(request, now: now)
        guard case .accepted(let member, let actions) = outcome else { return (outcome, Outcome()) }
        connections.removeAll { $0.member == member || $0.key == connection }
        connections.append((connection, member))
        connections.sort { $0.key < $1.key }
        return (outcome, carryOut(actions))
    }

    /// The connection closed (the peer went away, or, `leaving`, said goodbye
    /// with 1000): the room hears of it.
    public mutating func close(_ connection: Int, leaving: Bool = false) -> Outcome {
        guard let member = member(on: connection) else { return Outcome() }
        connections.removeAll { $0.key == connection }
        return carryOut(room.connectionClosed(member, leaving: leaving, now: now))
    }

    /// A line as typed, from a member: parsed as the gateway parses it; a parse
    /// error goes back to the sender alone. `parsed` is nil for a refused line.
    public mutating func say(_ text: String, from member: MemberID) -> (parsed: InputLine?, outcome: Outcome) {
        switch parser.parse(text) {
        case .success(let line):
            return (line, carryOut(room.receive(line, from: member, now: now)))
        case .failure(let error):
            return (nil, carryOut([.send(.error(error), to: member)]))
        }
    }

    public mutating func roundTripMeasured(_ roundTrip: ServerInterval, for member: MemberID) -> Outcome {
        carryOut(room.roundTripMeasured(roundTrip, for: member, now: now))
    }

    /// What a media server link reports (`Room.voiceJoined` and the others),
    /// as the gateway hands it to the room.
    public mutating func voiceReport(_ report: (inout Room, ServerInstant) -> [RoomAction]) -> Outcome {
        carryOut(report(&room, now))
    }

    /// Fires the earliest timer due by `target`, `lateness` after its due instant
    /// but never after `target`; nil when none is due. The clock moves to the
    /// firing instant.
    public mutating func fireNextTimer(dueBy target: ServerInstant, lateness: ServerInterval = .zero)
        -> (timer: RoomTimer, due: ServerInstant, outcome: Outcome)? {
        var earliest: Int?
        for index in timers.indices where timers[index].due <= target {
            if let current = earliest, timers[current].due <= timers[index].due { continue }
            earliest = index
        }
        guard let index = earliest else { return nil }
        let (timer, due) = timers.remove(at: index)
        retired.insert(timer)
        now = Swift.min(target, Swift.max(now, due.advanced(by: lateness)))
        return (timer, due, carryOut(room.timerFired(timer, now: now)))
    }

    /// Fires a timer that was cancelled or has fired already, as when the
    /// gateway's cancel races with the timer: the room must see it is stale.
    /// `at` (default now) is when it fires; the clock does not move.
    public mutating func fireAgain(_ timer: RoomTimer, at instant: ServerInstant? = nil) -> Outcome {
        carryOut(room.timerFired(timer, now: instant ?? now))
    }

    /// Moves the clock forward (never back) without firing anything; callers fire
    /// the timers due on the way first.
    public mutating func setClock(_ instant: ServerInstant) {
        now = Swift.max(now, instant)
    }

    // MARK: - Carrying out

    /// Carries out the actions in order, as the gateway's `run` does.
    mutating func carryOut(_ actions: [RoomAction]) -> Outcome {
        var outcome = Outcome()
        outcome.actions = actions
        for (index, action) in actions.enumerated() {
            switch action {
            case .broadcast(let event, let except):
                for connection in connections where connection.member != except {
                    outcome.deliveries.append(Delivery(connection: connection.key, member: connection.member,
                                                       event: event, action: index))
                }
            case .send(let event, let member):
                for connection in connections where connection.member == member {
                    outcome.deliveries.append(Delivery(connection: connection.key, member: member,
                                                       event: event, action: index))
                }
            case .schedule(let timer, let due):
                timers.removeAll { $0.timer == timer }
                timers.append((timer, due))
            case .cancel(let timer):
                if let armed = timers.firstIndex(where: { $0.timer == timer }) {
                    timers.remove(at: armed)
                    retired.insert(timer)
                }
            case .closeConnection(let member, _):
                connections.removeAll { $0.member == member }
            case .forgetRoom:
                forgotten = true
            // The media server's link is the gateway's; these checks have none.
            case .persist, .persistMember, .forgetMember, .persistChat, .voice:
                break
            }
        }
        return outcome
    }
}
