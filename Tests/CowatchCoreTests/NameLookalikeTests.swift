import CowatchCore
import CowatchTime
import SlashCommands
import Testing

/// Names that cannot pass for someone else's in a room: a name is taken when it
/// or a lookalike is (the same ignoring case, NFKC, or the same UTS #39
/// skeleton); mixed-script and invisible names are refused with a reason.
@Suite("Lookalike names in a room")
struct NameLookalikeTests {
    /// "other" connecting as `asked` to a room where "Alice" is.
    static func connecting(as asked: String) -> Scenario {
        var room = Scenario()
        room.connect("alice", displayName: "Alice")
        room.connect("other", displayName: asked)
        return room
    }

    @Test("a newcomer whose name looks like a member's gets the room's suffix and is told why",
          arguments: [
              ("\u{FF21}\u{FF4C}\u{FF49}\u{FF43}\u{FF45}", "Alice-2"),
              ("AIice", "AIice-2"),
              ("ALICE", "ALICE-2"),
              ("A1ice", "A1ice-2"),
          ])
    func lookalikeTaken(asked: String, given: String) {
        let room = Self.connecting(as: asked)
        #expect(room.member("other")?.name.text == given)
        #expect(room.events(for: "other").contains { event in
            if case .notice(let notice) = event { notice.text == "\(given.dropLast(2)) is taken here; you are \(given): /nick <name> changes it" } else { false }
        })
    }

    @Test("a newcomer whose name mixes lookalike scripts or hides characters is a guest, told why",
          arguments: [
              ("\u{0410}lice", "mixes scripts whose letters look alike (Cyrillic and Latin)"),
              ("Alice\u{200D}", "U+200D ZERO WIDTH JOINER is a control or invisible character"),
              ("\u{2800}", "U+2800 BRAILLE PATTERN BLANK is a control or invisible character"),
              ("\u{3164}", "is a control or invisible character"),
          ])
    func refusedNames(asked: String, reason: String) {
        let room = Self.connecting(as: asked)
        #expect(room.member("other")?.name.text == "guest")
        room.expectRefused("other", .badName, saying: reason)
    }

    @Test("/nick to a lookalike of a member present gives the suffix; the name comes free when its holder leaves")
    func nickLookalike() {
        var room = Scenario()
        room.connect("alice", displayName: "Alice")
        room.connect("bob")
        room.say("bob", "/nick AIice")
        #expect(room.member("bob")?.name.text == "AIice-2")
        room.leave("alice")
        room.say("bob", "/nick AIice")
        #expect(room.member("bob")?.name.text == "AIice")
        room.connect("carol", displayName: "Alice")
        #expect(room.member("carol")?.name.text == "Alice-2")
    }

    @Test("a renamed member's old name is free again, its lookalikes too")
    func renameFreesLookalikes() {
        var room = Scenario()
        room.connect("alice", displayName: "Alice")
        room.say("alice", "/nick Alicia")
        room.connect("other", displayName: "AIice")
        #expect(room.member("other")?.name.text == "AIice")
    }

    @Test("names stored before the lookalike rules are read, and a lookalike of another comes back with a suffix")
    func storedLookalikes() throws {
        var room = Scenario()
        room.connect("alice", displayName: "Alice")
        room.connect("bob")
        let stored = try #require(DisplayName(storedText: "\u{0410}lice"))
        #expect(DisplayName("\u{0410}lice") == nil)
        #expect(DisplayName(storedText: "Alice\u{200D}") == nil)
        var records = room.room.members.values.map(\.record).sorted { $0.arrival < $1.arrival }
        records[1].name = stored
        let (back, _) = Room.restore(room.room.snapshot(at: room.now), members: records, chat: [],
                                     downSince: room.now, maximumDowntime: ServerInterval(milliseconds: 600_000),
                                     now: room.now)
        let names = Set(back.participants.map(\.name.text))
        #expect(names == ["Alice", "m2"])
    }
}
