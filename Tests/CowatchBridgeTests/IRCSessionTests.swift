@testable import CowatchBridge
import CowatchClient
import CowatchTime
import Testing

/// An IRC session driven by hand: the server's lines in, the session's lines out.
struct Server {
    var session: IRCSession
    var now = Server.at(1000)
    var attempt = 0

    init(nick: String = "cowatch", password: String? = nil, channels: [IRCSession.Channel] = [.init(name: "#cowatch")],
         pacing: PacerSettings = PacerSettings(perSecond: 1, burst: 3, maximumQueued: 10)) {
        session = IRCSession(settings: IRCSession.Settings(
            nick: nick, alternateNicks: [], password: password, channels: channels, pacing: pacing,
            keepaliveInterval: .seconds(90), keepaliveTimeout: .seconds(60), registrationTimeout: .seconds(30),
            rejoinDelay: .seconds(10),
            joinRetry: Backoff.Settings(first: .seconds(30), maximum: .seconds(600)), reconnect: Backoff.Settings(first: .seconds(2), maximum: .seconds(120))),
            seed: 9)
    }

    /// The monotonic instant `seconds` after the clock's start.
    static func at(_ seconds: Double) -> MonotonicInstant {
        MonotonicInstant(microseconds: 0) + .seconds(seconds)
    }

    mutating func on(_ event: IRCSession.Event) -> [IRCSession.Action] { session.handle(event) }

    /// Started and connected: returns what the session wrote.
    mutating func connect() -> [IRCSession.Action] {
        let started = on(.start(now: now))
        guard case .connect(let number) = started.first else { return started }
        attempt = number
        return on(.connected(attempt, now: now))
    }

    mutating func hear(_ line: String) -> [IRCSession.Action] {
        on(.received(attempt, line, now: now))
    }

    /// Connected, registered as `nick`, and in every channel.
    mutating func ready(as nick: String = "cowatch") {
        _ = connect()
        _ = hear(":irc.test 001 \(nick) :Welcome")
        for channel in session.settings.channels { _ = hear(":\(nick)!~cowatch@127.0.0.1 JOIN \(channel.name)") }
    }

    static func written(_ actions: [IRCSession.Action]) -> [String] {
        actions.compactMap { if case .write(_, let line) = $0 { line } else { nil } }
    }

    static func delivered(_ actions: [IRCSession.Action]) -> [NetworkEvent] {
        actions.compactMap { if case .deliver(let event) = $0 { event } else { nil } }
    }

    static func scheduled(_ actions: [IRCSession.Action]) -> [(IRCSession.Timer, MonotonicDuration)] {
        actions.compactMap { if case .schedule(let timer, let after) = $0 { (timer, after) } else { nil } }
    }
}

@Suite("The IRC session: registration and nicks")
struct IRCSessionRegistrationTests {
    @Test("PASS, NICK and USER on connecting; channels joined only after 001")
    func registration() {
        var server = Server(password: "secret", channels: [.init(name: "#cowatch"), .init(name: "#locked", key: "k3y")])
        let opened = server.connect()
        #expect(Server.written(opened) == ["PASS secret", "NICK cowatch", "USER cowatch 0 * :Cowatch bridge"])
        #expect(Server.scheduled(opened).contains { $0.0 == .registration(1) && $0.1 == .seconds(30) })
        #expect(Server.written(server.hear(":irc.test NOTICE * :*** Looking up your hostname")).isEmpty)
        let welcomed = server.hear(":irc.test 001 cowatch :Welcome to the network")
        #expect(Server.written(welcomed) == ["JOIN #cowatch", "JOIN #locked k3y"])
        #expect(Server.delivered(server.hear(":cowatch!~c@h JOIN :#cowatch")) == [.joined(channel: "#cowatch")])
        #expect(server.session.isIn("#COWATCH"))
        #expect(!server.session.isIn("#locked"))
    }

    @Test("a nick in use: the next one, then numbered ones cut to 9 characters")
    func nickInUse() {
        var server = Server(nick: "cowatchbot")
        _ = server.connect()
        #expect(Server.written(server.hear(":irc.test 433 * cowatchbot :Nickname is already in use")) == ["NICK cowatchb_"])
        #expect(Server.written(server.hear(":irc.test 433 * cowatchb_ :Nickname is already in use")) == ["NICK cowatchb2"])
        #expect(Server.written(server.hear(":irc.test 432 * cowatchb2 :Erroneous nickname")) == ["NICK cowatchb3"])
        _ = server.hear(":irc.test 001 cowatchb3 :Welcome")
        #expect(server.session.nick == "cowatchb3")
    }

