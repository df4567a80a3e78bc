import CowatchCore
@testable import CowatchPlayer
import CowatchTime
import Testing

/// mpv and own copies (Sources/CowatchPlayer/DesktopPlayer+OwnCopy.swift,
/// LocalCopy.swift): a file matched to the room's item by identity, `/have`,
/// a player without the file not watching, and a file shared from mpv.
@Suite("mpv and own copies")
struct OwnCopyPlayerTests {
    static let item = (hash: UInt64(0x8e24_5d96_79d3_1e12), size: Int64(1_400_000_000))
    static let mine = LocalCopy(path: "/home/me/Renamed.mkv", hash: item.hash, size: item.size)

    static func ownState(_ seq: Int, _ status: PlaybackStatus, duration: Double = 60.2,
                         item: (hash: UInt64, size: Int64) = item) -> DesktopPlayer.Input {
        .room(RoomEvents.state(seq, status, activity: RoomEvents.own(hash: item.hash, size: item.size, duration: duration, title: "Movie"),
                               position: 0, at: PreciseInstant(milliseconds: 1_000_000)))
    }

    static func told(_ actions: [DesktopPlayer.Action]) -> [String] {
        actions.compactMap { if case .tell(let words) = $0 { words } else { nil } }
    }

    /// Joined as m1, mpv without a file, then handed the own-copy item.
    static func desk(_ file: LocalCopy?) -> Desk {
        var desk = Desk(player: DesktopPlayer(localFile: file))
        desk.readings = MpvReadings(loaded: false, paused: true)
        _ = desk.on(.connected)
        _ = desk.on(.room(RoomEvents.welcome("m1")))
        return desk
    }

    /// The PRNG of Tests/js/own-copy.test.mjs, so both are checked against one reference.
    static func bytes(_ count: Int, seed: UInt32) -> [UInt8] {
        var x = seed
        return (0..<count).map { _ in
            x = x &* 1_664_525 &+ 1_013_904_223
            return UInt8(x >> 24)
        }
    }

    @Test("the hash agrees with OpenSubtitles' definition (Python's struct on the same bytes) for large, overlapping, tiny files")
    func hash() {
        let expected: [(Int, String)] = [(196_613, "813b8d5a98dc40e9"), (131_064, "8121f87492e70f89"), (65_539, "c8a0be668827e9dd"),
                                          (1_000, "93aaac699b6973e0"), (13, "19e4aeb994d392c3"), (1, "0000000000000079")]
        for (size, hash) in expected {
            let data = Self.bytes(size, seed: UInt32(size))
            let head = Array(data[0..<min(size, 65_536)])
            let tail = Array(data[max(0, size - 65_536)..<size])
            let copy = LocalCopy(path: "f", size: Int64(size), head: head, tail: tail)
            #expect(copy.identifier == "own:\(hash):\(size)", "a file of \(size) bytes")
        }
    }

    @Test("an own copy's state is read with no address: its identity and file")
    func parsesOwnState() throws {
        let text = """
        {"type":"state","seq":4,"session":{"state":"joined","activity":{"id":"a2","url":null,"title":"Movie","identifier":"own:8e245d9679d31e12:1400000000","source":{"kind":"own","hash":"8e245d9679d31e12","size":1400000000},"live":false,"duration":6130.5,"subtitles":[]}},"playback":{"status":"paused","item":"a2","rate":1,"position":0,"at":1700000000000,"by":null,"cause":"watch"},"queue":[],"policy":{"control":"everyone","stall":"continue","wait":5}}
        """
        guard case .state(let state)? = try JSONEventDecoding.decode(text) else { Issue.record("not a state"); return }
        #expect(state.joinedActivity?.url == nil)
        #expect(state.joinedActivity?.source.ownCopy.map { ($0.hash, $0.size) } ?? (0, 0) == Self.item)
        #expect(state.joinedActivity?.identifier == "own:8e245d9679d31e12:1400000000")
        #expect(state.joinedActivity?.duration?.seconds == 6130.5)
    }

    @Test("a renamed copy with the item's size, hash and length is played, and the room told /have yes before /ready")
    func matchingCopy() {
        var desk = Self.desk(Self.mine)
        let loading = desk.on(Self.ownState(1, .waiting))
        #expect(loading.contains(.load("/home/me/Renamed.mkv")))
        #expect(Desk.sent(loading).isEmpty)
        #expect(desk.player.mode == "checking your copy")
        desk.readings.duration = 60.0 // within a second of the 60.2 s it was shared with
        let loaded = Desk.sent(desk.on(.mpv(.fileLoaded)))
        #expect(loaded == ["/have 1 yes", "/ready 1"])
        #expect(Desk.sent(desk.on(.tick)).isEmpty)
    }

