@testable import CowatchCore
@testable import CowatchSyncplay
import CowatchTime
import SlashCommands
import Testing

typealias Action = SyncplaySession.Action

/// One Syncplay client driven by hand: its lines and the room's events in, the
/// session's actions out. Both clocks move together, `seconds` after their start.
struct Client {
    static let serverStart: Int64 = 1_700_000_000_000

    var session: SyncplaySession
    var seconds = 100.0

    init(settings: SyncplaySession.Settings = SyncplaySession.Settings()) {
        session = SyncplaySession(settings: settings, now: MonotonicInstant(microseconds: 100_000_000))
    }

    var now: SyncplaySession.Now {
        SyncplaySession.Now(monotonic: MonotonicInstant(microseconds: Int64((seconds * 1e6).rounded())),
                            server: server(0))
    }

    /// The server's instant `after` seconds from now.
    func server(_ after: Double) -> ServerInstant {
        ServerInstant(milliseconds: Self.serverStart + Int64(((seconds + after) * 1000).rounded()))
    }

    mutating func advance(_ span: Double) { seconds += span }

    mutating func on(_ event: SyncplaySession.Event) -> [Action] { session.handle(event, now: now) }

    mutating func line(_ text: String) -> [Action] { on(.line(text)) }

    mutating func say(_ message: SyncplayJSON) -> [Action] { line(message.text) }

    /// The room's event, on the member's current connection.
    mutating func room(_ event: RoomEvent) -> [Action] { on(.memberReceived(link: session.link, event)) }

    mutating func hello(name: String = "sam", room: String = "lobby", password: String? = nil) -> [Action] {
        var hello: [String: SyncplayJSON] = ["username": .string(name), "room": ["name": .string(room)], "version": "1.6.9"]
        if let password { hello["password"] = .string(password) }
        return say(["Hello": .object(hello)])
    }

    /// Said Hello as "sam" in "lobby" and welcomed by the room: returns the welcome's actions.
    @discardableResult
    mutating func join(_ welcome: Welcome = Fixture.welcome()) -> [Action] {
        _ = hello()
        _ = on(.memberOpened(link: session.link))
        return room(.welcome(welcome))
    }

    /// Joined, given `state`, and the forced state acknowledged (with the room's own playstate).
    mutating func settled(_ state: RoomState, welcome: Welcome = Fixture.welcome()) {
        join(welcome)
        _ = room(.state(state))
        _ = acknowledge()
    }

    /// The client's `State`, acknowledging the server's forced ones when `server` is given.
    mutating func state(position: Double, paused: Bool, doSeek: Bool = false, server: Int? = nil) -> [Action] {
        var body: [String: SyncplayJSON] = ["playstate": ["position": .number(position), "paused": .bool(paused),
                                                          "doSeek": .bool(doSeek)]]
        if let server { body["ignoringOnTheFly"] = ["server": .number(Double(server))] }
        return say(["State": .object(body)])
    }

    /// The acknowledgement of the forced state written, with the room's playstate.
    mutating func acknowledge() -> [Action] {
        guard let state = session.state else { return [] }
        let paused = SyncplaySession.clientPaused(state.playback, now: server(0))
        return self.state(position: state.playback.position(at: server(0)).seconds, paused: paused,
                          server: session.serverIgnoring)
    }

    // MARK: Reading actions

    static func written(_ actions: [Action]) -> [SyncplayJSON] {
        actions.compactMap { if case .write(let message) = $0 { message } else { nil } }
    }

    /// The bodies of the messages written under `key` ("State", "Error", "Chat"...).
    static func written(_ key: String, _ actions: [Action]) -> [SyncplayJSON] {
        written(actions).compactMap { $0[key] }
    }

    /// The bodies of `Set` messages written for `what` ("ready", "playlistChange"...).
    static func set(_ what: String, _ actions: [Action]) -> [SyncplayJSON] {
        written("Set", actions).compactMap { $0[what] }
    }

    static func toRoom(_ actions: [Action]) -> [String] {
        actions.compactMap { if case .sendRoom(let line) = $0 { line } else { nil } }
    }

    static func opened(_ actions: [Action]) -> [SyncplaySession.MemberLink] {
        actions.compactMap { if case .openMember(let link) = $0 { link } else { nil } }
    }

    static func errors(_ actions: [Action]) -> [String] {
        written("Error", actions).compactMap { $0["message"]?.string }
    }

    /// Chat lines from Cowatch itself.
    static func notices(_ actions: [Action]) -> [String] {
        written("Chat", actions).filter { $0["username"]?.string == SyncplaySession.noticeName }
            .compactMap { $0["message"]?.string }
    }

    static func closes(_ actions: [Action]) -> Bool { actions.contains(.close) }
}

/// The room's side, made of the core's own types.
enum Fixture {
    static let sam = person("m1", "sam")
    static let alice = person("m2", "alice", role: .host)
    static let ownerKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

    static func person(_ id: String, _ name: String, role: Role = .member, owner: Bool = false) -> Participant {
        Participant(id: MemberID(id), name: DisplayName(name)!, role: role, joined: true, player: true, ready: false,
                    suspensions: [], autoplay: true, connected: true, owner: owner, muted: false, scope: nil)
    }

