@testable import CowatchGateway
import CowatchCore
import CowatchStore
import CowatchTime
import Testing

/// The gateway's own rules (`Sources/CowatchGateway/Decisions/GatewayState.swift`) as the
/// core's are tested: a value, a manual clock, one sentence per rule; no socket,
/// no thread, no sleep.
struct Door {
    var state: GatewayState
    var now = GatewayState.Now(server: ServerInstant(milliseconds: 1_800_000_000_000),
                               monotonic: MonotonicInstant(microseconds: 5_000_000))
    var rooms: Set<String> = []

    init(cluster: Bool = false, store: Bool = true, _ configure: (inout GatewayConfiguration) -> Void = { _ in }) {
        var configuration = GatewayConfiguration()
        configure(&configuration)
        state = GatewayState(settings: GatewayState.Settings(configuration, cluster: cluster, store: store))
    }

    mutating func advance(seconds: Double) {
        now.server = now.server.advanced(by: ServerInterval(seconds: seconds))
        now.monotonic = now.monotonic + .seconds(seconds)
    }

    static func request(room: String? = "lobby", from address: String = "192.0.2.1", host: String? = nil,
                        origin: String? = nil, create: String? = nil, echo: Bool = false) -> UpgradeRequest {
        UpgradeRequest(room: room.flatMap { RoomName($0) }, echo: echo, name: "alice", resume: nil, player: false, join: true,
                       owner: nil, device: nil, invite: nil, password: nil, token: nil, create: create, origin: origin,
                       hostHeader: host, address: address)
    }

    /// What the door answers an upgrade to `request`.
    mutating func offer(_ request: UpgradeRequest) -> GatewayAction {
        state.upgradeOffered(request, roomExists: request.room.map { rooms.contains($0.rawValue) } ?? false, at: now)
    }

    /// The status an upgrade is refused with; nil when it is let in.
    mutating func status(_ request: UpgradeRequest) -> UInt32? {
        if case .refuseUpgrade(let refusal) = offer(request) { refusal.status } else { nil }
    }

    /// An upgrade let in and its connection opened, creating its room if new; its number.
    @discardableResult
    mutating func connect(_ request: UpgradeRequest = Door.request()) -> UInt64? {
        guard offer(request) == .admitUpgrade else { return nil }
        let id = state.upgradeAdmitted(request)
        _ = state.connectionOpened(id)
        if let room = request.room?.rawValue, !rooms.contains(room) {
            rooms.insert(room)
            _ = state.roomCreated(by: request.address, token: request.create, at: now.monotonic)
        }
        return id
    }

    mutating func housekeeping() -> [GatewayAction] {
        state.housekeeping(at: now)
    }
}

extension RoomName {
    static let lobby = RoomName("lobby")!
}

@Suite("The gateway's door: who may open a connection")
struct GatewayDoorTests {
    @Test("an upgrade without a room name is refused with 400; the echo endpoint needs none")
    func roomName() {
        var door = Door()
        #expect(door.status(Door.request(room: "no spaces allowed")) == 400)
        #expect(door.status(Door.request(room: nil, echo: true)) == nil)
    }

    @Test("a Host the server does not answer for is refused with 421, and counted")
    func host() {
        var door = Door { $0.allowedHosts = ["watch.example.org"] }
        guard case .refuseUpgrade(let refusal) = door.offer(Door.request(host: "evil.example")) else {
            Issue.record("let in")
            return
        }
        #expect(refusal.status == 421 && refusal.counted == "host")
        #expect(door.status(Door.request(host: "watch.example.org")) == nil)
    }

    @Test("a page of another site may not open a connection; the server's own pages and allowed origins may")
    func origin() {
        var door = Door { $0.allowedOrigins = ["https://friends.example"] }
        #expect(door.status(Door.request(host: "127.0.0.1:7480", origin: "https://evil.example")) == 403)
        #expect(door.status(Door.request(host: "127.0.0.1:7480", origin: "http://127.0.0.1:7480")) == nil)
        #expect(door.status(Door.request(host: "127.0.0.1:7480", origin: "https://friends.example")) == nil)
    }

