import ArgumentParser
import CowatchClient
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
        Example: cowatch connect ws://127.0.0.1:7480/rooms/lobby --name bob
                 (type /help for the room's commands; Ctrl-D or /quit leaves; after a
                 shutdown or a dropped connection it comes back by itself, as the same member)
        Owner:   cowatch connect ws://127.0.0.1:7480/rooms/lobby --owner KEY
                 (KEY: the owner key the room's creator is shown once, on arrival;
                 it makes its holder the room's owner again, from any device)
        Bot:     printf '/watch https://example.org/a.mp4 A\\n/play\\n' | cowatch connect ws://127.0.0.1:7480/rooms/lobby
                 (exits 1, with the refusals on stderr, when the server refused a line)
        """
    )

    @Argument(help: "The room's address, ws://HOST:PORT/rooms/ROOM.")
    var url: String

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

    /// The identity this user's clients keep across names (`device=`, for bans),
    /// in ~/.config/cowatch/device, made on first use.
    static func deviceIdentity() -> String? {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSTemporaryDirectory()
        let directory = home + "/.config/cowatch"
        let path = directory + "/device"
        if let kept = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
           !kept.isEmpty, kept.count <= 64 {
            return kept
        }
        var generator = SystemRandomNumberGenerator()
        let device = (0..<4).map { _ in String(generator.next() as UInt32, radix: 16) }.joined()
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try? device.write(toFile: path, atomically: true, encoding: .utf8)
        return device
    }

    func validate() throws {
        guard WebSocketAddress(url) != nil else {
            throw ValidationError("expected ws://HOST:PORT/rooms/ROOM, got \(url)")
        }
        guard linesPerSecond > 0 else { throw ValidationError("--lines-per-second must be positive") }
        guard reconnectFor >= 0, timeout > 0 else { throw ValidationError("--reconnect-for and --timeout take a positive number of seconds") }
    }

    func run() throws {
        guard var address = WebSocketAddress(url) else { throw ExitCode.validationFailure }
        if let name { address = address.adding("name", name) }
        if player { address = address.adding("player", "1") }
        if let owner { address = address.adding("owner", owner) }
        if let invite { address = address.adding("invite", invite) }
        if let password { address = address.adding("password", password) }
        if let token { address = address.adding("token", token) }
        if let device = Self.deviceIdentity() { address = address.adding("device", device) }

        let settings = ClientLife.Settings(interactive: isatty(0) != 0, keepGoing: keepGoing,
                                           reconnectFor: .seconds(noReconnect ? 0 : reconnectFor), confirmTimeout: .seconds(timeout))
        let runner = try TerminalRunner(address: address, encoding: json ? .json : .text,
                                        life: ClientLife(settings: settings, resume: resume), connectTimeout: timeout)
        runner.start()
        let interval = 1.0 / linesPerSecond
        var lastSent = Date.distantPast
        while let line = readLine(strippingNewline: true) {
            let wait = interval - Date().timeIntervalSince(lastSent)
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            runner.post(.line(line))
            lastSent = Date()
        }
        runner.post(.inputEnded(marker: "\(Int64(Date().timeIntervalSince1970 * 1000)).123"))
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