    static func welcome(you: Participant = sam, others: [Participant] = [alice], ownerKey: String? = nil,
                        resume: String = "tok-1") -> Welcome {
        Welcome(you: you, room: RoomName("lobby")!, serverTime: ServerInstant(milliseconds: Client.serverStart),
                resume: resume, ownerKey: ownerKey, participants: others + [you], chat: [])
    }

    static func link(_ url: String, id: String = "a1") -> Activity {
        let link = MediaURL(url)!
        return Activity(id: id, url: link, title: "", identifier: link.text)
    }

    static let size: Int64 = 1_234_567_890
    static let duration = 5400.0

    static func own(id: String = "a1") -> Activity {
        let copy = OwnCopy(hash: 0x1234_5678_9abc_def0, size: size, duration: duration)!
        return Activity(id: id, url: nil, title: "Our film", identifier: copy.identifier, source: .own(copy),
                        duration: copy.duration)
    }

    static func state(_ seq: Int64, _ status: PlaybackStatus, position: Double, at: ServerInstant,
                      activity: Activity? = link("https://x/a.mp4"), queue: [String] = [], by: MemberID? = alice.id) -> RoomState {
        let playback = Playback(status: status, item: activity?.identifier, rate: .normal,
                                position: MediaTime(seconds: position), at: at, by: by, cause: .play)
        return RoomState(seq: seq, session: activity.map { GroupSession(state: .joined, reason: nil, activity: $0) },
                         playback: playback,
                         queue: queue.enumerated().map { QueueItem(id: "q\($0.offset)", url: MediaURL($0.element)!, title: "") },
                         policy: RoomPolicy())
    }

    static func idle(_ seq: Int64, at: ServerInstant) -> RoomState {
        RoomState(seq: seq, session: nil, playback: .idle(at: at, cause: .create, by: nil), queue: [], policy: RoomPolicy())
    }
}

@Suite("The Syncplay session: TLS and Hello")
struct SyncplayHelloTests {
    @Test("TLS startTLS before Hello is taken when a certificate is configured")
    func tlsOffered() {
        var settings = SyncplaySession.Settings()
        settings.tlsAvailable = true
        var client = Client(settings: settings)
        #expect(client.say(["TLS": ["startTLS": "send"]]) == [.write(["TLS": ["startTLS": "true"]]), .startTLS])
    }

    @Test("TLS startTLS is refused without a certificate")
    func tlsUnavailable() {
        var client = Client()
        #expect(client.say(["TLS": ["startTLS": "send"]]) == [.write(["TLS": ["startTLS": "false"]])])
        #expect(!client.session.isClosed)
    }

    @Test("TLS startTLS after Hello is refused, even with a certificate")
    func tlsAfterHello() {
        var settings = SyncplaySession.Settings()
        settings.tlsAvailable = true
        var client = Client(settings: settings)
        _ = client.hello()
        #expect(client.say(["TLS": ["startTLS": "send"]]) == [.write(["TLS": ["startTLS": "false"]])])
        _ = client.room(.welcome(Fixture.welcome()))
        #expect(client.say(["TLS": ["startTLS": "send"]]) == [.write(["TLS": ["startTLS": "false"]])])
    }

    @Test("a Hello without a username, a room or a version: an Error, then the connection closes",
          arguments: [
              #"{"Hello": {"room": {"name": "lobby"}, "version": "1.6.9"}}"#,
              #"{"Hello": {"username": "sam", "version": "1.6.9"}}"#,
              #"{"Hello": {"username": "sam", "room": {"name": "lobby"}}}"#,
              #"{"Hello": {"username": "  ", "room": {"name": "lobby"}, "version": "1.6.9"}}"#,
          ])
    func helloIncomplete(line: String) {
        var client = Client()
        let actions = client.line(line)
        #expect(Client.errors(actions).count == 1)
        #expect(actions.last == .close)
        #expect(Client.opened(actions).isEmpty)
        #expect(client.session.isClosed)
    }

    @Test("a room name Cowatch does not take: an Error, then the connection closes")
    func helloBadRoom() {
        var client = Client()
        let actions = client.hello(room: "a b")
        #expect(Client.errors(actions).count == 1)
        #expect(actions.last == .close)
        #expect(Client.opened(actions).isEmpty)
    }

    @Test("a good Hello opens the member's connection with its name and room, and writes nothing yet")
    func helloOpensMember() throws {
        var client = Client()
        let actions = client.hello(name: "sam", room: "lobby", password: "pw")
        let link = try #require(Client.opened(actions).first)
        #expect(actions.count == 1)
        #expect(link.name == "sam")
        #expect(link.room == RoomName("lobby"))
        #expect(link.password == "pw")
        #expect(link.resume == nil)
        #expect(link.owner == nil)
    }

    @Test("a managed room's +NAME:CODE is the room NAME")
    func helloManagedRoom() throws {
        var client = Client()
        let link = try #require(Client.opened(client.hello(room: "+movie:ABCDEF123456")).first)
        #expect(link.room == RoomName("movie"))
    }

