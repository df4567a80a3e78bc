import Foundation

/// mpv's IPC socket (`--input-ipc-server=PATH`): a Unix stream socket carrying
/// one JSON object a line (`MpvMessage`). Lines read are handed to `received`
/// from a reading thread of its own; `write` may be called from one thread.
final class MpvSocket: @unchecked Sendable {
    enum Failure: Error, CustomStringConvertible {
        case path(String)
        case connect(String, Int32)

        var description: String {
            switch self {
            case .path(let path): "the socket path \(path) is too long for a Unix socket"
            case .connect(let path, let code): "cannot connect to mpv's socket \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    private let descriptor: Int32

    init(path: String) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw Failure.path(path) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            raw[bytes.count] = 0
        }
        let socketDescriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw Failure.connect(path, errno) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(socketDescriptor)
            throw Failure.connect(path, code)
        }
        descriptor = socketDescriptor
    }

    /// Reads lines until mpv closes the socket, then calls `ended`.
    func startReading(received: @escaping @Sendable (String) -> Void, ended: @escaping @Sendable () -> Void) {
        let descriptor = descriptor
        let thread = Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[0..<newline], as: UTF8.self)
                    pending.removeSubrange(0...newline)
                    if !line.isEmpty { received(line) }
                }
            }
            ended()
        }
        thread.name = "cowatch-mpv-reader"
        thread.start()
    }

    func write(_ line: String) {
        var bytes = Array(line.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    func shutdownSocket() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }
}
