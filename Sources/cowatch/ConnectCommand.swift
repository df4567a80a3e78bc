import ArgumentParser
import CowatchClient
import CowatchTime
import Foundation

/// `cowatch connect`: a terminal client. Lines typed go to the room; events print
/// as lines; Ctrl-D or `/quit` leaves. With stdin not a terminal it is a bot
/// pipe: it sends its lines, waits until the server has handled them all, and
/// exits, non-zero when the server refused any of them (unless --keep-going).
/// Closes, reconnects and the end of input follow `ClientLife`
/// (`Sources/CowatchClient/ClientLife.swift`).
struct ConnectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Join a room from the terminal, or pipe commands into it.",
        discussion: """
        Example: cowatch connect https://cowatch.example.org/rooms/lobby --name bob
                 (the room's link as its page shows it; wss:// and, for a server
                 without TLS, http:// or ws://127.0.0.1:7480/rooms/lobby work too)
                 (type /help for the room's commands; Ctrl-D or /quit leaves; after a
                 shutdown or a dropped connection it comes back by itself, as the same member)
        Owner:   cowatch connect ws://127.0.0.1:7480/rooms/lobby --owner KEY
                 (KEY: the owner key the room's creator is shown once, on arrival;
                 it makes its holder the room's owner again, from any device)
        Bot:     printf '/watch https://example.org/a.mp4 A\\n/play\\n' | cowatch connect ws://127.0.0.1:7480/rooms/lobby
                 (exits 1, with the refusals on stderr, when the server refused a line)
        """
    )

    @Argument(help: "The room's address: its page's link (https://HOST/rooms/ROOM), wss://HOST/rooms/ROOM, or http:// and ws:// for a server without TLS.")
    var url: String

    @OptionGroup var connection: RoomAddressOptions

    @Option(help: "Your display name in the room.")
    var name: String?

    @Option(help: "A resume token from an earlier welcome, to come back as yourself.")
    var resume: String?

    @Flag(help: "Declare this connection a media player (it will be waited for).")
    var player = false

    @Option(help: ArgumentHelp("The room's owner key (shown once to the room's creator): come in as its owner.", valueName: "key"))
    var owner: String?

    @Option(help: "An invite link's token (invite=), for a locked or password-protected room.")
    var invite: String?

    @Option(help: "The room's password, when it asks one.")
    var password: String?

    @Option(help: "A bot token (from /token or cowatch token create).")
    var token: String?

    @Flag(help: "Receive events as JSON objects instead of lines for people.")
    var json = false

    @Option(help: "Lines sent per second at most, to stay under the server's rate limit.")
    var linesPerSecond = 10.0

    @Option(help: "Seconds to wait for the connection and for the server to handle the last line.")
    var timeout = 10.0

    @Flag(help: "As a bot pipe, exit 0 even when the server refused some lines.")
    var keepGoing = false

    @Option(help: "After losing the connection (a shutdown, a drop), keep trying to come back for this many seconds.")
    var reconnectFor = 300.0

    @Flag(help: "Do not reconnect after losing the connection.")
    var noReconnect = false

    func validate() throws {
        _ = try RoomAddressOptions.parse(url)
        guard linesPerSecond > 0 else { throw ValidationError("--lines-per-second must be positive") }
        // At most a day: any longer is a mistake, and an infinite one no timer can hold.
        guard reconnectFor >= 0, reconnectFor <= 86_400, timeout > 0, timeout <= 86_400 else {
            throw ValidationError("--reconnect-for and --timeout take a number of seconds, at most 86400 (a day)")
        }
    }

    func run() throws {
        var address = try RoomAddressOptions.parse(url)
        if let name { address = address.adding("name", name) }
        if player { address = address.adding("player", "1") }
        if let owner { address = address.adding("owner", owner) }
        if let invite { address = address.adding("invite", invite) }
        if let password { address = address.adding("password", password) }
        if let token { address = address.adding("token", token) }
        let interactive = isatty(0) != 0
        if let device = DeviceIdentity.value(interactive ? .person : .bot) { address = address.adding("device", device) }

        let settings = ClientLife.Settings(interactive: interactive, keepGoing: keepGoing,
                                           reconnectFor: .seconds(noReconnect ? 0 : reconnectFor), confirmTimeout: .seconds(timeout))
        let runner: TerminalRunner
        do {
            runner = try TerminalRunner(address: address, encoding: json ? .json : .text, trust: connection.trust,
                                        life: ClientLife(settings: settings, resume: resume), connectTimeout: .seconds(timeout))
        } catch {
            Output.error("cowatch: \(error)")
            throw ExitCode.failure
        }
        runner.start()
        let interval = MonotonicDuration.seconds(1.0 / linesPerSecond)
        var lastSent: MonotonicInstant?
        while let line = readLine(strippingNewline: true) {
            if let lastSent { SystemClock.sleep(for: interval - (SystemClock.monotonic() - lastSent)) }
            runner.post(.line(line))
            lastSent = SystemClock.monotonic()
        }
        runner.post(.inputEnded(marker: "\(SystemClock.now().milliseconds).123"))
        // The runner exits the process when the session ends.
        while true { Thread.sleep(forTimeInterval: 3600) }
    }
}

enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
