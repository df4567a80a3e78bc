import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the Matrix side keeps between runs (`MatrixSession.Saved`): the access
/// token a password login made (so that a restart is the same device, not a
/// new login), the last sync token (so that a restart neither replays nor
/// misses a line), and the encrypted rooms already told. JSON, in a directory
/// for the bridge's user alone (0700), readable by that user alone (0600),
/// since the token signs in as the bot.
public enum MatrixStateFile {
    public static func read(_ path: String) -> MatrixSession.Saved? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(MatrixSession.Saved.self, from: data)
    }

    /// Replaces the file with `saved`, through a private temporary file, so
    /// that a crash leaves the old state or the new, never half of one.
    public static func write(_ saved: MatrixSession.Saved, to path: String) -> Result<Void, OwnerKeyFile.Problem> {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                return .failure(OwnerKeyFile.Problem(message: "the directory \(directory) could not be made (\(error.localizedDescription))"))
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(saved) else { return .failure(OwnerKeyFile.Problem(message: "the state could not be encoded")) }
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return .failure(OwnerKeyFile.Problem(message: "\(temporary) could not be written (\(String(cString: strerror(errno))))")) }
        var failed = fchmod(descriptor, 0o600) != 0
        let bytes = Array(data)
        var written = 0
        while !failed, written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { failed = true } else { written += count }
        }
        if !failed { failed = fsync(descriptor) != 0 }
        close(descriptor)
        guard !failed, rename(temporary, path) == 0 else {
            unlink(temporary)
            return .failure(OwnerKeyFile.Problem(message: "\(path) could not be written (\(String(cString: strerror(errno))))"))
        }
        return .success(())
    }
}