    @Test("under another nick, the configured one is asked for again when its holder leaves, and on a timer")
    func regain() {
        var server = Server()
        _ = server.connect()
        _ = server.hear(":irc.test 433 * cowatch :in use")
        let welcomed = server.hear(":irc.test 001 cowatch_ :Welcome")
        #expect(Server.scheduled(welcomed).contains { $0.0 == .regainNick(1) })
        #expect(Server.written(server.hear(":cowatch!~old@h QUIT :Ping timeout")) == ["NICK cowatch"])
        _ = server.hear(":cowatch_!~c@h NICK :cowatch")
        #expect(server.session.nick == "cowatch")
        #expect(server.on(.timerFired(.regainNick(1), now: Server.at(2000))).isEmpty)
    }

    @Test("a nick refused after registration leaves the session as it is")
    func refusedLater() {
        var server = Server()
        server.ready()
        #expect(server.hear(":irc.test 433 cowatch somebody :in use").isEmpty)
        #expect(server.session.nick == "cowatch")
    }

    @Test("no 001 within the registration timeout: disconnect, then come back")
    func registrationTimeout() {
        var server = Server()
        _ = server.connect()
        let fired = server.on(.timerFired(.registration(1), now: Server.at(1030)))
        #expect(fired.contains(.disconnect(1)))
        let closed = server.on(.closed(1, reason: "closed by the bridge", now: Server.at(1030)))
        #expect(Server.scheduled(closed).contains { $0.0 == .reconnect(1) })
    }
}

@Suite("The IRC session: staying connected")
struct IRCSessionConnectionTests {
    @Test("PING is answered with PONG at once, even behind a full pacer")
    func ping() {
        var server = Server(pacing: PacerSettings(perSecond: 0.1, burst: 1, maximumQueued: 10))
        server.ready()
        for n in 1...5 { _ = server.on(.command(.say(channel: "#cowatch", text: "line \(n)"), now: server.now)) }
        #expect(Server.written(server.hear("PING :irc.test")) == ["PONG irc.test"])
        #expect(Server.written(server.hear("PING irc.test :token")) == ["PONG token"])
    }

    @Test("a silent server is pinged; still silent after the timeout, the connection is given up")
    func keepalive() {
        var server = Server()
        server.ready()
        #expect(Server.written(server.on(.timerFired(.keepalive(1), now: Server.at(1050)))).isEmpty)
        #expect(Server.written(server.on(.timerFired(.keepalive(1), now: Server.at(1091)))) == ["PING cowatch"])
        #expect(!server.on(.timerFired(.keepalive(1), now: Server.at(1120))).contains(.disconnect(1)))
        #expect(server.on(.timerFired(.keepalive(1), now: Server.at(1152))).contains(.disconnect(1)))
    }

    @Test("any line from the server counts as an answer")
    func answered() {
        var server = Server()
        server.ready()
        _ = server.on(.timerFired(.keepalive(1), now: Server.at(1091)))
        server.now = Server.at(1100)
        _ = server.hear(":irc.test PONG irc.test :cowatch")
        #expect(!server.on(.timerFired(.keepalive(1), now: Server.at(1152))).contains(.disconnect(1)))
    }

    @Test("the connection lost: every channel is reported left, and the session comes back after a growing delay")
    func lost() {
        var server = Server()
        server.ready()
        let closed = server.on(.closed(1, reason: "the server closed the connection", now: Server.at(1100)))
        #expect(Server.delivered(closed) == [.parted(channel: "#cowatch", reason: "the IRC connection was lost")])
        let first = Server.scheduled(closed).first { $0.0 == .reconnect(1) }?.1 ?? .zero
        #expect(first >= .seconds(1) && first <= .seconds(2))
        #expect(server.on(.timerFired(.reconnect(1), now: Server.at(1102))) == [.connect(2)])
        #expect(!server.session.isIn("#cowatch"))
        let again = server.on(.closed(2, reason: "refused", now: Server.at(1103)))
        let second = Server.scheduled(again).first { $0.0 == .reconnect(2) }?.1 ?? .zero
        #expect(second >= .seconds(2) && second <= .seconds(4))
        // Events of an attempt that is over change nothing.
        #expect(server.on(.received(1, "PING :x", now: Server.at(1104))).isEmpty)
    }

