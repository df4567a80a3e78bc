import CowatchClient
import CowatchCore
import CowatchStore
import Foundation
import Testing

@Suite("Operators' logs", .serialized)
struct MembershipLogTests {
    @Test("joins, leaves, kicks and refusals are logged at info with the room, the member and why")
    func whoDidWhat() throws {
        let server = try ServerProcess(arguments: ["--store", "memory", "--address-bans", "false"], logLevel: "info")
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        let alice = try RestartTests.member(clients, server, "/rooms/den?name=alice")
        _ = try RestartTests.member(clients, server, "/rooms/den?name=mallory")
        alice.send("/kick mallory spam")
        _ = alice.event("participant-left")
        let refused = TestMember(name: "again", encoding: .json)
        refused.connection = clients.connect(server.address("/rooms/den?name=mallory"), encoding: .json, handlers: refused.handlers)
        _ = refused.waitClosed()
        _ = server.terminate()
        let log = server.remainingOutput()
        let lines = log.split(separator: "\n")
        #expect(lines.contains { $0.contains("member arrived") && $0.contains("room=den") && $0.contains("name=mallory") }, "\(log)")
        #expect(lines.contains { $0.contains("member removed") && $0.contains("kicked from this room by alice (spam)") })
        #expect(lines.contains { $0.contains("member left") && $0.contains("reason=kicked") })
        #expect(lines.contains { $0.contains("connection refused") && $0.contains("code=banned") })
    }
}
