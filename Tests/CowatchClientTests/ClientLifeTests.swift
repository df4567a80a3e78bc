import CowatchClient
@testable import CowatchCore
import CowatchTime
import SlashCommands
import Testing

/// The terminal client's connection life (Sources/CowatchClient/ClientLife.swift):
/// events in, actions out, no sockets and no clock.
struct Terminal {
    var life: ClientLife
    var now = Terminal.at(100)

    init(interactive: Bool = true, keepGoing: Bool = false, reconnectFor: Double = 300, resume: String? = nil) {
        life = ClientLife(settings: .init(interactive: interactive, keepGoing: keepGoing, reconnectFor: .seconds(reconnectFor),
                                          maximumHeldLines: 2, confirmTimeout: .seconds(10)), resume: resume, seed: 7)
    }

    /// The monotonic instant `seconds` after the clock's start.
    static func at(_ seconds: Double) -> MonotonicInstant {
        MonotonicInstant(microseconds: 0) + .seconds(seconds)
    }

    mutating func on(_ event: ClientLife.Event) -> [ClientLife.Action] { life.handle(event) }

    /// Started, open, and welcomed with `token`.
    mutating func joined(token: String = "tok-1") {
        _ = on(.start(now: now))
        _ = on(.opened(1))
        _ = on(.received(1, "* to come back as yourself: cowatch connect --resume \(token) (or ?resume=\(token) in the room's address)"))
    }

    /// The joined connection closed with `code` (at 101 s) and the reconnect timer
    /// fired (at 102 s): a second attempt is under way.
    mutating func reconnecting(afterClose code: UInt16?) {
        _ = on(.closed(1, CloseInfo(code: code, reason: ""), now: Self.at(101)))
        _ = on(.timerFired(.reconnect(1), now: Self.at(102)))
    }

    static func delay(_ actions: [ClientLife.Action]) -> Double? {
        for case .schedule(.reconnect, let after) in actions { return after.seconds }
        return nil
    }

    static func said(_ actions: [ClientLife.Action]) -> String {
        actions.compactMap { if case .say(let text) = $0 { text } else { nil } }.joined(separator: "\n")
    }
}

@Suite("The terminal client after a close")
struct ClientLifeCloseTests {
    @Test("a shutdown is told at once, and the client comes back with the newest resume token")
    func shutdownReconnects() {
        var terminal = Terminal(resume: "old")
        terminal.joined(token: "tok-9")
        let closed = terminal.on(.closed(1, CloseInfo(code: 1001, reason: "server shutting down"), now: Terminal.at(101)))
        #expect(Terminal.said(closed).contains("disconnected: the server is going away (1001): server shutting down"))
        let delay = Terminal.delay(closed)
        #expect(delay.map { (0.25...0.5).contains($0) } == true)
        #expect(!closed.contains { if case .exit = $0 { true } else { false } })
        let retry = terminal.on(.timerFired(.reconnect(1), now: Terminal.at(101.5)))
        #expect(retry == [.connect(2, resume: "tok-9")])
        #expect(terminal.on(.opened(2)) == [.say("cowatch: reconnected")])
    }

    @Test("4010 (the room moved to another node) comes back at once")
    func movedComesBackAtOnce() {
        var terminal = Terminal()
        terminal.joined()
        let closed = terminal.on(.closed(1, CloseInfo(code: 4010, reason: "the room moved to another node; reconnect now"), now: Terminal.at(101)))
        #expect(Terminal.said(closed).contains("the room moved to another server (4010)"))
        #expect(Terminal.delay(closed).map { $0 <= 0.1 } == true)
    }

    @Test("a dropped connection (no close frame) comes back too")
    func dropReconnects() {
        var terminal = Terminal()
        terminal.joined()
        let closed = terminal.on(.closed(1, CloseInfo(code: nil, reason: ""), now: Terminal.at(101)))
        #expect(Terminal.said(closed).contains("the connection dropped"))
        #expect(Terminal.delay(closed) != nil)
    }