    @Test("kicked from a channel: reported, and joined again after the rejoin delay")
    func kicked() {
        var server = Server()
        server.ready()
        let kicked = server.hear(":op!~o@h KICK #cowatch cowatch :go away")
        #expect(Server.delivered(kicked) == [.parted(channel: "#cowatch", reason: "kicked by op: go away")])
        #expect(Server.scheduled(kicked).contains { $0.0 == .rejoin(1, "#cowatch") && $0.1 == .seconds(10) })
        #expect(Server.written(server.on(.timerFired(.rejoin(1, "#cowatch"), now: Server.at(1010)))) == ["JOIN #cowatch"])
    }

    @Test("a channel that refuses the join is tried again later, each time later")
    func refused() {
        var server = Server()
        _ = server.connect()
        _ = server.hear(":irc.test 001 cowatch :Welcome")
        let first = Server.scheduled(server.hear(":irc.test 474 cowatch #cowatch :Cannot join channel (+b)")).first?.1 ?? .zero
        let second = Server.scheduled(server.hear(":irc.test 474 cowatch #cowatch :Cannot join channel (+b)")).first?.1 ?? .zero
        #expect(first >= .seconds(15) && first <= .seconds(30))
        #expect(second >= .seconds(30) && second <= .seconds(60))
    }

    @Test("stopping says QUIT and disconnects")
    func stop() {
        var server = Server()
        server.ready()
        let stopped = server.on(.stop)
        #expect(Server.written(stopped) == ["QUIT :Cowatch bridge stopping"])
        #expect(stopped.last == .disconnect(1))
        #expect(server.on(.closed(1, reason: "closed by the bridge", now: Server.at(1001))).isEmpty)
    }
}

@Suite("The IRC session: what people say")
struct IRCSessionMessageTests {
    @Test("a line in the channel reaches the bridge as plain text; /me as an action")
    func channelLines() {
        var server = Server()
        server.ready()
        let ann = NetworkSpeaker(id: "ann", name: "Ann")
        #expect(Server.delivered(server.hear(":Ann!~a@h PRIVMSG #COWATCH :\u{02}hello\u{02} all"))
                == [.message(channel: "#cowatch", from: ann, text: "hello all", action: false)])
        #expect(Server.delivered(server.hear(":Ann!~a@h PRIVMSG #cowatch :\u{01}ACTION waves\u{01}"))
                == [.message(channel: "#cowatch", from: ann, text: "waves", action: true)])
        #expect(Server.delivered(server.hear(":Ann!~a@h PRIVMSG #cowatch :\u{01}PING 1\u{01}")).isEmpty)
        #expect(Server.delivered(server.hear(":cowatch!~c@h PRIVMSG #cowatch :my own")).isEmpty)
        #expect(Server.delivered(server.hear(":Ann!~a@h NOTICE #cowatch :a notice")).isEmpty)
        #expect(Server.delivered(server.hear(":Ann!~a@h PRIVMSG #elsewhere :not ours")).isEmpty)
    }

    @Test("people leaving, quitting and changing nick")
    func people() {
        var server = Server()
        server.ready()
        let ann = NetworkSpeaker(id: "ann", name: "ann")
        #expect(Server.delivered(server.hear(":ann!~a@h PART #cowatch :bye")) == [.left(channel: "#cowatch", speaker: ann)])
        #expect(Server.delivered(server.hear(":op!~o@h KICK #cowatch ann :spam")) == [.left(channel: "#cowatch", speaker: ann)])
        #expect(Server.delivered(server.hear(":ann!~a@h QUIT :gone")) == [.quit(speaker: ann)])
        #expect(Server.delivered(server.hear(":ann!~a@h NICK :Anna"))
                == [.renamed(from: ann, to: NetworkSpeaker(id: "anna", name: "Anna"))])
    }

    @Test("the names list after joining says who is there, without their prefixes or the bot")
    func names() {
        var server = Server()
        server.ready()
        _ = server.hear(":irc.test 353 cowatch = #cowatch :@op +ann cowatch")
        _ = server.hear(":irc.test 353 cowatch = #cowatch :bob")
        #expect(Server.delivered(server.hear(":irc.test 366 cowatch #cowatch :End of NAMES list"))
                == [.present(channel: "#cowatch", speakers: ["op", "ann", "bob"].map { NetworkSpeaker(id: $0, name: $0) })])
    }

    @Test("the server's CASEMAPPING is followed")
    func caseMapping() {
        var server = Server()
        server.ready()
        _ = server.hear(":irc.test 005 cowatch CASEMAPPING=ascii CHANTYPES=# :are supported")
        #expect(server.session.caseMapping == .ascii)
        #expect(Server.delivered(server.hear(":Ann[1]!~a@h PRIVMSG #cowatch :x"))
                == [.message(channel: "#cowatch", from: NetworkSpeaker(id: "ann[1]", name: "Ann[1]"), text: "x", action: false)])
    }

    @Test("lines to the bot alone; CTCP VERSION answered")
    func direct() {
        var server = Server()
        server.ready()
        #expect(Server.delivered(server.hear(":ann!~a@h PRIVMSG cowatch :hi bot"))
                == [.direct(from: NetworkSpeaker(id: "ann", name: "ann"), text: "hi bot")])
        #expect(Server.written(server.hear(":ann!~a@h PRIVMSG cowatch :\u{01}VERSION\u{01}"))
                == ["NOTICE ann :\u{01}VERSION Cowatch bridge\u{01}"])
    }
}

