@testable import CowatchClient
@testable import CowatchLoad
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

    @Test("a room's latencies are kept per group, with the last member of each group")
    func groups() throws {
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        let address = try #require(WebSocketAddress("ws://127.0.0.1:7001/rooms/t-0"))
        // Members 0 and 3 on the first server, 1 and 2 on the others.
        let room = BenchRoom(members: 4, encoding: .json, reading: .scan, onFirstServer: { $0 % 3 == 0 })
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

    @Test("with one server nothing is kept per group")
    func noGroups() {
        let room = BenchRoom(members: 3, encoding: .json, reading: .scan)
        room.begin(commands: ["/play"], closedLoop: false, participants: 3)
        #expect(room.outcome.groupLatencies.allSatisfy { $0.isEmpty })
    }
}