    @Test("the Hello reply waits for the room's welcome, and names the member as the room does")
    func helloReplyAfterWelcome() throws {
        var client = Client()
        #expect(Client.written(client.hello(name: "sam")).isEmpty)
        #expect(Client.written(client.on(.memberOpened(link: client.session.link))).isEmpty)
        let renamed = Fixture.person("m1", "sam-2")
        let welcomed = client.room(.welcome(Fixture.welcome(you: renamed)))
        let hello = try #require(Client.written("Hello", welcomed).first)
        #expect(hello["username"] == "sam-2")
        #expect(hello["room"] == ["name": "lobby"])
        #expect(hello["version"] == "1.6.9")
        #expect(Client.written("List", welcomed).count == 1)
    }

    @Test("a line before Hello other than TLS: an Error, then the connection closes")
    func stateBeforeHello() {
        var client = Client()
        let actions = client.state(position: 0, paused: true)
        #expect(Client.errors(actions).count == 1)
        #expect(actions.last == .close)
    }
}

@Suite("The Syncplay session: bad lines and flooding")
struct SyncplayBadLineTests {
    @Test("a line that is not JSON, once joined: an Error, and the connection carries on",
          arguments: ["not json", "{\"State\": ", "[1, 2]", "\"text\"", "12"])
    func malformedLine(line: String) {
        var client = Client()
        client.join()
        let actions = client.line(line)
        #expect(actions.count == 1)
        #expect(Client.errors(actions).count == 1)
        #expect(!client.session.isClosed)
        // It is still heard.
        #expect(Client.toRoom(client.say(["Chat": "still here"])) == ["still here"])
    }

    @Test("an unknown message: an Error, and the connection carries on")
    func unknownMessage() {
        var client = Client()
        client.join()
        let actions = client.say(["Bogus": ["x": 1]])
        #expect(actions.count == 1)
        #expect(Client.errors(actions).count == 1)
        #expect(!Client.closes(actions))
        #expect(!client.session.isClosed)
    }

    @Test("lines beyond the burst: an Error, the connection closes, and the member leaves")
    func flooding() {
        var settings = SyncplaySession.Settings()
        settings.linesPerSecond = 2
        settings.lineBurst = 4
        var client = Client(settings: settings)
        client.join()  // the Hello spent one line
        for _ in 0..<3 { #expect(client.line("{}").isEmpty) }
        let actions = client.line("{}")
        #expect(Client.errors(actions).count == 1)
        #expect(actions.contains(.close))
        #expect(actions.contains(.closeMember(leaving: true)))
        #expect(client.session.isClosed)
    }

    @Test("lines at the allowed rate go on for ever")
    func steadyLines() {
        var settings = SyncplaySession.Settings()
        settings.linesPerSecond = 2
        settings.lineBurst = 4
        var client = Client(settings: settings)
        client.join()
        for _ in 0..<40 {
            client.advance(0.5)
            #expect(client.line("{}").isEmpty)
        }
        #expect(!client.session.isClosed)
    }
}

@Suite("The Syncplay session: the room's state")
struct SyncplayStateTests {
    @Test("the room's state is written forced: ignoringOnTheFly server 1, paused, position and setBy as the room says")
    func forcedState() throws {
        var client = Client()
        client.join()
        let actions = client.room(.state(Fixture.state(3, .paused, position: 42, at: client.server(-5))))
        let state = try #require(Client.written("State", actions).first)
        #expect(state["ignoringOnTheFly"]?["server"] == 1)
        #expect(state["playstate"]?["paused"] == true)
        #expect(state["playstate"]?["position"] == 42)
        #expect(state["playstate"]?["setBy"] == "alice")
    }

    @Test("a playing room's position runs on from its anchor")
    func playingPosition() throws {
        var client = Client()
        client.join()
        let actions = client.room(.state(Fixture.state(3, .playing, position: 10, at: client.server(-2))))
        let state = try #require(Client.written("State", actions).first)
        #expect(state["playstate"]?["paused"] == false)
        #expect(state["playstate"]?["position"] == 12)
    }

    @Test("periodic states wait until the client acknowledges the forced one")
    func ticksWaitForAcknowledgement() throws {
        var client = Client()
        client.join()
        _ = client.room(.state(Fixture.state(3, .paused, position: 42, at: client.server(-5))))
        client.advance(1)
        #expect(Client.written("State", client.on(.tick)).isEmpty)
        // A report that does not acknowledge changes nothing.
        _ = client.state(position: 42, paused: true)
        #expect(Client.written("State", client.on(.tick)).isEmpty)
        _ = client.state(position: 42, paused: true, server: 1)
        client.advance(1)
        let state = try #require(Client.written("State", client.on(.tick)).first)
        #expect(state["ignoringOnTheFly"] == nil)
        #expect(state["playstate"]?["paused"] == true)
        #expect(state["playstate"]?["position"] == 42)
    }

    @Test("an acknowledgement of an older forced state does not count")
    func staleAcknowledgement() {
        var client = Client()
        client.join()
        _ = client.room(.state(Fixture.state(3, .paused, position: 42, at: client.server(-5))))
        _ = client.room(.state(Fixture.state(4, .paused, position: 80, at: client.server(0))))
        #expect(client.session.serverIgnoring == 2)
        _ = client.state(position: 42, paused: true, server: 1)
        #expect(Client.written("State", client.on(.tick)).isEmpty)
        _ = client.state(position: 80, paused: true, server: 2)
        #expect(Client.written("State", client.on(.tick)).count == 1)
    }