@Suite("The IRC session: what the bridge says")
struct IRCSessionSayingTests {
    @Test("lines go at the pace, in order, the rest when the timer says")
    func paced() {
        var server = Server(pacing: PacerSettings(perSecond: 2, burst: 2, maximumQueued: 10))
        server.ready()
        var written: [String] = []
        var timers: [(IRCSession.Timer, MonotonicDuration)] = []
        for n in 1...4 {
            let actions = server.on(.command(.say(channel: "#cowatch", text: "line \(n)"), now: Server.at(1000)))
            written += Server.written(actions)
            timers += Server.scheduled(actions)
        }
        #expect(written == ["PRIVMSG #cowatch :line 1", "PRIVMSG #cowatch :line 2"])
        #expect(timers.count == 1 && timers.first?.0 == .pace(1) && timers.first?.1 == .milliseconds(500))
        let paced = server.on(.timerFired(.pace(1), now: Server.at(1000.5)))
        #expect(Server.written(paced) == ["PRIVMSG #cowatch :line 3"])
        #expect(Server.scheduled(paced).first?.0 == .pace(1))
        #expect(Server.written(server.on(.timerFired(.pace(1), now: Server.at(1001)))) == ["PRIVMSG #cowatch :line 4"])
    }

    @Test("notices to the channel and to one person")
    func notices() {
        var server = Server()
        server.ready()
        #expect(Server.written(server.on(.command(.notice(channel: "#cowatch", text: "dana paused"), now: Server.at(1000))))
                == ["NOTICE #cowatch :dana paused"])
        #expect(Server.written(server.on(.command(.tell(speaker: NetworkSpeaker(id: "ann", name: "Ann"), text: "hi"), now: Server.at(1000))))
                == ["NOTICE Ann hi"])
    }

    @Test("a long line is cut into pieces that fit 512 bytes once the server adds our prefix")
    func long() {
        var server = Server(pacing: PacerSettings(perSecond: 1, burst: 10, maximumQueued: 10))
        server.ready()
        let text = (1...200).map { "word\($0)" }.joined(separator: " ")
        let lines = Server.written(server.on(.command(.say(channel: "#cowatch", text: text), now: Server.at(1000))))
        #expect(lines.count > 1 && lines.count <= 4)
        let relayed = lines.map { ":cowatch!~cowatch@127.0.0.1 " + $0 }
        #expect(relayed.allSatisfy { $0.utf8.count + 2 <= 512 })
        #expect(lines.first?.hasPrefix("PRIVMSG #cowatch :word1 word2 ") == true)
    }

    @Test("a line with a line break cannot forge a second command")
    func lineBreaks() {
        var server = Server()
        server.ready()
        #expect(Server.written(server.on(.command(.say(channel: "#cowatch", text: "a\r\nQUIT :x"), now: Server.at(1000))))
                == ["PRIVMSG #cowatch :a  QUIT :x"])
    }

    @Test("nothing is said in a channel the bot is not in")
    func notJoined() {
        var server = Server()
        _ = server.connect()
        #expect(Server.written(server.on(.command(.say(channel: "#cowatch", text: "early"), now: Server.at(1000)))).isEmpty)
    }

    @Test("a full queue drops lines, and the channel is told how many once there is room")
    func overflow() {
        var server = Server(pacing: PacerSettings(perSecond: 1, burst: 1, maximumQueued: 4))
        server.ready()
        for n in 1...8 { _ = server.on(.command(.say(channel: "#cowatch", text: "line \(n)"), now: Server.at(1000))) }
        var written: [String] = []
        for second in 1...10 { written += Server.written(server.on(.timerFired(.pace(1), now: Server.at(1000 + Double(second))))) }
        #expect(written.contains("PRIVMSG #cowatch :line 5"))
        #expect(!written.contains("PRIVMSG #cowatch :line 6"))
        #expect(written.contains { $0.hasPrefix("NOTICE #cowatch :(3 lines not relayed") })
    }
}