    @Test("a kick, a ban, a refusal or a replacement is final, said in words", arguments: [
        (UInt16(4001), "removed by a host"), (4002, "you connected again from elsewhere"), (4003, "banned from the room"),
        (4004, "the room is locked"), (4005, "the room asks a password"), (4006, "the bot token is not valid here"),
    ])
    func finalCloses(code: UInt16, words: String) {
        var terminal = Terminal()
        terminal.joined()
        let closed = terminal.on(.closed(1, CloseInfo(code: code, reason: "by alice: spam"), now: Terminal.at(101)))
        #expect(Terminal.said(closed) == "cowatch: disconnected: \(words) (\(code)): by alice: spam")
        #expect(closed.last == .exit(1))
        #expect(Terminal.delay(closed) == nil)
    }

    @Test("a room that refuses the first join (full) ends the program with its words, not a loop of tries")
    func refusedBeforeWelcome() {
        var terminal = Terminal()
        _ = terminal.on(.start(now: terminal.now))
        _ = terminal.on(.opened(1))
        _ = terminal.on(.received(1, "! room crowded is full (1 members)"))
        let closed = terminal.on(.closed(1, CloseInfo(code: 1008, reason: "room crowded is full (1 members)"),
                                         now: Terminal.at(101)))
        #expect(Terminal.said(closed) == "cowatch: could not join: refused by the server's limits (1008): room crowded is full (1 members)")
        #expect(closed.last == .exit(1))
        #expect(Terminal.delay(closed) == nil)
    }

    @Test("a room that refuses a way back (full by then) is asked again later and later: an open socket is not a welcome")
    func refusedComingBack() {
        var terminal = Terminal()
        terminal.joined()
        var delays: [Double] = []
        for number in 1...4 {
            let attempt = ClientLife.Attempt(number)
            if number > 1 {
                _ = terminal.on(.opened(attempt))
                _ = terminal.on(.received(attempt, "! room crowded is full (1 members)"))
            }
            let closed = terminal.on(.closed(attempt, CloseInfo(code: 1008, reason: "full"), now: Terminal.at(100 + Double(number))))
            delays.append(Terminal.delay(closed) ?? 0)
            _ = terminal.on(.timerFired(.reconnect(attempt), now: Terminal.at(100.5 + Double(number))))
        }
        #expect(delays.allSatisfy { $0 > 0 })
        #expect(delays[3] > delays[0] * 2, "\(delays)")
    }

    @Test("a normal close by the server ends the program with 0")
    func normalClose() {
        var terminal = Terminal()
        terminal.joined()
        #expect(terminal.on(.closed(1, CloseInfo(code: 1000, reason: ""), now: Terminal.at(101))).last == .exit(0))
    }

    @Test("--no-reconnect (reconnectFor 0) makes every close final")
    func noReconnect() {
        var terminal = Terminal(reconnectFor: 0)
        terminal.joined()
        #expect(terminal.on(.closed(1, CloseInfo(code: 1001, reason: ""), now: Terminal.at(101))).last == .exit(1))
    }

    @Test("the delay doubles with each failed try, up to the maximum, and the client gives up after reconnectFor")
    func backoff() {
        var terminal = Terminal(reconnectFor: 60)
        terminal.joined()
        var now = Terminal.at(101)
        var actions = terminal.on(.closed(1, CloseInfo(code: 1001, reason: ""), now: now))
        var delays: [Double] = []
        var attempt = 1
        while let delay = Terminal.delay(actions) {
            delays.append(delay)
            now = now + .seconds(delay)
            actions = terminal.on(.timerFired(.reconnect(attempt), now: now))
            if actions.last == .exit(1) { break }
            attempt += 1
            #expect(actions == [.connect(attempt, resume: "tok-1")])
            actions = terminal.on(.closed(attempt, CloseInfo(code: nil, reason: "Unable to connect"), now: now))
        }
        #expect(actions.last == .exit(1))
        #expect(Terminal.said(actions).contains("gave up reconnecting"))
        for (index, delay) in delays.enumerated() {
            let full = min(15, 0.5 * Double(1 << index))
            #expect(delay >= full / 2 && delay <= full)
        }
        #expect(delays.count >= 5)
    }