    @Test("an address holding its share of connections is refused with 429 until one of them closes")
    func perAddress() {
        var door = Door { $0.maximumConnectionsPerAddress = 2 }
        let first = door.connect()
        door.connect()
        #expect(door.status(Door.request()) == 429)
        #expect(door.status(Door.request(from: "192.0.2.2")) == nil)
        _ = door.state.connectionClosed(first ?? 0, address: "192.0.2.1", at: door.now.monotonic)
        #expect(door.status(Door.request()) == nil)
    }

    @Test("each admitted upgrade has its own number, and its request is handed back once, when it opens")
    func numbers() {
        var door = Door()
        let a = door.state.upgradeAdmitted(Door.request(from: "192.0.2.7"))
        let b = door.state.upgradeAdmitted(Door.request())
        #expect(a != b)
        #expect(door.state.connectionOpened(a)?.address == "192.0.2.7")
        #expect(door.state.connectionOpened(a) == nil)
    }

    @Test("an operator's ban for ten minutes refuses the address with 403 until it ends, then lets it in")
    func timedBan() {
        var door = Door()
        #expect(door.state.operatorBans("192.0.2.1", until: door.now.server.advanced(by: ServerInterval(seconds: 600))) == [.saveOperatorState])
        #expect(door.status(Door.request()) == 403)
        door.advance(seconds: 599)
        #expect(door.status(Door.request()) == 403)
        door.advance(seconds: 1)
        #expect(door.status(Door.request()) == nil)
        #expect(door.state.operatorState.bannedAddresses.isEmpty)
    }

    @Test("a ban without an end refuses the address however long it waits")
    func lastingBan() {
        var door = Door()
        #expect(door.state.operatorBans("192.0.2.1", until: nil) == [.saveOperatorState])
        door.advance(seconds: 365 * 86_400)
        #expect(door.status(Door.request()) == 403)
        #expect(door.state.operatorLifts("192.0.2.1") == [.saveOperatorState])
        #expect(door.status(Door.request()) == nil)
        #expect(door.state.operatorLifts("192.0.2.1") == [], "nothing to save when no ban was lifted")
    }

    @Test("while the server is drained, new rooms are refused with 503 and existing rooms stay open")
    func draining() {
        var door = Door()
        door.connect()
        #expect(door.state.operatorDrains(true) == [.saveOperatorState])
        #expect(door.status(Door.request(room: "new")) == 503)
        #expect(door.status(Door.request(from: "192.0.2.9")) == nil)
    }

    @Test("under room-creation token a new room needs a token, and each room spends one use of it")
    func creationToken() {
        var door = Door { $0.roomCreation = .token }
        #expect(door.state.operatorIssuesCreationToken(digest: SecretDigest.hex("opening-night"), uses: 1) == [.saveOperatorState])
        #expect(door.status(Door.request(room: "first")) == 403)
        #expect(door.status(Door.request(room: "first", create: "opening-night")) == nil)
        #expect(door.state.roomCreated(by: "192.0.2.1", token: "opening-night", at: door.now.monotonic) == [.saveOperatorState])
        #expect(door.status(Door.request(room: "second", create: "opening-night")) == 403)
    }

    @Test("an address that created its rooms for the minute is told how long to wait, and may create again after the minute")
    func creationRate() {
        var door = Door { $0.roomCreationRate = 2 }
        door.connect(Door.request(room: "one"))
        door.advance(seconds: 20)
        door.connect(Door.request(room: "two"))
        door.advance(seconds: 10)
        guard case .refuseUpgrade(let refusal) = door.offer(Door.request(room: "three")) else {
            Issue.record("let in")
            return
        }
        #expect(refusal.status == 429 && refusal.body.contains("create another in 30 s"))
        #expect(door.status(Door.request(room: "one")) == nil)
        #expect(door.status(Door.request(room: "three", from: "192.0.2.2")) == nil)
        door.advance(seconds: 30)
        #expect(door.status(Door.request(room: "three")) == nil)
    }