    @Test("another size is refused before anything loads: /have no, not watching, with why")
    func otherSize() {
        var desk = Self.desk(LocalCopy(path: "/home/me/Other.mkv", hash: Self.item.hash, size: 700_000_000))
        let actions = desk.on(Self.ownState(1, .waiting))
        #expect(!actions.contains { if case .load = $0 { true } else { false } })
        #expect(Desk.sent(actions) == ["/have 1 no"])
        #expect(Self.told(actions) == ["your file is not the room's: another file: yours has 700.0 MB, the room's has 1.4 GB"])
        #expect(desk.player.mode == "not watching")
        #expect(desk.player.detail.contains("another file"))
        #expect(Desk.sent(desk.on(.tick)).isEmpty)
    }

    @Test("the same size with other contents is another file")
    func otherContents() {
        var desk = Self.desk(LocalCopy(path: "/home/me/Cut.mkv", hash: 42, size: Self.item.size))
        let actions = desk.on(Self.ownState(1, .paused))
        #expect(Desk.sent(actions) == ["/have 1 no"])
        #expect(Self.told(actions).first?.hasSuffix("the same size, but other contents") == true)
    }

    @Test("a file of another length is unloaded and refused, in words")
    func otherLength() {
        var desk = Self.desk(Self.mine)
        _ = desk.on(Self.ownState(1, .waiting))
        desk.readings.duration = 58.0
        let actions = desk.on(.mpv(.fileLoaded))
        #expect(actions.contains(.unload))
        #expect(Desk.sent(actions) == ["/have 1 no"])
        #expect(Self.told(actions) == ["your file is not the room's: another duration: yours lasts 0:00:58, the room's lasts 0:01:00"])
    }

    @Test("without a file the player says /have no, tells what to start with, and follows nothing")
    func noFile() {
        var desk = Self.desk(nil)
        let actions = desk.on(Self.ownState(1, .waiting))
        #expect(Desk.sent(actions) == ["/have 1 no"])
        #expect(Self.told(actions).first?.contains("cowatch watch ROOM-URL FILE") == true)
        #expect(Desk.sent(desk.on(Self.ownState(2, .playing))).isEmpty)
        #expect(desk.player.mode == "not watching")
    }

    @Test("a connection opened again says /have again: the room may have forgotten the member")
    func haveAfterReconnect() {
        var desk = Self.desk(Self.mine)
        _ = desk.on(Self.ownState(1, .paused))
        desk.readings.duration = 60.2
        #expect(Desk.sent(desk.on(.mpv(.fileLoaded))) == ["/have 1 yes"])
        _ = desk.on(.connected)
        _ = desk.on(.room(RoomEvents.welcome("m2")))
        #expect(Desk.sent(desk.on(Self.ownState(3, .paused))) == ["/have 3 yes"])
    }

    @Test("a new own item asks again: the file that matched the last one is not this one")
    func newItemAsksAgain() {
        var desk = Self.desk(Self.mine)
        _ = desk.on(Self.ownState(1, .paused))
        desk.readings.duration = 60.2
        _ = desk.on(.mpv(.fileLoaded))
        let other = (hash: UInt64(7), size: Int64(99))
        let actions = desk.on(Self.ownState(2, .paused, item: other))
        #expect(actions.contains(.unload))
        #expect(Desk.sent(actions) == ["/have 2 no"])
    }

    @Test("--share: mpv reads the file's length, the room is sent its identity (no name), and the file is not loaded twice")
    func share() {
        var desk = Desk(player: DesktopPlayer(localFile: Self.mine, share: "Movie night"))
        desk.readings = MpvReadings(loaded: false, paused: true)
        _ = desk.on(.connected)
        _ = desk.on(.room(RoomEvents.welcome("m1")))
        let first = desk.on(Desk.state(1, .paused))
        #expect(first.contains(.load("/home/me/Renamed.mkv")))
        #expect(!first.contains(.load("http://media/a.mp4")))
        #expect(desk.player.mode == "sharing")
        desk.readings.duration = 60.2
        #expect(Desk.sent(desk.on(.mpv(.fileLoaded))) == ["/watch own 8e245d9679d31e12 1400000000 60.200 Movie night"])
        let shared = desk.on(Self.ownState(2, .paused))
        #expect(!shared.contains { if case .load = $0 { true } else { false } })
        #expect(Desk.sent(shared) == ["/have 2 yes"])
    }

    @Test("a share the room refuses leaves mpv to the room's item")
    func shareRefused() {
        var desk = Desk(player: DesktopPlayer(localFile: Self.mine, share: ""))
        desk.readings = MpvReadings(loaded: false, paused: true)
        _ = desk.on(.room(RoomEvents.welcome("m1")))
        _ = desk.on(Desk.state(1, .paused))
        desk.readings.duration = 60.2
        #expect(Desk.sent(desk.on(.mpv(.fileLoaded))) == ["/watch own 8e245d9679d31e12 1400000000 60.200"])
        let refused = desk.on(.room(RoomEvents.error(.forbidden, "only hosts change the video", command: .watch)))
        // The file given stands in for the room's link (it cannot be checked against a link).
        #expect(desk.player.mode != "sharing")
        #expect(Self.told(refused).first?.contains("in place of the room's link") == true)
    }
}
