import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The owner key of a room the bridge founded, kept in a file for the operator:
/// the room's creator is shown its key once, and when the creator is the
/// bridge, nobody else ever sees it. `DIRECTORY/ROOM.owner-key`, in a directory
/// made for the bridge's user alone (0700), the file readable by that user
/// alone (0600); written again if the room is founded again (it expired, or the
/// store was emptied), since the older key no longer opens anything.
public enum OwnerKeyFile {
    public struct Problem: Error, Equatable {
        public let message: String
    }

    /// Where the key of `room` is kept under `directory`. Room names are
    /// `A-Z a-z 0-9 . _ -` (`RoomName`), so the name holds no path.
    public static func path(room: String, directory: String) -> String {
        let name = String(room.lowercased().map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-" ? $0 : "_" })
        return (directory.hasSuffix("/") ? directory : directory + "/") + name + ".owner-key"
    }

    /// Writes the key (with a line saying what it is and how it is used) and
    /// returns the file's path.
    public static func write(_ key: String, room: String, link: String, directory: String) -> Result<String, Problem> {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            return .failure(Problem(message: "the directory \(directory) could not be made (\(error.localizedDescription))"))
        }
        let path = path(room: room, directory: directory)
        let text = """
        # The owner key of the Cowatch room \(room), which cowatch bridge created.
        # Whoever holds it is the room's owner: open \(link)?owner=KEY, or
        # cowatch connect <the room's ws:// address> --owner KEY. Hand it on privately.
        \(key)

        """
        // Made 0600 from the start (and made so if it was there before), so
        // that the key is never readable by others, even for a moment.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            return .failure(Problem(message: "\(path) could not be written (\(String(cString: strerror(errno))))"))
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else {
            return .failure(Problem(message: "\(path) could not be made private (\(String(cString: strerror(errno))))"))
        }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                return .failure(Problem(message: "\(path) could not be written (\(String(cString: strerror(errno))))"))
            }
            written += count
        }
        return .success(path)
    }
}
