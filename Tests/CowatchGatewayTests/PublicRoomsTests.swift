import CowatchClient
import CowatchCore
import CowatchStore
import Foundation
import Testing

@Suite("Public rooms on the landing page", .serialized)
struct PublicRoomsTests {
    @Test("/public on lists the room with what is playing and how many watch; locked rooms and /public off leave the list")
    func listing() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join("film-club", name: "alice")
        _ = try server.join("film-club", name: "bob")
        _ = try server.join("private", name: "carol")
        #expect(try JSONObject(server.get("/rooms.json").body)?.array("rooms")?.isEmpty == true)
        alice.send("/watch https://example.org/nosferatu.mp4 Nosferatu\n/public on")
        _ = alice.event("state") { $0.object("access")?.bool("public") == true }
        let rooms = try #require(JSONObject(server.get("/rooms.json").body)?.array("rooms"))
        #expect(rooms.map { $0.string("name") } == ["film-club"])
        #expect(rooms.first?.string("title") == "Nosferatu")
        #expect(rooms.first?.int("watching") == 2)
        alice.send("/lock")
        _ = alice.event("state") { $0.object("access")?.bool("locked") == true }
        #expect(try JSONObject(server.get("/rooms.json").body)?.array("rooms")?.isEmpty == true)
        alice.send("/unlock\n/public off")
        _ = alice.event("state") { $0.object("access")?.bool("public") == false }
        #expect(try JSONObject(server.get("/rooms.json").body)?.array("rooms")?.isEmpty == true)
    }
}