    @Test("a node of a cluster leaves the creation rate to the room's owner")
    func creationRateInACluster() {
        var door = Door(cluster: true) { $0.roomCreationRate = 1 }
        door.connect(Door.request(room: "one"))
        #expect(door.status(Door.request(room: "two")) == nil)
    }

    @Test("while shutting down, an upgrade is refused with 503 and a socket closed unanswered")
    func shuttingDown() {
        var door = Door()
        _ = door.state.stopRequested(at: door.now.monotonic)
        #expect(door.status(Door.request()) == 503)
        #expect(door.state.socketOffered(from: "192.0.2.1", trusted: false) == .refuseSocket(nil))
    }

    @Test("sockets: an address past its share is refused; a trusted proxy only by the total")
    func sockets() {
        var door = Door { $0.maximumConnectionsPerAddress = 1 }
        door.state.listening(sockets: 3)
        door.state.socketOpened(from: "192.0.2.1")
        #expect(door.state.socketOffered(from: "192.0.2.1", trusted: false) == .refuseSocket(.perAddress))
        #expect(door.state.socketOffered(from: "10.0.0.1", trusted: true) == .acceptSocket)
        door.state.socketOpened(from: "10.0.0.1")
        door.state.socketOpened(from: "10.0.0.1")
        #expect(door.state.socketOffered(from: "10.0.0.1", trusted: true) == .refuseSocket(.total))
        door.state.socketClosed(from: "192.0.2.1")
        #expect(door.state.socketOffered(from: "192.0.2.3", trusted: false) == .acceptSocket)
    }
}

@Suite("The gateway's work for strangers: link checks and subtitle fetches")
struct GatewayWorkPlacesTests {
    @Test("a check takes one of its address's places and one of the server's; its end gives both back")
    func placesTakenAndGiven() {
        var door = Door { $0.mediaCheck.maximumPerAddress = 1; $0.mediaCheck.maximumConcurrent = 2 }
        #expect(door.state.linkCheckOffered(from: "192.0.2.1") == .granted)
        #expect(door.state.linkCheckOffered(from: "192.0.2.1") == .addressBusy)
        #expect(door.state.linkCheckOffered(from: "192.0.2.2") == .granted)
        #expect(door.state.linkCheckOffered(from: "192.0.2.3") == .serverBusy)
        door.state.linkCheckFinished(for: "192.0.2.1")
        #expect(door.state.linkCheckOffered(from: "192.0.2.3") == .granted)
    }

    @Test("a busy address is told so before a busy server, and subtitle fetches have places of their own")
    func addressFirst() {
        var door = Door { $0.mediaCheck.maximumPerAddress = 1; $0.mediaCheck.maximumConcurrent = 1 }
        #expect(door.state.linkCheckOffered(from: "192.0.2.1") == .granted)
        #expect(door.state.linkCheckOffered(from: "192.0.2.1") == .addressBusy)
        #expect(door.state.subtitleFetchOffered(from: "192.0.2.1") == .granted)
    }
}

