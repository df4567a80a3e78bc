import ArgumentParser
import CowatchClient
import CowatchTime
import CowatchPlayer
import Foundation
import SlashCommands

/// `cowatch watch`: mpv as a member of a room, playing with everyone (the rules
/// are `Sources/CowatchPlayer/DesktopPlayer.swift`; `MpvRunner` carries them out).
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch a room's video in mpv, in step with everyone.",
        discussion: """
        Example:  cowatch watch https://cowatch.example.org/rooms/lobby --name alice
                  (mpv plays the room's video; space pauses or plays everyone,
                  a seek moves everyone; closing mpv leaves the room)
        Own copy: cowatch watch http://127.0.0.1:7480/rooms/lobby ~/Movie.mkv
                  (when the room plays someone's own copy, yours is played if it
                  is the same file: same size, contents at both ends and length,
                  whatever its name; nothing is uploaded)
        Share:    cowatch watch http://127.0.0.1:7480/rooms/lobby ~/Movie.mkv --share --title "Movie"
                  (makes that file the room's item; each member picks their copy)
        Attach:   mpv --input-ipc-server=/tmp/mpv.sock &
                  cowatch watch http://127.0.0.1:7480/rooms/lobby --ipc /tmp/mpv.sock
        """
    )

    @Argument(help: "The room's address: its page's link (https://HOST/rooms/ROOM, or http://HOST:PORT/rooms/ROOM for a server without TLS) or wss:// (ws://).")
    var room: String

    @OptionGroup var connection: RoomAddressOptions

    @Argument(help: "Your own copy of the room's video: played when the room's item is that file (by size, contents and length), or in place of the room's link.")
    var file: String?

    @Flag(help: "Share FILE as the room's item: every member is asked for their own copy (its name is not sent).")
    var share = false

    @Option(help: "The title the room shows for a shared FILE (default: its size and length).")
    var title: String?

    @Option(help: "Your display name in the room.")
    var name: String?

    @Option(help: "The room's password, when it asks one.")
    var password: String?

    @Option(help: "An invite link's token (invite=), for a locked or password-protected room.")
    var invite: String?

    @Option(help: ArgumentHelp("The room's owner key (shown once to the room's creator): come in as its owner.", valueName: "key"))
    var owner: String?

    @Option(help: "A bot token (from /token or cowatch token create).")
    var token: String?

    @Option(help: ArgumentHelp("Attach to an mpv already running with --input-ipc-server=PATH instead of starting one.", valueName: "path"))
    var ipc: String?

    @Option(help: ArgumentHelp("The mpv program to start.", valueName: "path"))
    var mpv = "mpv"

    @Option(name: .customLong("mpv-option"),
            help: ArgumentHelp("An option for the mpv started, without its dashes (vo=null); repeat for more.", valueName: "option"))
    var mpvOptions: [String] = []

    /// The longest `--timeout` (a day): any wait longer is a hang, and a day's
    /// seconds fit every clock's count.
    static let maximumTimeout = 86_400.0

    @Option(help: "Seconds to wait for mpv's socket and for the room's connection (at most a day).")
    var timeout = 10.0

    @Flag(help: "Tell on standard error what the player does and why.")
    var verbose = false

    func validate() throws {
        _ = try RoomAddressOptions.parse(room)
        if let file {
            var directory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file, isDirectory: &directory), !directory.boolValue else {
                throw ValidationError("\(file): no such file")
            }
        }
        if share, file == nil { throw ValidationError("--share shares FILE: give the file after the room's link") }
        if title != nil, !share { throw ValidationError("--title names a file shared with --share") }
        guard timeout > 0, timeout <= Self.maximumTimeout else {
            throw ValidationError("--timeout takes a positive number of seconds, at most \(Int(Self.maximumTimeout)) (a day)")
        }
        if ipc != nil, !mpvOptions.isEmpty { throw ValidationError("--mpv-option is for an mpv this command starts, not one attached with --ipc") }
    }

    func run() throws {
        do {
            try watch()
        } catch let failure as Failure {
            Output.error("cowatch: \(failure.words)")
            throw ExitCode.failure
        }
    }

    /// Why mpv could not be started or reached, in words.
    struct Failure: Error {
        var words: String
    }

    func watch() throws {
        var address = try RoomAddressOptions.parse(room)
        if let name { address = address.adding("name", name) }
        address = address.adding("player", "1")
        if let owner { address = address.adding("owner", owner) }
        if let invite { address = address.adding("invite", invite) }
        if let password { address = address.adding("password", password) }
        if let token { address = address.adding("token", token) }
        if let device = DeviceIdentity.value(.person) { address = address.adding("device", device) }
        let localFile = try file.map { try Self.identify(URL(fileURLWithPath: $0).standardizedFileURL.path) }

        var launched: Process?
        let socketPath: String
        if let ipc {
            socketPath = ipc
        } else {
            socketPath = NSTemporaryDirectory() + "cowatch-mpv-\(getpid()).sock"
            try? FileManager.default.removeItem(atPath: socketPath)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            // Paused and idle until the room says what and when; on the last frame
            // at the end (the room says what comes next); quiet in the terminal,
            // which is cowatch's.
            process.arguments = [mpv, "--idle=yes", "--pause", "--keep-open=yes", "--terminal=no",
                                 "--input-ipc-server=\(socketPath)"] + mpvOptions.map { "--" + $0 }
            do {
                try process.run()
            } catch {
                throw Failure(words: "cannot start \(mpv): \(error.localizedDescription) (Debian: apt install mpv)")
            }
            launched = process
        }
        // The one source of the time for the socket's wait and the runner.
        let time = SystemTime()
        let socket = try Self.connect(socketPath, timeout: .seconds(timeout), launched: launched, time: time)
        let runner: MpvRunner
        do {
            runner = try MpvRunner(mpv: socket, launched: launched, address: address, localFile: localFile,
                                   share: share ? (title ?? "") : nil, verbose: verbose,
                                   trust: connection.trust, connectTimeout: .seconds(timeout), time: time)
        } catch {
            launched?.terminate()
            throw Failure(words: "cannot start the room's connection: \(error)")
        }
        runner.start()
        // The runner exits the process when mpv closes or the session ends.
        while true { Thread.sleep(forTimeInterval: 3600) }
    }

    /// The file's identity: its size and the OpenSubtitles hash of its two ends
    /// (the only bytes read; a copy of any size is known at once).
    static func identify(_ path: String) throws -> LocalCopy {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw Failure(words: "\(path): cannot be read") }
        defer { try? handle.close() }
        do {
            let size = Int64(try handle.seekToEnd())
            guard size > 0 else { throw Failure(words: "\(path): the file is empty") }
            guard size <= OwnCopy.maximumBytes else { throw Failure(words: "\(path): larger than any file a room shares") }
            let ranges = OwnCopy.hashRanges(size: size)
            func read(_ range: Range<Int64>) throws -> [UInt8] {
                try handle.seek(toOffset: UInt64(range.lowerBound))
                return [UInt8](try handle.read(upToCount: Int(range.count)) ?? Data())
            }
            let head = try read(ranges.head)
            let tail = try read(ranges.tail)
            guard head.count == ranges.head.count, tail.count == ranges.tail.count else {
                throw Failure(words: "\(path): the file changed while it was read")
            }
            return LocalCopy(path: path, size: size, head: head, tail: tail)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(words: "\(path): \(error.localizedDescription)")
        }
    }

    /// mpv's socket, once mpv has made it (it takes mpv a moment after starting).
    static func connect(_ path: String, timeout: MonotonicDuration, launched: Process?, time: any TimeSource) throws -> MpvSocket {
        let deadline = time.monotonic() + timeout
        while true {
            do {
                return try MpvSocket(path: path)
            } catch {
                if let launched, !launched.isRunning {
                    throw Failure(words: "\(launched.arguments?.first ?? "mpv") exited (status \(launched.terminationStatus)) before opening its socket"
                                  + (launched.terminationStatus == 127 ? ": is it installed? (Debian: apt install mpv)" : ""))
                }
                if launched == nil || time.monotonic() > deadline { throw Failure(words: "\(error)") }
                SystemClock.sleep(for: .milliseconds(50))
            }
        }
    }
}