    @Test("the client's own ignoringOnTheFly counter is echoed once")
    func clientCounterEchoed() throws {
        var client = Client()
        client.settled(Fixture.state(3, .paused, position: 42, at: client.server(-5)))
        _ = client.say(["State": ["ignoringOnTheFly": ["client": 1], "playstate": ["position": 42, "paused": true]]])
        let first = try #require(Client.written("State", client.on(.tick)).first)
        #expect(first["ignoringOnTheFly"] == ["client": 1])
        let second = try #require(Client.written("State", client.on(.tick)).first)
        #expect(second["ignoringOnTheFly"] == nil)
    }
}

@Suite("The Syncplay session: the client's pause, play and seek")
struct SyncplayControlTests {
    @Test("the client pausing a playing room: /pause")
    func pause() {
        var client = Client()
        client.settled(Fixture.state(3, .playing, position: 10, at: client.server(0)))
        client.advance(2)
        #expect(Client.toRoom(client.state(position: 12, paused: true)) == ["/pause"])
    }

    @Test("the client playing a paused room: /play")
    func play() {
        var client = Client()
        client.settled(Fixture.state(3, .paused, position: 10, at: client.server(0)))
        #expect(Client.toRoom(client.state(position: 10, paused: false)) == ["/play"])
    }

    @Test("the same playstate as the room's: nothing for the room")
    func noChange() {
        var client = Client()
        client.settled(Fixture.state(3, .paused, position: 10, at: client.server(0)))
        #expect(Client.toRoom(client.state(position: 10, paused: true)).isEmpty)
    }

    @Test("doSeek: /seek to the client's position, to the millisecond")
    func seek() {
        var client = Client()
        client.settled(Fixture.state(3, .paused, position: 10, at: client.server(0)))
        #expect(Client.toRoom(client.state(position: 12.5, paused: true, doSeek: true)) == ["/seek 12.500"])
    }

    @Test("a play the person pressed while a correction was on its way still reaches the room, once")
    func ownChangeWhileForced() {
        var client = Client()
        client.settled(Fixture.state(3, .paused, position: 10, at: client.server(0)))
        // Its player stood a little off the held position: the room puts it back, forced.
        _ = client.state(position: 10.1, paused: true)
        #expect(client.session.serverIgnoring == 1)
        // Before the correction reached it, its person pressed play (its client counts the change).
        let own: SyncplayJSON = ["State": ["ignoringOnTheFly": ["client": 1],
                                           "playstate": ["position": 10.1, "paused": false]]]
        #expect(Client.toRoom(client.say(own)) == ["/play"])
        // The same report again, the change not yet echoed: nothing more.
        #expect(Client.toRoom(client.say(own)).isEmpty)
    }

    @Test("the client's playstate is not read while a forced state is unacknowledged")
    func ignoredWhileForced() {
        var client = Client()
        client.join()
        _ = client.room(.state(Fixture.state(3, .playing, position: 10, at: client.server(0))))
        #expect(Client.toRoom(client.state(position: 10, paused: true)).isEmpty)
        #expect(Client.toRoom(client.state(position: 30, paused: true, doSeek: true)).isEmpty)
    }
}

@Suite("The Syncplay session: coordinated starts and readiness")
struct SyncplayStartTests {
    @Test("a start in the future: a timer for it, and paused until it fires")
    func coordinatedStart() throws {
        var client = Client()
        client.settled(Fixture.state(4, .waiting, position: 30, at: client.server(-1)))
        let actions = client.room(.state(Fixture.state(5, .playing, position: 30, at: client.server(2))))
        #expect(actions.contains(.schedule(.start(seq: 5), after: .milliseconds(2000))))
        let held = try #require(Client.written("State", actions).last)
        #expect(held["playstate"]?["paused"] == true)
        #expect(held["playstate"]?["position"] == 30)
        client.advance(2)
        let started = try #require(Client.written("State", client.on(.timer(.start(seq: 5)))).first)
        #expect(started["playstate"]?["paused"] == false)
        #expect(started["playstate"]?["position"] == 30)
    }

    @Test("a timer for a start the room has left behind writes nothing")
    func staleTimer() {
        var client = Client()
        client.settled(Fixture.state(5, .playing, position: 30, at: client.server(2)))
        _ = client.room(.state(Fixture.state(6, .paused, position: 31, at: client.server(0))))
        client.advance(2)
        #expect(client.on(.timer(.start(seq: 5))).isEmpty)
    }

    @Test("waiting: /ready once the client acknowledged and stands at the held position, once")
    func readyOnce() {
        var client = Client()
        client.join()
        let waiting = client.room(.state(Fixture.state(9, .waiting, position: 30, at: client.server(0))))
        #expect(!Client.toRoom(waiting).contains("/ready 9"))
        #expect(Client.toRoom(client.state(position: 30.02, paused: true, server: 1)) == ["/ready 9"])
        #expect(Client.toRoom(client.state(position: 30, paused: true)).isEmpty)
    }

