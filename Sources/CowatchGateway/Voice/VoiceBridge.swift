import CowatchCore
import CowatchTime

/// The node's link to its media server (Janus's AudioBridge, docs/voice.md), as
/// a value: the rooms' voice orders (`VoiceOrder`), what Janus sends and the
/// clock in; requests to send and what to tell the rooms out. The room decided
/// who may talk; this only keeps Janus's side in step with it.
///
/// One Janus session per node, kept alive by keepalives; one handle (the
/// control handle) for creating, muting and destroying rooms; one handle per
/// seat, which carries that member's call. A Janus room is made when a room's
/// first member takes a seat and destroyed when its last one leaves. Rooms
/// outlive the link that made them (its seats do not): each new link destroys
/// those of this node's it no longer holds (`Settings.mark`).
struct VoiceBridge {
    struct Settings: Sendable {
        /// The API secret (also the rooms' secret and the plugin's admin key).
        var secret: String
        /// Rooms with voice at once on this node.
        var maximumRooms: Int
        /// Between two keepalives of the session (Janus drops one after 60 s).
        var keepalive = MonotonicDuration.seconds(15)
        /// A request Janus has not answered in this long failed.
        var requestTimeout = MonotonicDuration.seconds(10)
        /// The first Janus room number: a node that restarts while Janus runs on
        /// must not meet the rooms it made before.
        var firstRoomNumber: Int64 = 1
        /// The description of every Janus room this node makes. A link that
        /// drops, or a node that stops without letting go (killed), leaves its
        /// rooms on Janus, empty; each new link lists Janus's rooms and destroys
        /// those with this mark that it does not hold. Another node's mark
        /// (nodes may share one Janus) is left alone.
        var mark = "cowatch"
        /// Janus's talking detection: packets averaged, and the level (dBov,
        /// negated: 127 is silence) under which a member speaks.
        var talkingPackets = 25
        var talkingLevel = 40
        /// The mixer's rate: wideband speech.
        var samplingRate = 16_000
        /// Packets (20 ms each) Janus holds of each speaker before mixing
        /// them: more rides out a jittery uplink, and each adds 20 ms to
        /// every listener's delay (docs/benchmarks.md).
        var jitterPackets = 3
    }

    enum Action: Hashable, Sendable {
        case connect
        /// Close the link (Janus stopped answering): `closed` follows.
        case disconnect
        case send(String)
        /// The member's call is up on Janus's side: its answer goes to the member.
        case joined(RoomName, MemberID, answer: String)
        /// The seat could not be had, or was lost; in words for the member.
        case failed(RoomName, MemberID, reason: String)
        case speaking(RoomName, MemberID, Bool)
        /// Every seat of the room is gone with the link.
        case ended(RoomName, reason: String)
        /// Rooms an earlier link of this node left on Janus were destroyed.
        case cleared(Int)
    }

    private enum Link: Hashable {
        case idle
        case down(retryAt: MonotonicInstant)
        case opening
        case creatingSession
        case attachingControl(session: Int64)
        case ready(session: Int64, control: Int64)
    }

    private enum Purpose: Hashable {
        case createSession, attachControl(session: Int64)
        /// The rooms on Janus, when the link is new: some may be this node's, left over.
        case listRooms
        case createRoom(RoomName)
        case attachSeat(RoomName, MemberID, participant: Int64)
        case join(RoomName, MemberID, participant: Int64)
        /// A mute, a destroy, a detach, a keepalive: nothing waits on it.
        case chore
    }

    private struct Pending: Hashable {
        var purpose: Purpose
        var deadline: MonotonicInstant
    }

    private struct Seat: Hashable {
        var participant: Int64
        var name: String
        var offer: String
        var muted: Bool
        var handle: Int64?
        /// The mute Janus was last told (nil before the join).
        var mutedOnJanus: Bool?
        var joined = false
        var speaking = false
    }

    private struct VoiceRoom: Hashable {
        var number: Int64
        var created = false
        var seats: [MemberID: Seat] = [:]
    }

    let settings: Settings
    private var link = Link.idle
    private var failures = 0
    private var lastKeepalive: MonotonicInstant?
    private var pending: [String: Pending] = [:]
    private var nextTransaction = 1
    private var nextRoomNumber: Int64
    private var nextParticipant: Int64 = 1
    private var rooms: [RoomName: VoiceRoom] = [:]
    private var handles: [Int64: (room: RoomName, member: MemberID)] = [:]
    private var roomNumbers: [Int64: RoomName] = [:]