@Suite("The gateway's time: room timers, housekeeping, shutdown")
struct GatewayTimeTests {
    @Test("room timers fire when due, earliest first; a cancelled one does not")
    func timers() {
        var door = Door()
        let at = door.now.server
        _ = door.state.schedule(.roomExpires(emptySince: at), in: .lobby, at: at.advanced(by: ServerInterval(seconds: 30)))
        _ = door.state.schedule(.waitLimit(anchor: 1), in: .lobby, at: at.advanced(by: ServerInterval(seconds: 10)))
        _ = door.state.schedule(.waitLimit(anchor: 2), in: .lobby, at: at.advanced(by: ServerInterval(seconds: 20)))
        door.state.cancel(.waitLimit(anchor: 2), in: .lobby)
        #expect(door.state.nextTimerDue() == at.advanced(by: ServerInterval(seconds: 10)))
        door.advance(seconds: 9)
        #expect(door.state.timersDue(at: door.now.server) == [.armRoomTimers])
        door.advance(seconds: 30)
        #expect(door.state.timersDue(at: door.now.server) == [
            .fireRoomTimer(.lobby, .waitLimit(anchor: 1), at: door.now.server),
            .fireRoomTimer(.lobby, .roomExpires(emptySince: at), at: door.now.server), .armRoomTimers,
        ])
        #expect(door.state.nextTimerDue() == nil)
    }

    @Test("the timers of a room that is forgotten never fire")
    func forgottenRoom() {
        var door = Door()
        _ = door.state.schedule(.waitLimit(anchor: 1), in: .lobby, at: door.now.server)
        door.state.roomForgotten(.lobby)
        #expect(door.state.timersDue(at: door.now.server) == [.armRoomTimers])
    }

    @Test("the store hears the server is alive at the first pass, then every 5 s, not more often")
    func aliveMarks() {
        var door = Door()
        #expect(door.housekeeping().contains(.writeAliveMark(door.now.server)))
        door.advance(seconds: 4.75)
        #expect(!door.housekeeping().contains { if case .writeAliveMark = $0 { true } else { false } })
        door.advance(seconds: 0.25)
        #expect(door.housekeeping().contains(.writeAliveMark(door.now.server)))
    }

    @Test("without a store, no sign of life is written")
    func noStore() {
        var door = Door(store: false)
        #expect(!door.housekeeping().contains { if case .writeAliveMark = $0 { true } else { false } })
    }

    @Test("all rooms' chat is added up at the first pass and then every 5 s")
    func chatBudget() {
        var door = Door()
        #expect(door.housekeeping().contains(.keepChatWithinBudget))
        door.advance(seconds: 1)
        #expect(!door.housekeeping().contains(.keepChatWithinBudget))
        door.advance(seconds: 4)
        #expect(door.housekeeping().contains(.keepChatWithinBudget))
    }

    @Test("a pass every 50 ms ticks one fifth of the connections in turn, so each is looked at every 250 ms; in a cluster the leases every 250 ms")
    func pass() {
        var door = Door(store: false)
        #expect(door.housekeeping() == [.keepChatWithinBudget, .tickConnections(door.now.monotonic, slice: 0, of: 5),
                                        .armHousekeeping(after: .milliseconds(50))])
        var slices: [Int] = []
        for _ in 0..<6 {
            door.advance(seconds: 0.05)
            for case .tickConnections(_, let slice, 5) in door.housekeeping() { slices.append(slice) }
        }
        #expect(slices == [1, 2, 3, 4, 0, 1])
        var node = Door(cluster: true, store: false)
        var looked: [Bool] = []
        for _ in 0..<6 {
            looked.append(node.housekeeping().contains(.clusterHousekeeping))
            node.advance(seconds: 0.05)
        }
        #expect(looked == [true, false, false, false, false, true])
    }

    @Test("while shutting down every pass ticks every connection")
    func passWhileStopping() {
        var door = Door(store: false)
        door.connect()
        _ = door.state.stopRequested(at: door.now.monotonic)
        #expect(door.housekeeping().contains(.tickConnections(door.now.monotonic, slice: 0, of: 1)))
    }

    @Test("a stop asks every connection to close with 1001, looks every 50 ms, and finishes when the last is gone")
    func stop() {
        var door = Door()
        let a = door.connect()
        let b = door.connect()
        #expect(door.state.stopRequested(at: door.now.monotonic) == [
            .closeEveryConnection(code: 1001, reason: "server shutting down"), .armHousekeeping(after: .milliseconds(50)),
        ])
        #expect(door.state.connectionClosed(a ?? 0, address: "192.0.2.1", at: door.now.monotonic) == [])
        #expect(door.state.connectionClosed(b ?? 0, address: "192.0.2.1", at: door.now.monotonic) == [.finish])
        #expect(door.state.phase == .finished)
    }

    @Test("a stop finishes at its grace with connections still open")
    func grace() {
        var door = Door { $0.shutdownGrace = .seconds(3) }
        door.connect()
        _ = door.state.stopRequested(at: door.now.monotonic)
        door.advance(seconds: 2.9)
        #expect(!door.housekeeping().contains(.finish))
        door.advance(seconds: 0.1)
        #expect(door.housekeeping().contains(.finish))
        #expect(!door.housekeeping().contains { if case .armHousekeeping = $0 { true } else { false } })
    }

    @Test("a stop with no connection finishes at once, and asking again changes nothing")
    func stopWhenEmpty() {
        var door = Door()
        #expect(door.state.stopRequested(at: door.now.monotonic) == [
            .closeEveryConnection(code: 1001, reason: "server shutting down"), .finish,
        ])
        #expect(door.state.stopRequested(at: door.now.monotonic) == [])
    }

    @Test("a node of a cluster hands its rooms over first, then asks its members to reconnect at once (4010)")
    func clusterStop() {
        var node = Door(cluster: true)
        node.connect()
        #expect(node.state.stopRequested(at: node.now.monotonic) == [
            .handOverRooms, .closeEveryConnection(code: 4010, reason: "this node is leaving; reconnect now"),
            .armHousekeeping(after: .milliseconds(50)),
        ])
    }
}