    @Test("held: a player paused away from the held position is put back there once, by Cowatch, then ready")
    func heldPositionCorrected() throws {
        var client = Client()
        client.join()
        _ = client.room(.state(Fixture.state(9, .waiting, position: 30, at: client.server(0))))
        // It paused 1.2 s on (a pause it heard late, a play it pressed first).
        let corrected = client.state(position: 31.2, paused: true, server: 1)
        #expect(Client.toRoom(corrected).isEmpty)
        let state = try #require(Client.written("State", corrected).first)
        #expect(state["playstate"]?["doSeek"] == true)
        #expect(state["playstate"]?["position"]?.number == 30)
        #expect(state["playstate"]?["setBy"] == "Cowatch")
        // Once there, it is ready; and it is not put back twice for one state.
        #expect(Client.toRoom(client.state(position: 30.01, paused: true, server: 1)) == ["/ready 9"])
        #expect(Client.written("State", client.state(position: 30.3, paused: true)).isEmpty)
    }

    @Test("a start is told early by how late the player left the last ones")
    func startLeadLearned() throws {
        var client = Client()
        client.settled(Fixture.state(5, .paused, position: 30, at: client.server(0)))
        // A start 2 s ahead: told at its instant the first time (no lateness known yet).
        let first = client.room(.state(Fixture.state(6, .playing, position: 30, at: client.server(2))))
        #expect(first.contains(.schedule(.start(seq: 6), after: .milliseconds(2000))))
        client.advance(2)
        _ = client.on(.timer(.start(seq: 6)))
        _ = client.acknowledge()
        // 0.5 s later it reports 60 ms behind the timeline: that is its lateness.
        client.advance(0.5)
        _ = client.state(position: 30.44, paused: false)
        _ = client.room(.state(Fixture.state(7, .paused, position: 40, at: client.server(0))))
        _ = client.acknowledge()
        let next = client.room(.state(Fixture.state(8, .playing, position: 40, at: client.server(2))))
        #expect(next.contains(.schedule(.start(seq: 8), after: .milliseconds(1940))))
        // Told early, it is shown playing, at the start's position, before the instant.
        client.advance(1.94)
        let told = try #require(Client.written("State", client.on(.timer(.start(seq: 8)))).first)
        #expect(told["playstate"]?["paused"] == false)
        #expect(told["playstate"]?["position"]?.number == 40)
    }

    @Test("waiting: no /ready while the client stands away from the held position")
    func notReadyElsewhere() {
        var client = Client()
        client.join()
        _ = client.room(.state(Fixture.state(9, .waiting, position: 30, at: client.server(0))))
        #expect(Client.toRoom(client.state(position: 35, paused: true, server: 1)).isEmpty)
        // Put back (the held correction), it is ready there.
        #expect(Client.toRoom(client.state(position: 30, paused: true, server: 1)) == ["/ready 9"])
    }

    @Test("waiting: no /ready before the forced state is acknowledged")
    func notReadyUnacknowledged() {
        var client = Client()
        client.join()
        _ = client.room(.state(Fixture.state(9, .waiting, position: 30, at: client.server(0))))
        #expect(Client.toRoom(client.state(position: 30, paused: true)).isEmpty)
    }

    @Test("waiting: no /ready when the client said it is not ready")
    func notReadyBySaying() {
        var client = Client()
        client.join()
        _ = client.say(["Set": ["ready": ["isReady": false, "manuallyInitiated": true]]])
        _ = client.room(.state(Fixture.state(9, .waiting, position: 30, at: client.server(0))))
        #expect(Client.toRoom(client.state(position: 30, paused: true, server: 1)).isEmpty)
        // Ready again: it goes.
        #expect(Client.toRoom(client.say(["Set": ["ready": ["isReady": true, "manuallyInitiated": true]]])) == ["/ready 9"])
    }

    @Test("waiting: the not-ready a client says by itself on connecting (readyAtStart) holds no start back")
    func automaticNotReadyIsNoOnesWord() {
        var client = Client()
        client.join()
        _ = client.say(["Set": ["ready": ["isReady": false, "manuallyInitiated": false]]])
        _ = client.room(.state(Fixture.state(9, .waiting, position: 30, at: client.server(0))))
        #expect(Client.toRoom(client.state(position: 30, paused: true, server: 1)) == ["/ready 9"])
    }

    @Test("a new waiting state asks for a new /ready")
    func readyPerSeq() {
        var client = Client()
        client.join()
        _ = client.room(.state(Fixture.state(9, .waiting, position: 30, at: client.server(0))))
        #expect(Client.toRoom(client.state(position: 30, paused: true, server: 1)) == ["/ready 9"])
        _ = client.room(.state(Fixture.state(10, .waiting, position: 60, at: client.server(0))))
        #expect(Client.toRoom(client.state(position: 60, paused: true, server: 1)) == ["/ready 10"])
    }

    @Test("the client's Set ready is told back to it, under the name the room gave it")
    func readyEchoed() throws {
        var client = Client()
        client.join(Fixture.welcome(you: Fixture.person("m1", "sam-2")))
        let actions = client.say(["Set": ["ready": ["isReady": true, "manuallyInitiated": true]]])
        let ready = try #require(Client.set("ready", actions).first)
        #expect(ready == ["username": "sam-2", "isReady": true, "manuallyInitiated": true])
    }
}

@Suite("The Syncplay session: an own copy")
struct SyncplayOwnCopyTests {
    static func inOwnCopyRoom() -> Client {
        var client = Client()
        client.settled(Fixture.state(7, .paused, position: 0, at: client.server(0), activity: Fixture.own()))
        return client
    }

    static func file(size: SyncplayJSON = .number(Double(Fixture.size)), duration: Double = Fixture.duration) -> SyncplayJSON {
        ["Set": ["file": ["name": "film.mkv", "size": size, "duration": .number(duration)]]]
    }

