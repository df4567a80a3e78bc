import CowatchCore
import Foundation
import SlashCommands
import Testing

/// The hash, size and length of a file the members of these rooms play from their own disks.
private let ownLine = "/watch own 8e245d9679d31e12 1400000000 6130"

/// alice, bob and carol, all players; alice shares the own copy; `having` say
/// they have it, `lacking` that they have not.
private func ownRoom(having: [String] = [], lacking: [String] = [], title: String = "") -> Scenario {
    var room = Scenario()
    for name in ["alice", "bob", "carol"] { room.connect(name, player: true) }
    room.say("alice", title.isEmpty ? ownLine : "\(ownLine) \(title)")
    let seq = room.state.seq
    for name in having { room.say(name, "/have \(seq) yes") }
    for name in lacking { room.say(name, "/have \(seq) no") }
    return room
}

@Suite("Own copies: an item known by identity, played by those who have it")
struct RuleOwnCopyTests {
    @Test("/watch own shares an identity: no address, own:<hash>:<size>, its length, and a title without the file's name")
    func sharedIdentity() throws {
        let room = ownRoom()
        let activity = try #require(room.state.session?.activity)
        #expect(activity.url == nil)
        #expect(activity.identifier == "own:8e245d9679d31e12:1400000000")
        #expect(activity.source.ownCopy?.size == 1_400_000_000)
        #expect(activity.duration == MediaTime(seconds: 6130))
        #expect(activity.title == "a file of 1.4 GB, 1:42:10")
        room.expectPlayback(.paused, item: "own:8e245d9679d31e12:1400000000")
        #expect(room.notices.last?.text.contains("pick your copy of the file") == true)
    }

    @Test("the sharer's title names the item when given")
    func typedTitle() {
        let room = ownRoom(title: "Movie night")
        #expect(room.state.session?.activity.title == "Movie night")
    }

    @Test("a coordinated start waits for the players that have the file, and not for one that has not")
    func waitsOnlyForHolders() {
        var room = ownRoom(having: ["alice", "bob"], lacking: ["carol"])
        room.say("alice", "/play")
        #expect(room.playback.status == .waiting)
        room.expectStartsOnceReady("alice", "bob")
        #expect(room.participant("carol")?.joined == true)
        #expect(room.participant("carol")?.ready == false)
    }

    @Test("a player that has not said whether it has the file is not waited for")
    func unansweredNotWaitedFor() {
        var room = ownRoom(having: ["alice"])
        room.say("alice", "/play")
        room.expectStartsOnceReady("alice")
    }

    @Test("a player saying it has no copy while the group waits only for it lets the group start")
    func lackingReleasesTheWait() {
        var room = ownRoom(having: ["alice", "bob"])
        room.say("alice", "/play")
        room.say("alice", "/ready \(room.state.seq)")
        #expect(room.playback.status == .waiting)
        room.say("bob", "/have \(room.state.seq) no")
        #expect(room.playback.status == .playing)
    }

    @Test("a player without the file that reports a stall holds nobody, even when the group waits for stalls")
    func stallWithoutCopyHoldsNobody() {
        var room = ownRoom(having: ["alice", "bob"], lacking: ["carol"])
        room.say("alice", "/policy stall wait")
        room.playTogether(by: "alice")
        #expect(room.playback.status == .playing)
        room.say("carol", "/buffering")
        #expect(room.playback.status == .playing)
        #expect(room.published.isEmpty)
        room.say("bob", "/buffering")
        #expect(room.playback.status == .waiting)
    }

    @Test("who has the file is shown to everyone, and a new item asks everyone again")
    func shownAndForgotten() throws {
        var room = ownRoom(having: ["bob"])
        #expect(room.participant("bob")?.copy == true)
        #expect(room.participant("carol")?.copy == nil)
        room.say("carol", "/have \(room.state.seq) no")
        let (shown, change) = try #require(room.participantChanges.first)
        #expect(shown.copy == false && change == .copy)
        #expect(room.events(for: "alice").contains { if case .participant(let p, .copy) = $0 { p.copy == false } else { false } })
        room.say("alice", "/watch https://example.org/a.mp4 Episode 1")
        #expect(room.participant("bob")?.copy == nil)
        #expect(room.participant("carol")?.copy == nil)
    }

    @Test("/have is refused in words when the item is not an own copy, and for a state never sent")
    func haveRefusals() {
        var room = Scenario.sharing("alice", players: ["alice"])
        room.say("alice", "/have \(room.state.seq) yes")
        #expect(room.error(for: "alice")?.message == "/have: the room is not watching an own copy; /watch own shares one")
        var own = ownRoom()
        own.say("bob", "/have \(own.state.seq + 5) yes")
        own.expectRefused("bob", .staleReport)
        own.connect("dave")
        own.say("dave", "/have \(own.state.seq) yes")
        own.expectRefused("dave", .notAPlayer)
    }

    @Test("sharing the same file again changes nothing; with a new title it renames it")
    func sameFileAgain() {
        var room = ownRoom(having: ["bob"])
        room.say("bob", ownLine)
        #expect(room.published.isEmpty)
        #expect(room.told("bob") == ["already watching \"a file of 1.4 GB, 1:42:10\""])
        room.say("bob", "\(ownLine) Movie night")
        #expect(room.published.first?.session?.activity.title == "Movie night")
        #expect(room.participant("bob")?.copy == true)
    }

    @Test("the state says the source's hash and size, no address, and a participant's copy")
    func encoded() throws {
        let room = ownRoom(having: ["bob"])
        let object = try WireJSON.object(.state(room.state))
        let session = try #require(WireJSON.object(object["session"]))
        let activity = try #require(WireJSON.object(session["activity"]))
        #expect(activity["url"] is NSNull)
        #expect(WireJSON.string(activity["identifier"]) == "own:8e245d9679d31e12:1400000000")
        let source = try #require(WireJSON.object(activity["source"]))
        #expect(WireJSON.string(source["kind"]) == "own")
        #expect(WireJSON.string(source["hash"]) == "8e245d9679d31e12")
        #expect((source["size"] as? NSNumber)?.int64Value == 1_400_000_000)
        #expect((activity["duration"] as? NSNumber)?.doubleValue == 6130)
        let bob = try #require(room.participant("bob"))
        let shown = try WireJSON.object(.participant(bob, change: .copy))
        let participant = try #require(WireJSON.object(shown["participant"]))
        #expect(participant["copy"] as? Bool == true)
        #expect(WireJSON.string(shown["change"]) == "copy")
    }

    @Test("an own copy's activity is kept across a restart")
    func codableRoundTrip() throws {
        let room = ownRoom()
        let activity = try #require(room.state.session?.activity)
        let again = try JSONDecoder().decode(Activity.self, from: JSONEncoder().encode(activity))
        #expect(again == activity)
    }
}