@Suite("The gateway's admin API door")
struct GatewayAdminDoorTests {
    @Test("ten wrong tokens within a minute shut the address out until the minute ends, the right token included")
    func wrongTokens() {
        var door = Door()
        for _ in 0..<10 {
            #expect(door.state.adminRequested(from: "192.0.2.1", rightToken: false, at: door.now.server) == .wrongToken)
            door.advance(seconds: 1)
        }
        #expect(door.state.adminRequested(from: "192.0.2.1", rightToken: true, at: door.now.server) == .tooManyWrongTokens)
        #expect(door.state.adminRequested(from: "192.0.2.2", rightToken: true, at: door.now.server) == .open)
        door.advance(seconds: 50)
        #expect(door.state.adminRequested(from: "192.0.2.1", rightToken: true, at: door.now.server) == .open)
    }

    @Test("wrong tokens spread over more than a minute never shut an address out, and a right one clears the count")
    func slowMistakes() {
        var door = Door()
        for _ in 0..<30 {
            #expect(door.state.adminRequested(from: "192.0.2.1", rightToken: false, at: door.now.server) == .wrongToken)
            door.advance(seconds: 7)
        }
        #expect(door.state.adminRequested(from: "192.0.2.1", rightToken: true, at: door.now.server) == .open)
        #expect(door.state.adminTokenFailures.minutes.isEmpty)
    }

    @Test("addresses remembered for wrong tokens are bounded: past the bound, finished minutes are forgotten first")
    func bounded() {
        var door = Door()
        for index in 0..<AdminTokenFailures.trackedAddresses {
            _ = door.state.adminRequested(from: "old-\(index)", rightToken: false, at: door.now.server)
        }
        door.advance(seconds: 61)
        _ = door.state.adminRequested(from: "192.0.2.1", rightToken: false, at: door.now.server)
        #expect(door.state.adminTokenFailures.minutes.count == 1)
        for index in 0..<(2 * AdminTokenFailures.trackedAddresses) {
            _ = door.state.adminRequested(from: "new-\(index)", rightToken: false, at: door.now.server)
        }
        #expect(door.state.adminTokenFailures.minutes.count <= AdminTokenFailures.trackedAddresses)
    }
}

@Suite("The gateway's rooms: how many, and how a refusal closes")
struct GatewayRoomsTests {
    static let old = RoomName("old")!
    static let older = RoomName("older")!

    @Test("under max-rooms a new room is made; at it, the unused room empty the longest makes way; with none unused, it is refused in words")
    func maximumRooms() {
        let door = Door { $0.maximumRooms = 2 }
        let at = door.now.server
        #expect(door.state.roomWanted(held: 1, unused: []) == .free)
        let unused = [(name: Self.old, emptySince: Optional(at.advanced(by: ServerInterval(seconds: 60)))),
                      (name: Self.older, emptySince: Optional(at))]
        #expect(door.state.roomWanted(held: 2, unused: unused) == .inPlaceOf(Self.older))
        guard case .full(let error) = door.state.roomWanted(held: 2, unused: []) else {
            Issue.record("a room was made past max-rooms")
            return
        }
        #expect(error.code == .roomFull && error.message == "this server has reached its limit of 2 rooms")
    }