    init(settings: Settings) {
        self.settings = settings
        nextRoomNumber = settings.firstRoomNumber
    }

    var isReady: Bool { if case .ready = link { true } else { false } }
    /// Links that failed in a row (the first one is worth a warning).
    var failuresInARow: Int { failures }
    var roomCount: Int { rooms.count }
    var seatCount: Int { rooms.values.reduce(0) { $0 + $1.seats.count } }

    // MARK: - The link

    mutating func start() -> [Action] {
        guard link == .idle else { return [] }
        link = .opening
        return [.connect]
    }

    mutating func opened(now: MonotonicInstant) -> [Action] {
        guard link == .opening else { return [] }
        link = .creatingSession
        return [send(["janus": "create"], .createSession, now: now)]
    }

    /// The link closed, or never opened: every seat is gone; a new link is
    /// tried after a delay that grows with each failure in a row (at most 30 s).
    mutating func closed(now: MonotonicInstant) -> [Action] {
        if case .ready = link { failures = 0 }
        failures += 1
        link = .down(retryAt: now + .seconds(min(30, 0.5 * Double(1 << min(failures, 6)))))
        pending.removeAll()
        handles.removeAll()
        roomNumbers.removeAll()
        let ended = rooms.keys.sorted { $0.rawValue < $1.rawValue }
        rooms.removeAll()
        lastKeepalive = nil
        return ended.map { .ended($0, reason: "the media server went away; join again when it is back") }
    }

    /// The keepalive, the requests that went unanswered, a reconnect when due.
    mutating func tick(now: MonotonicInstant) -> [Action] {
        switch link {
        case .down(let retryAt) where now >= retryAt:
            link = .opening
            return [.connect]
        case .ready(let session, _):
            var actions: [Action] = []
            if lastKeepalive.map({ now - $0 >= settings.keepalive }) ?? true {
                lastKeepalive = now
                actions.append(send(["janus": "keepalive", "session_id": session], .chore, now: now))
            }
            return actions + expire(now: now)
        case .creatingSession, .attachingControl:
            return pending.values.contains { now >= $0.deadline } ? [.disconnect] : []
        default:
            return []
        }
    }

    private mutating func expire(now: MonotonicInstant) -> [Action] {
        let late = pending.filter { now >= $0.value.deadline }.sorted { $0.key < $1.key }
        var actions: [Action] = []
        for (transaction, entry) in late {
            pending[transaction] = nil
            switch entry.purpose {
            case .createRoom(let room):
                actions += failRoom(room, reason: "the media server did not answer", now: now)
            case .attachSeat(let room, let member, _), .join(let room, let member, _):
                actions += failSeat(room, member, reason: "the media server did not answer", now: now)
            case .createSession, .attachControl, .listRooms, .chore:
                break
            }
        }
        return actions
    }

    // MARK: - The rooms' orders

    /// `offer`: the member's session description, already decoded and checked.
    mutating func join(_ room: RoomName, _ member: MemberID, name: String, offer: String, muted: Bool,
                       now: MonotonicInstant) -> [Action] {
        guard case .ready(_, let control) = link else {
            return [.failed(room, member, reason: "the media server is out of reach; try again shortly")]
        }
        var actions = rooms[room]?.seats[member] != nil ? leave(room, member, now: now) : []
        if rooms[room] == nil {
            guard rooms.count < settings.maximumRooms else {
                return actions + [.failed(room, member, reason: "this server's voice is full (\(settings.maximumRooms) rooms talk now); try again later")]
            }
            let number = nextRoomNumber
            nextRoomNumber += 1
            rooms[room] = VoiceRoom(number: number)
            roomNumbers[number] = room
            actions.append(send(message(control, [
                "request": "create", "room": number, "description": settings.mark,
                "admin_key": settings.secret, "secret": settings.secret,
                "is_private": true, "permanent": false, "sampling_rate": settings.samplingRate,
                "audiolevel_event": true, "audio_active_packets": settings.talkingPackets,
                "audio_level_average": settings.talkingLevel, "default_prebuffering": settings.jitterPackets,
            ]), .createRoom(room), now: now))
        }
        let participant = nextParticipant
        nextParticipant += 1
        rooms[room]?.seats[member] = Seat(participant: participant, name: name, offer: offer, muted: muted)
        actions.append(send(["janus": "attach", "plugin": JanusWire.plugin, "session_id": session],
                            .attachSeat(room, member, participant: participant), now: now))
        return actions
    }