    @Test("the same size and a duration within a second: /have yes")
    func sameFile() {
        var client = Self.inOwnCopyRoom()
        #expect(Client.toRoom(client.say(Self.file(duration: Fixture.duration + 1))) == ["/have 7 yes"])
    }

    @Test("another size: /have no")
    func otherSize() {
        var client = Self.inOwnCopyRoom()
        #expect(Client.toRoom(client.say(Self.file(size: .number(Double(Fixture.size + 1))))) == ["/have 7 no"])
    }

    @Test("the size hashed as Syncplay hashes it: /have yes")
    func hashedSize() {
        var client = Self.inOwnCopyRoom()
        let hashed = SyncplaySession.hashedSize(Fixture.size)
        #expect(Client.toRoom(client.say(Self.file(size: .string(hashed)))) == ["/have 7 yes"])
        #expect(Client.toRoom(client.say(Self.file(size: .string(hashed.uppercased())))).isEmpty)
    }

    @Test("another size hashed: /have no")
    func otherHashedSize() {
        var client = Self.inOwnCopyRoom()
        let hashed = SyncplaySession.hashedSize(Fixture.size + 1)
        #expect(Client.toRoom(client.say(Self.file(size: .string(hashed)))) == ["/have 7 no"])
    }

    @Test("a duration 5 seconds off: /have no")
    func otherDuration() {
        var client = Self.inOwnCopyRoom()
        #expect(Client.toRoom(client.say(Self.file(duration: Fixture.duration + 5))) == ["/have 7 no"])
    }

    @Test("the answer is given again only when it changes")
    func answeredOncePerChange() {
        var client = Self.inOwnCopyRoom()
        #expect(Client.toRoom(client.say(Self.file())) == ["/have 7 yes"])
        #expect(Client.toRoom(client.say(Self.file())).isEmpty)
        #expect(Client.toRoom(client.say(Self.file(duration: 100))) == ["/have 7 no"])
    }

    @Test("hashedSize is the first 12 hex digits of SHA-256 of the size in decimal")
    func hashedSizeValue() {
        // printf 1234567890 | sha256sum: c775e7b757ede630cd0aa1113bd102661ab38829ca52a6422ab782862f268646
        #expect(SyncplaySession.hashedSize(1_234_567_890) == "c775e7b757ed")
    }

    @Test("a file told before the own copy is shared is answered when it comes")
    func fileBeforeItem() {
        var client = Client()
        client.join()
        #expect(Client.toRoom(client.say(Self.file())).isEmpty)
        let actions = client.room(.state(Fixture.state(7, .paused, position: 0, at: client.server(0), activity: Fixture.own())))
        #expect(Client.toRoom(actions) == ["/have 7 yes"])
    }
}

@Suite("The Syncplay session: chat and the room's words")
struct SyncplayChatTests {
    @Test("the client's chat line starting with / goes to the room as chat (//)")
    func slashChat() {
        var client = Client()
        client.join()
        #expect(Client.toRoom(client.say(["Chat": "/me hi"])) == ["//me hi"])
        #expect(Client.toRoom(client.say(["Chat": "hello all"])) == ["hello all"])
    }

    @Test("a chat line's line breaks become spaces")
    func chatLineBreaks() {
        var client = Client()
        client.join()
        #expect(Client.toRoom(client.say(["Chat": "one\ntwo"])) == ["one two"])
    }

    @Test("the room's chat is Syncplay's Chat from the speaker")
    func roomChat() {
        var client = Client()
        client.join()
        let line = ChatLine(from: Fixture.alice.id, name: Fixture.alice.name, text: "hello", at: client.server(0), me: false)
        #expect(client.room(.chat(line)) == [.write(["Chat": ["username": "alice", "message": "hello"]])])
    }

    @Test("a refused /pause: a notice from Cowatch, and the room's state forced on the client")
    func refusedPause() throws {
        var client = Client()
        client.settled(Fixture.state(3, .playing, position: 10, at: client.server(0)))
        client.advance(1)
        #expect(Client.toRoom(client.state(position: 11, paused: true)) == ["/pause"])
        let refusal = CommandError(.forbidden, command: .pause, message: "only hosts control playback here")
        let actions = client.room(.error(refusal))
        #expect(Client.notices(actions) == ["only hosts control playback here"])
        let state = try #require(Client.written("State", actions).first)
        #expect(state["ignoringOnTheFly"]?["server"] == 1)
        #expect(state["playstate"]?["paused"] == false)
        #expect(state["playstate"]?["doSeek"] == true)
        #expect(state["playstate"]?["position"] == 11)
    }

    @Test("a refusal of a command other than play, pause or seek is only a notice")
    func refusedOther() {
        var client = Client()
        client.settled(Fixture.state(3, .playing, position: 10, at: client.server(0)))
        let actions = client.room(.error(CommandError(.slowMode, command: nil, message: "slow down")))
        #expect(Client.notices(actions) == ["slow down"])
        #expect(Client.written("State", actions).isEmpty)
    }
}

@Suite("The Syncplay session: the member's connection closing")
struct SyncplayMemberClosedTests {
    @Test("removed from the room (4001): an Error with the reason, then the connection closes")
    func kicked() {
        var client = Client()
        client.join()
        let actions = client.on(.memberClosed(link: client.session.link, code: 4001, reason: "removed by alice"))
        #expect(Client.errors(actions) == ["removed by alice"])
        #expect(actions.last == .close)
        #expect(Client.opened(actions).isEmpty)
        #expect(client.session.isClosed)
    }

