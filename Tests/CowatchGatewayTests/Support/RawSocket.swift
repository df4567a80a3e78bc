#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A blocking TCP socket to the loopback server, for HTTP requests and for
/// WebSocket peers that misbehave on purpose (never read, never answer pings).
final class RawSocket: @unchecked Sendable {
    private var descriptor: Int32

    /// `receiveBuffer` shrinks the kernel's receive buffer (before connecting, so
    /// the window stays small) for a peer meant to fall behind.
    /// `from` picks the loopback address the connection comes from (127.0.0.2, ...),
    /// for limits kept per address.
    init(port: Int, receiveBuffer: Int32? = nil, from source: String? = nil) throws {
        descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket() failed") }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                Glibc.close(descriptor)
                throw TestFailure("bind to \(source) failed")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(descriptor)
            throw TestFailure("connect to port \(port) failed")
        }
    }

    func write(_ text: String) throws {
        try write(Array(text.utf8))
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TestFailure("send failed") }
            offset += sent
        }
    }

    /// Reads until the peer closes or `timeout` seconds pass.
    func readAll(timeout: Double) -> [UInt8] {
        var result: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            result.append(contentsOf: buffer[0..<count])
        }
        return result
    }

    /// Reads until `done` holds for what came so far, the peer closes, or
    /// `timeout` seconds pass (a bound, not a wait: `done` ends it).
    func read(until done: ([UInt8]) -> Bool, timeout: Double = 10) -> [UInt8] {
        var result: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline, !done(result) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            result.append(contentsOf: buffer[0..<count])
        }
        return result
    }

    /// Whether the peer has closed the connection (reads and discards what is pending).
    func isClosedByPeer(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return true }
        }
        return false
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }

    /// Performs a WebSocket upgrade by hand and returns the response head.
    func upgrade(path: String, protocolName: String? = nil, host: String = "127.0.0.1", headers: [String] = []) throws -> String {
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        for header in headers { request += header + "\r\n" }
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let protocolName { request += "Sec-WebSocket-Protocol: \(protocolName)\r\n" }
        request += "\r\n"
        try write(request)
        var head: [UInt8] = []
        var byte: UInt8 = 0
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let count = Glibc.recv(descriptor, &byte, 1, 0)
            guard count == 1 else { break }
            head.append(byte)
            if head.suffix(4) == [13, 10, 13, 10] { break }
        }
        return String(decoding: head, as: UTF8.self)
    }
}