    mutating func leave(_ room: RoomName, _ member: MemberID, now: MonotonicInstant) -> [Action] {
        guard let seat = rooms[room]?.seats.removeValue(forKey: member) else { return [] }
        var actions: [Action] = []
        if let handle = seat.handle {
            handles[handle] = nil
            actions.append(send(["janus": "detach", "session_id": session, "handle_id": handle], .chore, now: now))
        }
        if let voiceRoom = rooms[room], voiceRoom.seats.isEmpty {
            rooms[room] = nil
            roomNumbers[voiceRoom.number] = nil
            if voiceRoom.created, case .ready(_, let control) = link {
                actions.append(send(message(control, ["request": "destroy", "room": voiceRoom.number,
                                                      "secret": settings.secret]), .chore, now: now))
            }
        }
        return actions
    }

    /// The room is no longer served here (it moved to another node, or
    /// expired): its seats let go of Janus, whose room goes with the last one.
    /// Its members, told to reconnect, take their seats again where it is now.
    mutating func forget(_ room: RoomName, now: MonotonicInstant) -> [Action] {
        guard let seats = rooms[room]?.seats.keys.sorted(by: { $0.rawValue < $1.rawValue }) else { return [] }
        return seats.flatMap { leave(room, $0, now: now) }
    }

    mutating func mute(_ room: RoomName, _ member: MemberID, _ on: Bool, now: MonotonicInstant) -> [Action] {
        guard var seat = rooms[room]?.seats[member] else { return [] }
        seat.muted = on
        rooms[room]?.seats[member] = seat
        return syncMute(room, member, now: now)
    }

    private mutating func syncMute(_ room: RoomName, _ member: MemberID, now: MonotonicInstant) -> [Action] {
        guard let voiceRoom = rooms[room], var seat = voiceRoom.seats[member], seat.joined,
              seat.mutedOnJanus != seat.muted, case .ready(_, let control) = link
        else { return [] }
        seat.mutedOnJanus = seat.muted
        rooms[room]?.seats[member] = seat
        return [send(message(control, ["request": seat.muted ? "mute" : "unmute", "room": voiceRoom.number,
                                       "id": seat.participant, "secret": settings.secret]), .chore, now: now)]
    }

    // MARK: - What Janus sends

    mutating func received(_ message: JanusMessage, now: MonotonicInstant) -> [Action] {
        if let transaction = message.transaction, let entry = pending[transaction] {
            if message.kind == "ack" { return [] }
            pending[transaction] = nil
            return answered(entry.purpose, message, now: now)
        }
        switch message.kind {
        case "event":
            guard let event = message.audioBridge else { return [] }
            return pluginEvent(event, sender: message.sender)
        case "hangup":
            guard let sender = message.sender, let seat = handles[sender] else { return [] }
            return failSeat(seat.room, seat.member, reason: "the call ended (\(message.reason ?? "hung up"))", now: now)
        case "timeout":
            // Janus forgot the session: nothing on it stands any more.
            return [.disconnect]
        default:
            return []
        }
    }

    private mutating func answered(_ purpose: Purpose, _ message: JanusMessage, now: MonotonicInstant) -> [Action] {
        let failure = Self.failure(message)
        switch purpose {
        case .chore:
            return []
        case .createSession:
            guard failure == nil, let session = message.createdID else { return [.disconnect] }
            link = .attachingControl(session: session)
            return [send(["janus": "attach", "plugin": JanusWire.plugin, "session_id": session],
                         .attachControl(session: session), now: now)]
        case .attachControl(let session):
            guard failure == nil, let control = message.createdID else { return [.disconnect] }
            link = .ready(session: session, control: control)
            failures = 0
            lastKeepalive = now
            return [send(self.message(control, ["request": "list", "admin_key": settings.secret]), .listRooms, now: now)]
        case .listRooms:
            guard failure == nil, case .ready(_, let control) = link else { return [] }
            let leftOver = (message.audioBridge?.rooms ?? [])
                .filter { $0.description == settings.mark && roomNumbers[$0.number] == nil }
                .map(\.number).sorted()
            guard !leftOver.isEmpty else { return [] }
            return leftOver.map {
                send(self.message(control, ["request": "destroy", "room": $0, "secret": settings.secret]), .chore, now: now)
            } + [.cleared(leftOver.count)]
        case .createRoom(let room):
            if let failure { return failRoom(room, reason: failure, now: now) }
            guard rooms[room] != nil else { return [] }
            rooms[room]?.created = true
            let waiting = rooms[room]?.seats.filter { $0.value.handle != nil }.keys.sorted { $0.rawValue < $1.rawValue } ?? []
            return waiting.flatMap { sendJoin(room, $0, now: now) }
        case .attachSeat(let room, let member, let participant):
            guard let handle = message.createdID, failure == nil else {
                return failSeat(room, member, reason: failure ?? "the media server refused the call", now: now)
            }
            guard rooms[room]?.seats[member]?.participant == participant else {
                // Left while the handle was being made.
                return [send(["janus": "detach", "session_id": session, "handle_id": handle], .chore, now: now)]
            }
            rooms[room]?.seats[member]?.handle = handle
            handles[handle] = (room, member)
            return rooms[room]?.created == true ? sendJoin(room, member, now: now) : []
        case .join(let room, let member, let participant):
            guard rooms[room]?.seats[member]?.participant == participant else { return [] }
            if let failure { return failSeat(room, member, reason: failure, now: now) }
            guard message.audioBridge?.name == "joined", let answer = message.answer else {
                return failSeat(room, member, reason: "the media server did not answer the call", now: now)
            }
            rooms[room]?.seats[member]?.joined = true
            return [.joined(room, member, answer: answer)] + syncMute(room, member, now: now)
        }
    }