    @Test("a connection its room refuses is closed with the code that says why")
    func closeCodes() {
        #expect(GatewayState.closeCode(refusing: .banned) == 4003)
        #expect(GatewayState.closeCode(refusing: .locked) == 4004)
        #expect([.passwordRequired, .wrongPassword, .tooManyAttempts].map { GatewayState.closeCode(refusing: $0) } == [4005, 4005, 4005])
        #expect(GatewayState.closeCode(refusing: .badToken) == 4006)
        #expect(GatewayState.closeCode(refusing: .roomFull) == 1008)
    }
}

@Suite("The gateway: other nodes' shared relay links")
struct GatewayRelayLinkTests {
    static func link(from address: String, room: String = "lobby") -> UpgradeRequest {
        var request = Door.request(room: room, from: address)
        request.relay = true
        return request
    }

    static let secret = String(repeating: "5ec7e7", count: 8)

    static func proven(_ request: UpgradeRequest, secret: String = secret, at now: ServerInstant, nonce: String = "0123456789abcdef") -> UpgradeRequest {
        var request = request
        request.relayProof = RelayProof.make(secret: secret, room: request.room ?? RoomName("lobby")!, node: "n2", at: now, nonce: nonce)
        return request
    }

    @Test("a relay link is let in only with proof of the cluster's secret, wherever it comes from, and only for a room this node serves")
    func relayLinkDoor() {
        var door = Door(cluster: true) { $0.trustedProxies = ["127.0.0.1"]; $0.clusterSecret = Self.secret }
        door.rooms = ["lobby"]
        // A trusted proxy's address is no longer enough: any process on that host could open one.
        #expect(door.status(Self.link(from: "127.0.0.1")) == 403)
        #expect(door.status(Self.proven(Self.link(from: "127.0.0.1"), secret: String(repeating: "0", count: 48), at: door.now.server)) == 403)
        #expect(door.status(Self.proven(Self.link(from: "192.0.2.1"), at: door.now.server)) == nil)
        // The same proof again is refused: a proof read off the wire opens nothing.
        #expect(door.status(Self.proven(Self.link(from: "192.0.2.1"), at: door.now.server)) == 403)
        #expect(door.status(Self.proven(Self.link(from: "127.0.0.1", room: "den"), at: door.now.server, nonce: "fedcba9876543210")) == 503)
        var alone = Door(cluster: false) { $0.clusterSecret = Self.secret }
        alone.rooms = ["lobby"]
        #expect(alone.status(Self.proven(Self.link(from: "127.0.0.1"), at: alone.now.server)) == 403)
        var secretless = Door(cluster: true) { $0.trustedProxies = ["127.0.0.1"] }
        secretless.rooms = ["lobby"]
        #expect(secretless.status(Self.proven(Self.link(from: "127.0.0.1"), at: secretless.now.server)) == 403)
    }

