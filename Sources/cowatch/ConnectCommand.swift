import ArgumentParser
import CowatchClient
import Foundation

/// `cowatch connect`: a terminal client. Lines typed go to the room; events print
/// as lines; Ctrl-D or `/quit` leaves. With stdin not a terminal it is a bot
/// pipe: it sends its lines, waits until the server has handled them all, and
/// exits, non-zero when the server refused any of them (unless --keep-going).
struct ConnectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Join a room from the terminal, or pipe commands into it.",
        discussion: """
        Example: cowatch connect ws://127.0.0.1:7480/rooms/lobby --name bob
                 (type /help for the room's commands; Ctrl-D or /quit leaves)
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

    @Option(help: "The room's owner key, from the welcome of the room's creator: come back as its owner.")
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
    }

    func run() throws {
        guard var address = WebSocketAddress(url) else { throw ExitCode.validationFailure }
        if let name { address = address.adding("name", name) }
        if let resume { address = address.adding("resume", resume) }
        if player { address = address.adding("player", "1") }
        if let owner { address = address.adding("owner", owner) }
        if let invite { address = address.adding("invite", invite) }
        if let password { address = address.adding("password", password) }
        if let token { address = address.adding("token", token) }
        if let device = Self.deviceIdentity() { address = address.adding("device", device) }

        let interactive = isatty(0) != 0
        let session = TerminalSession(interactive: interactive)
        let clients = try WebSocketClients()
        let connection = clients.connect(address, encoding: json ? .json : .text, handlers: session.handlers)
        guard session.waitUntilOpen(timeout: timeout) else {
            Output.error("cowatch: could not connect to \(url): \(session.closeInfo?.reason ?? "timed out")")
            clients.shutdown()
            throw ExitCode.failure
        }

        let interval = 1.0 / linesPerSecond
        var lastSent = Date.distantPast
        while let line = readLine(strippingNewline: true) {
            if session.isClosed { break }
            if line.trimmingCharacters(in: .whitespaces).lowercased() == "/quit" { break }
            let wait = interval - Date().timeIntervalSince(lastSent)
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            connection.send(line)
            lastSent = Date()
        }

        var failed = false
        if !session.isClosed {
            // Everything before this probe has been handled once its answer comes back.
            let marker = session.expectMarker()
            connection.send("/time \(marker)")
            if !session.waitForMarker(timeout: timeout) {
                Output.error("cowatch: the server did not confirm the last lines within \(Int(timeout)) s")
                failed = true
            }
            session.leave()
            connection.close()
            _ = session.waitUntilClosed(timeout: 2)
        } else if let info = session.closeInfo, let code = info.code, code != 1000 {
            Output.error("cowatch: the server closed the connection (\(code)\(info.reason.isEmpty ? "" : ": \(info.reason)"))")
            failed = true
        }
        clients.shutdown()
        let refusals = session.refusals
        if !interactive && !keepGoing && !refusals.isEmpty {
            Output.error("cowatch: the server refused \(refusals.count) line(s): " + refusals.prefix(5).joined(separator: "; "))
            failed = true
        }
        if failed { throw ExitCode.failure }
    }
}

/// What the terminal client has seen, shared between the reading thread and the
/// client's service thread.
final class TerminalSession: @unchecked Sendable {
    /// A person at a terminal (not a pipe): a close by the server is said at once
    /// and ends the program, rather than waiting for the next line typed.
    let interactive: Bool
    private let lock = NSLock()
    private var refused: [String] = []
    private var leaving = false

    init(interactive: Bool = false) {
        self.interactive = interactive
    }

    /// The messages of the errors the server sent.
    var refusals: [String] { lock.withLock { refused } }
    private let opened = DispatchSemaphore(value: 0)
    private let closed = DispatchSemaphore(value: 0)
    private let markerSeen = DispatchSemaphore(value: 0)
    private var marker: String?
    private var closedInfo: CloseInfo?

    var handlers: ClientHandlers {
        ClientHandlers(
            opened: { [self] in opened.signal() },
            received: { [self] text in received(text) },
            closed: { [self] info in
                let ours = lock.withLock { () -> Bool in
                    closedInfo = info
                    return leaving
                }
                if interactive && !ours {
                    let why = info.reason.isEmpty ? "" : ": \(info.reason)"
                    Output.error("cowatch: the server closed the connection (\(info.code.map(String.init) ?? "dropped")\(why))")
                    exit(info.code == 1000 ? 0 : 1)
                }
                opened.signal()
                closed.signal()
                markerSeen.signal()
            })
    }

    var isClosed: Bool { lock.withLock { closedInfo != nil } }
    var closeInfo: CloseInfo? { lock.withLock { closedInfo } }

    func waitUntilOpen(timeout: Double) -> Bool {
        opened.wait(timeout: .now() + timeout) == .success && !isClosed
    }

    func waitUntilClosed(timeout: Double) -> Bool {
        closed.wait(timeout: .now() + timeout) == .success
    }

    /// A value for `/time` that no person would type, to recognise its answer.
    func expectMarker() -> String {
        let value = "\(Int64(Date().timeIntervalSince1970 * 1000)).123"
        lock.withLock { marker = value }
        return value
    }

    func waitForMarker(timeout: Double) -> Bool {
        markerSeen.wait(timeout: .now() + timeout) == .success && !isClosed
    }

    /// The program is closing the connection itself.
    func leave() { lock.withLock { leaving = true } }

    private func received(_ text: String) {
        if let marker = lock.withLock({ marker }), text.contains("\"client\":\(marker)") || text.contains("client \(marker) ") {
            markerSeen.signal()
            return
        }
        if text.hasPrefix("! ") {
            lock.withLock { refused.append(String(text.dropFirst(2))) }
        } else if text.contains("\"type\":\"error\""), let data = text.data(using: .utf8),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            let message = object["message"] as? String ?? "refused"
            lock.withLock { refused.append(message) }
        }
        Output.line(text)
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
