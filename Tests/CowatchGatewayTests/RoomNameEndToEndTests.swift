import CowatchClient
import CowatchCore
import CowatchStore
import Foundation
import Testing

@Suite("Room names end to end")
struct RoomNameEndToEndTests {
    @Test("/rooms/Lobby and /rooms/lobby are one room, named in lowercase")
    func oneRoomWhateverTheCase() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join("Movie-Night", name: "alice")
        let bob = try server.join("movie-night", name: "bob")
        #expect(ModerationEndToEndTests.welcome(bob)?.string("room") == "movie-night")
        #expect(ModerationEndToEndTests.welcome(bob)?.array("participants")?.count == 2)
        _ = alice.event("participant") { $0.object("participant")?.string("name") == "bob" }
        #expect(try server.get("/rooms/MOVIE-NIGHT").status == 200)
    }
}