    @Test("a proof says which node, and is refused when missing, unreadable, for another room, stale, wrong or used twice")
    func proofs() {
        let room = RoomName("lobby")!
        let now = ServerInstant(milliseconds: 1_800_000_000_000)
        var seen = RelayProof.Seen(capacity: 4)
        let proof = RelayProof.make(secret: Self.secret, room: room, node: "n2", at: now, nonce: "aaaaaaaaaaaaaaaa")
        #expect(RelayProof.check(proof, secret: Self.secret, room: room, now: now.advanced(by: ServerInterval(milliseconds: 59_000)),
                                 seen: &seen) == .success("n2"))
        #expect(RelayProof.check(proof, secret: Self.secret, room: room, now: now, seen: &seen) == .failure(.replayed))
        #expect(RelayProof.check(nil, secret: Self.secret, room: room, now: now, seen: &seen) == .failure(.missing))
        #expect(RelayProof.check("v1 n2 soon x y", secret: Self.secret, room: room, now: now, seen: &seen) == .failure(.malformed))
        let other = RelayProof.make(secret: Self.secret, room: room, node: "n2", at: now, nonce: "bbbbbbbbbbbbbbbb")
        #expect(RelayProof.check(other, secret: Self.secret, room: RoomName("den")!, now: now, seen: &seen) == .failure(.wrong))
        #expect(RelayProof.check(other, secret: Self.secret, room: room, now: now.advanced(by: ServerInterval(milliseconds: 61_000)),
                                 seen: &seen) == .failure(.stale))
        // Another node's name in a proof made for n2 does not match.
        let forged = other.replacingOccurrences(of: "v1 n2 ", with: "v1 n3 ")
        #expect(RelayProof.check(forged, secret: Self.secret, room: room, now: now, seen: &seen) == .failure(.wrong))
        // The nonces kept are bounded.
        for index in 0..<10 {
            let nonce = String(repeating: "\(index)", count: 16)
            _ = RelayProof.check(RelayProof.make(secret: Self.secret, room: room, node: "n2", at: now, nonce: nonce),
                                 secret: Self.secret, room: room, now: now, seen: &seen)
        }
        #expect(seen.count <= 4)
    }

    @Test("a member joining on a link is judged by the operator's bans on its own address, until the ban ends")
    func relayedMemberBanned() {
        var door = Door(cluster: true)
        let until = door.now.server.advanced(by: ServerInterval(seconds: 60))
        #expect(door.state.operatorBans("192.0.2.9", until: until)
                == [.shareOperatorChange(.ban(address: "192.0.2.9", untilMilliseconds: until.milliseconds))])
        let banned = door.state.operatorBanned("192.0.2.9", at: door.now.server)
        let other = door.state.operatorBanned("192.0.2.8", at: door.now.server)
        #expect(banned && !other)
        door.advance(seconds: 60)
        let after = door.state.operatorBanned("192.0.2.9", at: door.now.server)
        #expect(!after)
    }

    @Test("a cluster node shares each ban, lift and token as one change, and keeps its own drain")
    func clusterShares() {
        var node = Door(cluster: true)
        #expect(node.state.operatorBans("192.0.2.1", until: nil) == [.shareOperatorChange(.ban(address: "192.0.2.1", untilMilliseconds: nil))])
        #expect(node.state.operatorLifts("192.0.2.1") == [.shareOperatorChange(.lift(address: "192.0.2.1"))])
        #expect(node.state.operatorIssuesCreationToken(digest: "d1", uses: 2) == [.shareOperatorChange(.creationToken(digest: "d1", uses: 2))])
        #expect(node.state.operatorDrains(true) == [.saveOperatorState])
    }

    @Test("another node's ban read from the database refuses here and names the address to close; this node's change not yet written is kept over what was read")
    func clusterReads() {
        var node = Door(cluster: true)
        _ = node.state.operatorBans("192.0.2.5", until: nil)
        // Read before this node's ban was written: the other node's ban, not ours yet.
        let newly = node.state.operatorStateShared(SharedOperatorState(version: 4, bans: ["192.0.2.1": nil]), at: node.now.server)
        #expect(newly == ["192.0.2.1"])
        #expect(node.status(Door.request()) == 403)
        #expect(node.state.operatorState.bannedAddresses.keys.sorted() == ["192.0.2.1", "192.0.2.5"])
        // Written: what is read from then on is the database's word alone.
        node.state.operatorChangeShared(.ban(address: "192.0.2.5", untilMilliseconds: nil))
        _ = node.state.operatorStateShared(SharedOperatorState(version: 5, bans: [:]), at: node.now.server)
        #expect(node.status(Door.request()) == nil)
        #expect(node.state.operatorState.bannedAddresses.isEmpty)
        // A ban that ended is a row until lifted, and bans nobody.
        let ended = node.now.server.milliseconds - 1
        #expect(node.state.operatorStateShared(SharedOperatorState(version: 6, bans: ["192.0.2.1": ended]), at: node.now.server) == [])
        #expect(node.status(Door.request()) == nil)
        #expect(!node.state.operatorDrains(false).isEmpty)
    }
}
