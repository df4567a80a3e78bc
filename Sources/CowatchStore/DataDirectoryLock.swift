import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on a data directory (`cowatch.lock`, with the holder's pid
/// in it), so that a second server started on the same directory refuses to run
/// beside the first instead of both writing one database. A POSIX record lock
/// (`lockf`): held per process, so one process may open its own store twice (the
/// store contract tests do), and dropped by the kernel when the process ends,
/// however it ends.
final class DataDirectoryLock: @unchecked Sendable {
    private let descriptor: Int32

    init(directory: String) throws {
        let path = directory + "/cowatch.lock"
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StoreError.unreadable(path: path, reason: "cannot open the lock file (\(String(cString: strerror(errno))))")
        }
        guard lockf(descriptor, F_TLOCK, 0) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            let holder = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            Glibc.close(descriptor)
            throw StoreError.inUse(path: directory, holder: holder.isEmpty ? "another process" : "pid \(holder)")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.count, 0)
    }

    func release() {
        _ = lockf(descriptor, F_ULOCK, 0)
        Glibc.close(descriptor)
    }
}