    private mutating func sendJoin(_ room: RoomName, _ member: MemberID, now: MonotonicInstant) -> [Action] {
        guard let voiceRoom = rooms[room], let seat = voiceRoom.seats[member], let handle = seat.handle else { return [] }
        rooms[room]?.seats[member]?.mutedOnJanus = seat.muted
        var fields = message(handle, [
            "request": "join", "room": voiceRoom.number, "id": seat.participant, "display": seat.name,
            "muted": seat.muted,
        ])
        let jsep: [String: any Sendable] = ["type": "offer", "sdp": seat.offer, "trickle": false]
        fields["jsep"] = jsep
        return [send(fields, .join(room, member, participant: seat.participant), now: now)]
    }

    private mutating func pluginEvent(_ event: JanusMessage.AudioBridge, sender: Int64?) -> [Action] {
        guard event.name == "talking" || event.name == "stopped-talking",
              let number = event.room, let room = roomNumbers[number], let participant = event.participant,
              let (member, seat) = rooms[room]?.seats.first(where: { $0.value.participant == participant })
        else { return [] }
        // Janus tells every handle of the room: the first tells the room.
        let speaking = event.name == "talking"
        guard seat.speaking != speaking else { return [] }
        rooms[room]?.seats[member]?.speaking = speaking
        return [.speaking(room, member, speaking)]
    }

    private mutating func failSeat(_ room: RoomName, _ member: MemberID, reason: String, now: MonotonicInstant) -> [Action] {
        guard rooms[room]?.seats[member] != nil else { return [] }
        return leave(room, member, now: now) + [.failed(room, member, reason: reason)]
    }

    private mutating func failRoom(_ room: RoomName, reason: String, now: MonotonicInstant) -> [Action] {
        guard let voiceRoom = rooms[room] else { return [] }
        return voiceRoom.seats.keys.sorted { $0.rawValue < $1.rawValue }.flatMap {
            failSeat(room, $0, reason: reason, now: now)
        }
    }

    /// Janus's refusal, in words, or nil for a success.
    private static func failure(_ message: JanusMessage) -> String? {
        if message.kind == "error" {
            return "the media server refused (\(message.errorReason ?? "error \(message.errorCode ?? 0)"))"
        }
        if let event = message.audioBridge, let code = event.errorCode {
            return "the media server refused (\(event.error ?? "error \(code)"))"
        }
        return nil
    }

    // MARK: - Requests

    private var session: Int64 {
        switch link {
        case .ready(let session, _), .attachingControl(let session): session
        default: 0
        }
    }

    private func message(_ handle: Int64, _ body: [String: any Sendable]) -> [String: any Sendable] {
        ["janus": "message", "session_id": session, "handle_id": handle, "body": body]
    }

    private mutating func send(_ fields: [String: any Sendable], _ purpose: Purpose, now: MonotonicInstant) -> Action {
        let transaction = "t\(nextTransaction)"
        nextTransaction += 1
        pending[transaction] = Pending(purpose: purpose, deadline: now + settings.requestTimeout)
        var fields = fields
        fields["transaction"] = transaction
        fields["apisecret"] = settings.secret
        return .send(JanusWire.request(fields))
    }
}
