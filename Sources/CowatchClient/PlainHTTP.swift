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
        var head = "\(method) \(address.path) HTTP/1.1\r\nHost: \(address.host):\(address.port)\r\nConnection: close\r\n"
        if let bearer { head += "Authorization: Bearer \(bearer)\r\n" }
        if method == "POST" { head += "Content-Length: 0\r\n" }
        head += "\r\n"
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
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let statusLine = text.split(separator: "\r\n", maxSplits: 1).first,
              let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw Failure(description: "no HTTP answer from \(address.host):\(address.port)")
        }
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }
}
