@testable import CowatchClient
@testable import CowatchLoad
import Foundation
import Glibc
import Testing

/// `cowatch bench` against several servers (a cluster's nodes): which member
/// connects where, and the latencies kept per group of members.
@Suite("The load generator's plan over several servers")
struct LoadPlanTests {
    static func plan(servers: [String], rooms: Int = 2, members: Int = 7) -> LoadPlan {
        LoadPlan(servers: servers.compactMap(WebSocketAddress.init), rooms: rooms, members: members, rounds: 1,
                 warmupRounds: 0, encoding: .json, connectionsPerContext: 100, connectWindow: 8, connectRate: 0,
                 roomPrefix: "t-")
    }

    @Test("members go round-robin over the servers, member 0 (the first and the controller) to the first")
    func roundRobin() {
        let plan = Self.plan(servers: ["ws://127.0.0.1:7001", "ws://127.0.0.1:7002", "ws://127.0.0.1:7003"])
        #expect(plan.servers.map(\.port) == [7001, 7002, 7003])
        #expect((0..<7).map { plan.serverIndex(room: 1, member: $0) } == [0, 1, 2, 0, 1, 2, 0])
        #expect(plan.relays)
    }

    @Test("by room, every member of room r goes to server r mod count, and nobody is relayed")
    func byRoom() {
        var plan = Self.plan(servers: ["ws://127.0.0.1:7001", "ws://127.0.0.1:7002"], rooms: 5)
        plan.placement = .byRoom
        #expect((0..<5).map { room in Set((0..<7).map { plan.serverIndex(room: room, member: $0) }) }
            == [[0], [1], [0], [1], [0]])
        #expect(!plan.relays)
    }

    @Test("with one server every member connects to it")
    func oneServer() {
        let plan = Self.plan(servers: ["ws://127.0.0.1:7001"])
        #expect((0..<7).allSatisfy { plan.serverIndex(room: 1, member: $0) == 0 })
        #expect(!plan.relays)
    }

    @Test("connections take the source addresses in turn; with none, the kernel chooses")
    func sourceAddresses() {
        var plan = Self.plan(servers: ["ws://127.0.0.1:7001"])
        #expect(plan.sourceAddress(connection: 5) == nil)
        plan.sourceAddresses = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
        #expect((0..<7).map { plan.sourceAddress(connection: $0) }
            == ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.1"])
    }

    @Test("a connection given a source address comes from it: the listener sees 127.0.0.2 as its peer")
    func connectsFromTheSourceAddress() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 4) == 0
                && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        var target = try #require(WebSocketAddress("ws://127.0.0.1:\(port)/rooms/t-0"))
        target.source = "127.0.0.2"
        _ = clients.connect(target, encoding: .json, handlers: ClientHandlers(received: { _ in }))
        // The connection arrives when the client's thread has made it: poll waits for it, with a bound.
        var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        try #require(poll(&ready, 1, 10_000) == 1)
        var peer = sockaddr_in()
        var peerLength = socklen_t(MemoryLayout<sockaddr_in>.size)
        let accepted = withUnsafeMutablePointer(to: &peer) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &peerLength) }
        }
        try #require(accepted >= 0)
        defer { close(accepted) }
        #expect(String(cString: inet_ntoa(peer.sin_addr)) == "127.0.0.2")
    }

    @Test("a room's latencies are kept per group, with the last member of each group")
    func groups() throws {
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        let address = try #require(WebSocketAddress("ws://127.0.0.1:7001/rooms/t-0"))
        // Members 0 and 3 on the first server, 1 and 2 on the others.
        let room = BenchRoom(members: 4, encoding: .json, reading: .head, onFirstServer: { $0 % 3 == 0 })
        let controller = ClientConnection(id: 1, address: address, encoding: .json,
                                          handlers: ClientHandlers(received: { _ in }), owner: clients)
        room.attach(controller, as: 0)
        room.begin(commands: ["/play"], closedLoop: false, participants: 4)
        #expect(room.sendNext())
        for member in [1, 0, 3, 2] { room.received(#"{"type":"state","seq":5}"#, from: member) }
        let outcome = room.outcome
        #expect(outcome.memberLatencies.count == 4)
        #expect(outcome.lastMemberLatencies.count == 1)
        #expect(outcome.groupLatencies.map(\.count) == [2, 2])
        #expect(outcome.groupLastLatencies.map(\.count) == [1, 1])
        // Member 2, on another server, was the room's last.
        #expect(outcome.groupLastLatencies[1] == outcome.lastMemberLatencies)
        #expect(outcome.groupLastLatencies[0][0] <= outcome.lastMemberLatencies[0])
    }

    @Test("in a room of players, a waiting state is answered, not counted: the playing state after it is the command's")
    func playersWaitingNotCounted() throws {
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        let address = try #require(WebSocketAddress("ws://127.0.0.1:7001/rooms/t-0"))
        let room = BenchRoom(members: 2, encoding: .json, reading: .head, players: true)
        for member in 0..<2 {
            room.attach(ClientConnection(id: UInt64(member + 1), address: address, encoding: .json,
                                         handlers: ClientHandlers(received: { _ in }), owner: clients), as: member)
        }
        room.begin(commands: ["/play"], closedLoop: false, participants: 2)
        #expect(room.sendNext())
        let waiting = #"{"type":"state","seq":5,"playback":{"status":"waiting","item":"a1"}}"#
        for member in 0..<2 { room.received(waiting, from: member) }
        #expect(FrameReading.head.read(waiting, encoding: .json) == .init(stateSeq: 5, waiting: true))
        #expect(room.outcome.memberLatencies.isEmpty)
        let playing = #"{"type":"state","seq":6,"playback":{"status":"playing","item":"a1"}}"#
        #expect(FrameReading.head.read(playing, encoding: .json) == .init(stateSeq: 6, waiting: false))
        for member in 0..<2 { room.received(playing, from: member) }
        #expect(room.outcome.memberLatencies.count == 2)
        #expect(room.outcome.lastMemberLatencies.count == 1)
    }

    @Test("with one server nothing is kept per group")
    func noGroups() {
        let room = BenchRoom(members: 3, encoding: .json, reading: .head)
        room.begin(commands: ["/play"], closedLoop: false, participants: 3)
        #expect(room.outcome.groupLatencies.allSatisfy { $0.isEmpty })
    }

    @Test("both readings agree on the frames the server writes; a text line is read by its first characters")
    func readingsAgree() {
        let frames = [
            #"{"type":"state","seq":9,"session":null,"playback":{"status":"waiting","item":null,"rate":1,"position":0,"at":5,"by":null,"cause":"play"},"queue":[],"policy":{"control":"everyone","stall":"continue","wait":5},"access":{"locked":false,"password":false,"public":false}}"#,
            #"{"type":"error","code":"forbidden","message":"only hosts","command":"play"}"#,
            #"{"type":"chat","from":"m1","name":"a","text":"{"type":"error"}","at":1,"me":false}"#,
            #"{"type":"state","seq":"#,
        ]
        let expected: [FrameReading.Frame] = [.init(stateSeq: 9, waiting: true), .init(isError: true), .init(), .init()]
        for reading in FrameReading.allCases {
            #expect(frames.map { reading.read($0, encoding: .json) } == expected, "\(reading)")
        }
        #expect(FrameReading.head.read("= paused \"A\" at 0:00:01, rate 1", encoding: .text) == .init(stateSeq: 0))
        #expect(FrameReading.head.read("= time 12 34", encoding: .text) == .init())
        #expect(FrameReading.head.read("! forbidden: only hosts", encoding: .text) == .init(isError: true))
    }
}