    @Test("events of an earlier attempt change nothing")
    func staleEvents() {
        var terminal = Terminal()
        terminal.joined()
        terminal.reconnecting(afterClose: 1001)
        #expect(terminal.on(.closed(1, CloseInfo(code: 4001, reason: ""), now: Terminal.at(102))).isEmpty)
        #expect(terminal.on(.received(1, "<bob> late")).isEmpty)
        #expect(terminal.on(.timerFired(.reconnect(1), now: Terminal.at(103))).isEmpty)
    }
}

@Suite("The terminal client's first connection and refusals")
struct ClientLifeRefusalTests {
    @Test("a first connection that fails ends the program at once")
    func firstFailure() {
        var terminal = Terminal()
        _ = terminal.on(.start(now: Terminal.at(100)))
        let actions = terminal.on(.closed(1, CloseInfo(code: nil, reason: "Unable to connect"), now: Terminal.at(100)))
        #expect(actions == [.say("cowatch: could not connect: Unable to connect"), .exit(1)])
    }

    @Test("a refused upgrade is asked again for the server's words, which are shown")
    func refusedUpgrade() {
        var terminal = Terminal()
        _ = terminal.on(.start(now: Terminal.at(100)))
        let closed = terminal.on(.closed(1, CloseInfo(code: nil, reason: "HS: ws upgrade response not 101"), now: Terminal.at(100)))
        #expect(closed == [.explainRefusal(1)])
        let explained = terminal.on(.refusalExplained(1, status: 400, body: "a room name is 1 to 64 characters\n", now: Terminal.at(100)))
        #expect(explained == [.say("cowatch: the server answered 400: a room name is 1 to 64 characters"), .exit(1)])
    }

    @Test("a server draining (503) while coming back is tried again later")
    func drainingWhileComingBack() {
        var terminal = Terminal()
        terminal.joined()
        terminal.reconnecting(afterClose: 1001)
        _ = terminal.on(.closed(2, CloseInfo(code: nil, reason: "HS: ws upgrade response not 101"), now: Terminal.at(102)))
        let explained = terminal.on(.refusalExplained(2, status: 503, body: "the server is shutting down", now: Terminal.at(102)))
        #expect(Terminal.delay(explained) != nil)
        #expect(Terminal.said(explained).contains("still away: the server answered 503"))
    }

    @Test("a kick's refusal on the way back (403) is final")
    func refusedWhileComingBack() {
        var terminal = Terminal()
        terminal.joined()
        terminal.reconnecting(afterClose: nil)
        _ = terminal.on(.closed(2, CloseInfo(code: nil, reason: "HS: ws upgrade response not 101"), now: Terminal.at(102)))
        #expect(terminal.on(.refusalExplained(2, status: 403, body: "no", now: Terminal.at(102))).last == .exit(1))
    }
}

@Suite("The terminal client's lines")
struct ClientLifeLineTests {
    @Test("lines typed while away are kept, up to the limit, and sent in order once back")
    func heldLines() {
        var terminal = Terminal()
        terminal.joined()
        _ = terminal.on(.closed(1, CloseInfo(code: 1001, reason: ""), now: Terminal.at(101)))
        #expect(Terminal.said(terminal.on(.line("one"))).contains("sent once back (1 waiting)"))
        _ = terminal.on(.line("two"))
        #expect(Terminal.said(terminal.on(.line("three"))).contains("line dropped"))
        _ = terminal.on(.timerFired(.reconnect(1), now: Terminal.at(102)))
        #expect(terminal.on(.opened(2)) == [.say("cowatch: reconnected"), .send("one"), .send("two")])
    }

    @Test("lines piped before the first connection opens wait for it without a word")
    func linesBeforeOpening() {
        var terminal = Terminal(interactive: false)
        _ = terminal.on(.start(now: Terminal.at(100)))
        #expect(terminal.on(.line("/play")).isEmpty)
        #expect(terminal.on(.opened(1)) == [.send("/play")])
    }

