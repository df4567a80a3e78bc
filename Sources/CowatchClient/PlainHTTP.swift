import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One plain HTTP/1.1 request over TCP, for `cowatch admin`, which talks to the
/// server's own port (on the machine itself, or through an SSH tunnel): the status
/// and the body, read until the server closes.
public enum PlainHTTP {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func request(_ method: String, _ address: WebSocketAddress, bearer: String?,
                               timeout: Double = 10) throws -> (status: Int, body: String) {
        var head = "\(method) \(address.path) HTTP/1.1\r\nHost: \(address.host):\(address.port)\r\nConnection: close\r\n"
        if let bearer { head += "Authorization: Bearer \(bearer)\r\n" }
        if method == "POST" { head += "Content-Length: 0\r\n" }
        return try exchange(head + "\r\n", address, timeout: timeout)
    }

    /// The same WebSocket upgrade asked again, to read the answer libwebsockets
    /// hides when it is not 101 ("HS: ws upgrade response not 101"): the server says
    /// in its body why it refused (docs/protocol.md, "Connecting"). A 101 answer is
    /// read no further.
    public static func upgradeAnswer(_ address: WebSocketAddress, subprotocol: String,
                                     timeout: Double = 5) throws -> (status: Int, body: String) {
        var key = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in key.indices { key[index] = generator.next() }
        let head = "GET \(address.path) HTTP/1.1\r\nHost: \(address.host):\(address.port)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Key: \(Data(key).base64EncodedString())\r\nSec-WebSocket-Protocol: \(subprotocol)\r\n"
            + "Origin: \(address.host)\r\n\r\n"
        return try exchange(head, address, timeout: timeout)
    }

    private static func exchange(_ head: String, _ address: WebSocketAddress,
                                 timeout: Double) throws -> (status: Int, body: String) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(address.host, String(address.port), &hints, &found) == 0, let info = found else {
            throw Failure(description: "cannot resolve \(address.host)")
        }
        defer { freeaddrinfo(info) }
        let descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
        guard descriptor >= 0 else { throw Failure(description: "cannot open a socket") }
        defer { Glibc.close(descriptor) }
        var wait = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        guard connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            throw Failure(description: "cannot connect to \(address.host):\(address.port): \(String(cString: strerror(errno)))")
        }
        let bytes = Array(head.utf8)
        guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            throw Failure(description: "the request could not be sent")
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += buffer[0..<count]
            if response.count > 16 << 20 { throw Failure(description: "the answer is over 16 MiB") }
            if Self.complete(response) { break }
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let statusLine = text.split(separator: "\r\n", maxSplits: 1).first,
              let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw Failure(description: "no HTTP answer from \(address.host):\(address.port)")
        }
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }

    /// A whole answer: a 101's head, or a head and as many body bytes as its
    /// Content-Length says (an upgrade refusal may leave the connection open).
    static func complete(_ response: [UInt8]) -> Bool {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard response.count >= 4,
              let end = (0...(response.count - 4)).first(where: { Array(response[$0..<($0 + 4)]) == separator }) else { return false }
        let head = String(decoding: response[0..<end], as: UTF8.self).lowercased()
        if head.hasPrefix("http/1.1 101") { return true }
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) else { return false }
        return response.count - (end + 4) >= length
    }
}
