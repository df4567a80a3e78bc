import ArgumentParser
import CowatchClient
import Foundation

/// What `cowatch connect` and `cowatch watch` share about reaching a room: its
/// address in any of the forms a person is given (the page's link or the
/// WebSocket's, plain or over TLS) and whom to trust for TLS.
struct RoomAddressOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A PEM file of CA certificates to trust besides the system's (a server with a private CA's certificate, for wss:// and https:// rooms).", valueName: "file"))
    var caFile: String?

    /// The forms an address may take, for messages.
    static let forms = "https://HOST/rooms/ROOM (the page's link), wss://HOST/rooms/ROOM, or http:// and ws:// for a server without TLS"

    var trust: ClientTrust { ClientTrust(caFile: caFile) }

    /// The room's address, or a validation error that says what was expected.
    static func parse(_ text: String) throws -> WebSocketAddress {
        guard let address = WebSocketAddress(text) else {
            throw ValidationError("expected the room's address, \(forms); got \(text)")
        }
        return address
    }

    func validate() throws {
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ValidationError("--ca-file: cannot read \(caFile)")
        }
    }
}

/// The identity a user's clients keep across names (`device=`, for bans and
/// kicks). A person's terminal and their mpv are one person and share
/// `~/.config/cowatch/device`; bot pipes share `~/.config/cowatch/device.bot`, so
/// that a host who removes a bot does not keep out the person who runs it, nor the
/// other way round.
enum DeviceIdentity {
    enum Kind: String {
        case person = "device"
        case bot = "device.bot"
    }

    static func value(_ kind: Kind) -> String? {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSTemporaryDirectory()
        let directory = home + "/.config/cowatch"
        let path = directory + "/" + kind.rawValue
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
}