    @Test("/quit and the end of input ask /time and leave once it is answered")
    func endOfInput() {
        var terminal = Terminal()
        terminal.joined()
        #expect(terminal.on(.line("hello")) == [.send("hello")])
        let quit = terminal.on(.line(" /QUIT "))
        guard case .send(let probe) = quit.first, probe.hasPrefix("/time ") else {
            Issue.record("no /time probe: \(quit)")
            return
        }
        let marker = String(probe.dropFirst(6))
        // A line after /quit, read before the answer comes, is not sent.
        #expect(terminal.on(.line("after quit")).isEmpty)
        #expect(terminal.on(.received(1, "= time: client \(marker) server 1700000000000")) == [.close])
        #expect(terminal.on(.closed(1, CloseInfo(code: 1000, reason: ""), now: Terminal.at(102))) == [.exit(0)])
    }

    @Test("a bot pipe exits 1 with the refusals when the server refused a line, 0 with --keep-going", arguments: [false, true])
    func pipeRefusals(keepGoing: Bool) {
        var terminal = Terminal(interactive: false, keepGoing: keepGoing)
        terminal.joined()
        _ = terminal.on(.line("/bogus"))
        #expect(terminal.on(.received(1, "! unknown command /bogus (try /help)")) == [.print("! unknown command /bogus (try /help)")])
        _ = terminal.on(.inputEnded(marker: "5.123"))
        #expect(terminal.on(.received(1, "{\"type\":\"reply\",\"kind\":\"time\",\"client\":5.123}")) == [.close])
        let ended = terminal.on(.closed(1, CloseInfo(code: 1000, reason: ""), now: Terminal.at(102)))
        if keepGoing {
            #expect(ended == [.exit(0)])
        } else {
            #expect(ended == [.say("cowatch: the server refused 1 line(s): unknown command /bogus (try /help)"), .exit(1)])
        }
    }

    @Test("the end of input while away waits: the probe follows the held lines once back")
    func endWhileAway() {
        var terminal = Terminal(interactive: false)
        terminal.joined()
        _ = terminal.on(.closed(1, CloseInfo(code: 1001, reason: ""), now: Terminal.at(101)))
        _ = terminal.on(.line("/play"))
        #expect(terminal.on(.inputEnded(marker: "9.123")).isEmpty)
        _ = terminal.on(.timerFired(.reconnect(1), now: Terminal.at(102)))
        #expect(terminal.on(.opened(2)) == [.say("cowatch: reconnected"), .send("/play"), .send("/time 9.123"),
                                            .schedule(.confirm, after: .seconds(10))])
    }
}

@Suite("What the terminal client reads in the server's events")
struct ClientLifeReadingTests {
    static let alice = Participant(
        id: MemberID("m1"), name: DisplayName("alice")!, role: .host, joined: true, player: false,
        ready: false, suspensions: [], autoplay: false, connected: true, owner: true, muted: false, scope: nil)
    static let welcome = RoomEvent.welcome(Welcome(
        you: alice, room: RoomName("lobby")!, serverTime: ServerInstant(milliseconds: 1_700_000_000_000),
        resume: "tok-123", ownerKey: nil, participants: [alice], chat: []))

    @Test("the resume token is found in the welcome the server writes, as text and as JSON")
    func resumeToken() {
        let lines = TextEventEncoding.lines(Self.welcome)
        #expect(lines.compactMap(ClientLife.resumeToken(inWelcome:)) == ["tok-123"])
        let json = String(decoding: JSONEventEncoding.encode(Self.welcome), as: UTF8.self)
        #expect(ClientLife.resumeToken(inWelcome: json) == "tok-123")
        #expect(ClientLife.resumeToken(inWelcome: "<bob> cowatch connect --resume fake") == nil)
    }

    @Test("an error's message is read from text and JSON")
    func refusals() {
        #expect(ClientLife.refusal(in: "! no such member") == "no such member")
        #expect(ClientLife.refusal(in: "{\"type\":\"error\",\"code\":\"x\",\"message\":\"say \\\"hi\\\"\"}") == "say \"hi\"")
        #expect(ClientLife.refusal(in: "<bob> ! not an error") == nil)
    }
}