    @Test("the room moved (4010): the member's connection opens again with the welcome's resume token")
    func roomMoved() throws {
        var client = Client()
        client.join(Fixture.welcome(resume: "tok-7"))
        let actions = client.on(.memberClosed(link: 1, code: 4010, reason: "room moved"))
        let link = try #require(Client.opened(actions).first)
        #expect(link.link == 2)
        #expect(link.resume == "tok-7")
        #expect(link.room == RoomName("lobby"))
        #expect(link.name == "sam")
        #expect(Client.written(actions).isEmpty)
        #expect(!client.session.isClosed)
        // The old connection's news is no longer read.
        #expect(client.on(.memberClosed(link: 1, code: 4001, reason: "late")).isEmpty)
    }

    @Test("a room that keeps moving: after the reconnects allowed, the client is let go without an Error, to come back by itself")
    func tooManyReconnects() {
        var settings = SyncplaySession.Settings()
        settings.maximumReconnects = 2
        var client = Client(settings: settings)
        client.join()
        for _ in 0..<2 {
            #expect(Client.opened(client.on(.memberClosed(link: client.session.link, code: 4010, reason: "moved"))).count == 1)
        }
        let actions = client.on(.memberClosed(link: client.session.link, code: 4010, reason: "moved"))
        #expect(Client.errors(actions).isEmpty)
        #expect(actions.last == .close)
    }

    @Test("the server going (1001): the client is let go without an Error, so that it comes back after a restart")
    func serverGoing() {
        var client = Client()
        client.join()
        let actions = client.on(.memberClosed(link: client.session.link, code: 1001, reason: "the server is shutting down"))
        #expect(Client.errors(actions).isEmpty)
        #expect(Client.opened(actions).isEmpty)
        #expect(actions.last == .close)
    }

    @Test("closed for flooding the room (1008): told, and out")
    func floodedOut() {
        var client = Client()
        client.join()
        let actions = client.on(.memberClosed(link: client.session.link, code: 1008, reason: "too many commands"))
        #expect(Client.errors(actions) == ["too many commands"])
        #expect(Client.opened(actions).isEmpty)
    }

    @Test("the client gone: the member leaves at once")
    func clientGone() {
        var client = Client()
        client.join()
        #expect(client.on(.clientGone) == [.closeMember(leaving: true)])
        #expect(client.session.isClosed)
    }
}

@Suite("The Syncplay session: controllerAuth and managed rooms")
struct SyncplayControllerTests {
    @Test("an owner key: the member comes back with it, lower-cased, and the room's answer is told")
    func ownerKey() throws {
        var client = Client()
        client.join(Fixture.welcome(resume: "tok-1"))
        let actions = client.say(["Set": ["controllerAuth": ["room": "lobby", "password": .string(Fixture.ownerKey.uppercased())]]])
        let link = try #require(Client.opened(actions).first)
        #expect(link.owner == Fixture.ownerKey)
        #expect(link.resume == "tok-1")
        #expect(link.room == RoomName("lobby"))
        #expect(link.link == 2)
        var owner = Fixture.sam
        owner.owner = true
        owner.role = .host
        let welcomed = client.room(.welcome(Fixture.welcome(you: owner)))
        #expect(Client.set("controllerAuth", welcomed) == [["user": "sam", "room": "lobby", "success": true]])
        #expect(Client.written("Hello", welcomed).isEmpty)
    }

    @Test("a wrong owner key: controllerAuth success false, and a notice")
    func wrongOwnerKey() {
        var client = Client()
        client.join()
        _ = client.say(["Set": ["controllerAuth": ["room": "lobby", "password": .string(Fixture.ownerKey)]]])
        let welcomed = client.room(.welcome(Fixture.welcome()))
        #expect(Client.set("controllerAuth", welcomed) == [["user": "sam", "room": "lobby", "success": false]])
        #expect(Client.notices(welcomed).count == 1)
    }

    @Test("the room's founder asking with a password Syncplay made: newControlledRoom with the owner key")
    func founderSyncplayPassword() {
        var client = Client()
        var founder = Fixture.sam
        founder.owner = true
        founder.role = .host
        client.join(Fixture.welcome(you: founder, ownerKey: Fixture.ownerKey))
        let actions = client.say(["Set": ["controllerAuth": ["room": "lobby", "password": "XY-123-456"]]])
        #expect(Client.set("newControlledRoom", actions) == [["roomName": "lobby", "password": .string(Fixture.ownerKey.uppercased())]])
        #expect(Client.opened(actions).isEmpty)
    }

    @Test("the room's founder asking with no password: newControlledRoom with the owner key in upper case")
    func founderNoPassword() {
        var client = Client()
        var founder = Fixture.sam
        founder.owner = true
        founder.role = .host
        client.join(Fixture.welcome(you: founder, ownerKey: Fixture.ownerKey))
        let actions = client.say(["Set": ["controllerAuth": ["room": "lobby", "password": ""]]])
        #expect(Client.set("newControlledRoom", actions) == [["roomName": "lobby", "password": .string(Fixture.ownerKey.uppercased())]])
    }

