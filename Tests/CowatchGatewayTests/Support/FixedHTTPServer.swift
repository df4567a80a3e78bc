import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP server whose answers are fixed per path: what a shared link
/// serves, for the media check's tests. Each connection gets one answer and is
/// closed; the paths asked for are recorded.
final class FixedHTTPServer: @unchecked Sendable {
    let port: Int
    private let descriptor: Int32
    private let answers: [String: String]
    private let bodies: [String: String]
    private let lock = NSLock()
    private var asked: [String] = []

    /// `answers`: path → the whole response head (status line and headers);
    /// `bodies`: path → its body, `body` when not given.
    init(answers: [String: String], bodies: [String: String] = [:]) throws {
        self.answers = answers
        self.bodies = bodies
        (descriptor, port) = try Self.listening()
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    var paths: [String] { lock.withLock { asked } }

    /// A socket listening on a free loopback port, and the port.
    static func listening() throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw TestFailure("cannot listen")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    private func serve() {
        while true {
            let client = accept(descriptor, nil, nil)
            if client < 0 { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            let request = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
            let path = request.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            lock.withLock { asked.append(path) }
            let head = answers[path] ?? "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain"
            let body = bodies[path] ?? "body"
            let response = Array((head + "\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body).utf8)
            _ = response.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
            Glibc.close(client)
        }
    }

    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
    }
}
