import CowatchCore
import SlashCommands
import Testing

/// Bans and kicks hit only their target.
@Suite("Bans on a shared address")
struct SharedAddressBanTests {
    @Test("a ban of someone whose address others in the room use keeps out that person, not the address, and the host is told")
    func sharedAddressIsNotBanned() {
        var room = Scenario()
        room.connect("alice", address: "192.0.2.1")
        room.connect("eve", device: "eve-device", address: "198.51.100.7")
        room.connect("bob", device: "bob-device", address: "198.51.100.7")
        room.say("alice", "/ban eve spoilers")
        #expect(room.told("alice").contains { $0.contains("also 1 other member's here") && $0.contains("not the address") })
        #expect(room.room.protection.bans.last?.address == nil)
        #expect(room.member("bob")?.connected == true)
        // Someone new from the same address comes in; eve's device does not.
        #expect(room.connect("carol", device: "carol-device", address: "198.51.100.7") != nil)
        #expect(room.connect("eve-again", displayName: "eve2", device: "eve-device", address: "198.51.100.7") == nil)
        #expect(room.connectRefusal?.code == .banned)
    }

    @Test("a ban of someone alone on an address keeps the address out too")
    func ownAddressIsBanned() {
        var room = Scenario()
        room.connect("alice", address: "192.0.2.1")
        room.connect("eve", device: "eve-device", address: "198.51.100.7")
        room.say("alice", "/ban eve")
        #expect(room.room.protection.bans.last?.address == "198.51.100.7")
        #expect(room.connect("mallory", device: "another-device", address: "198.51.100.7") == nil)
        #expect(room.connectRefusal?.code == .banned)
    }
}