    @Test("the room's founder giving its owner key: success at once, no new connection")
    func founderOwnerKey() {
        var client = Client()
        var founder = Fixture.sam
        founder.owner = true
        founder.role = .host
        client.join(Fixture.welcome(you: founder, ownerKey: Fixture.ownerKey))
        let actions = client.say(["Set": ["controllerAuth": ["room": "lobby", "password": .string(Fixture.ownerKey.uppercased())]]])
        #expect(Client.set("controllerAuth", actions) == [["user": "sam", "room": "lobby", "success": true]])
        #expect(Client.opened(actions).isEmpty)
    }

    @Test("the founder's welcome tells it the owner key in its message of the day")
    func founderMotd() throws {
        var client = Client()
        let welcomed = client.join(Fixture.welcome(ownerKey: Fixture.ownerKey))
        let motd = try #require(Client.written("Hello", welcomed).first?["motd"]?.string)
        #expect(motd.contains(Fixture.ownerKey.uppercased()))
    }
}

@Suite("The Syncplay session: the shared playlist")
struct SyncplayPlaylistTests {
    @Test("the room's item and queue: playlistChange with their links, and playlistIndex 0")
    func playlistTold() {
        var client = Client()
        client.join()
        let actions = client.room(.state(Fixture.state(3, .paused, position: 0, at: client.server(0),
                                                       activity: Fixture.link("https://x/a.mp4"), queue: ["https://x/b.mp4"])))
        #expect(Client.set("playlistChange", actions).map { $0["files"] } == [["https://x/a.mp4", "https://x/b.mp4"]])
        #expect(Client.set("playlistIndex", actions).map { $0["index"] } == [0])
    }

    @Test("an empty room: an empty playlist, and a null index")
    func emptyPlaylist() {
        var client = Client()
        client.join()
        let actions = client.room(.state(Fixture.idle(1, at: client.server(0))))
        #expect(Client.set("playlistChange", actions).map { $0["files"] } == [[]])
        #expect(Client.set("playlistIndex", actions).map { $0["index"] } == [.null])
    }

    @Test("the playlist is told again only when it changes")
    func playlistOnce() {
        var client = Client()
        client.join()
        _ = client.room(.state(Fixture.state(3, .paused, position: 0, at: client.server(0))))
        let again = client.room(.state(Fixture.state(4, .playing, position: 0, at: client.server(0))))
        #expect(Client.set("playlistChange", again).isEmpty)
    }

    @Test("a link the client adds: /queue it")
    func addLink() {
        var client = Client()
        client.settled(Fixture.state(3, .paused, position: 0, at: client.server(0), queue: ["https://x/b.mp4"]))
        let actions = client.say(["Set": ["playlistChange": ["files": ["https://x/a.mp4", "https://x/b.mp4", "https://x/y.mp4"]]]])
        #expect(Client.toRoom(actions) == ["/queue https://x/y.mp4"])
    }

    @Test("a link added to an empty room: /watch it, and /queue those after it")
    func addLinkToEmptyRoom() {
        var client = Client()
        client.settled(Fixture.idle(1, at: client.server(0)))
        let actions = client.say(["Set": ["playlistChange": ["files": ["https://x/y.mp4", "https://x/z.mp4"]]]])
        #expect(Client.toRoom(actions) == ["/watch https://x/y.mp4", "/queue https://x/z.mp4"])
    }

    @Test("a file name: no command for the room, one notice, and the room's playlist told back")
    func addFileName() {
        var client = Client()
        client.settled(Fixture.idle(1, at: client.server(0)))
        let actions = client.say(["Set": ["playlistChange": ["files": ["film.mkv"]]]])
        #expect(Client.toRoom(actions).isEmpty)
        #expect(Client.notices(actions).count == 1)
        #expect(Client.set("playlistChange", actions).map { $0["files"] } == [[]])
        let again = client.say(["Set": ["playlistChange": ["files": ["other.mkv"]]]])
        #expect(Client.notices(again).isEmpty)
    }
}

@Suite("The Syncplay session: time limits")
struct SyncplayTimeLimitTests {
    @Test("no Hello within the Hello timeout: an Error, then the connection closes")
    func helloTimeout() {
        var client = Client()
        client.advance(9)
        #expect(client.on(.tick).isEmpty)
        client.advance(2)
        let actions = client.on(.tick)
        #expect(Client.errors(actions).count == 1)
        #expect(actions.last == .close)
    }

    @Test("a client silent past the idle timeout is let go, and its member leaves")
    func idleTimeout() {
        var client = Client()
        client.join()
        client.advance(29)
        #expect(!Client.closes(client.on(.tick)))
        client.advance(2)
        let actions = client.on(.tick)
        #expect(actions.contains(.close))
        #expect(actions.contains(.closeMember(leaving: true)))
        #expect(client.session.isClosed)
        #expect(client.on(.tick).isEmpty)
    }

    @Test("a line too long: an Error, then the connection closes")
    func lineTooLong() {
        var client = Client()
        client.join()
        let actions = client.on(.lineTooLong)
        #expect(Client.errors(actions).count == 1)
        #expect(actions.contains(.close))
        #expect(actions.contains(.closeMember(leaving: true)))
    }
}
