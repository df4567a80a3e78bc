import COpenSSL
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One plain HTTP/1.1 request over TCP, or over TLS for an `https://` or `wss://`
/// address (verified as `ClientTrust` says), for `cowatch admin`, which talks to the
/// server's own port, and for reading why a server refused an upgrade: the status
/// and the body, read until the server closes.
public enum PlainHTTP {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func request(_ method: String, _ address: WebSocketAddress, bearer: String?,
                               trust: ClientTrust = .system, timeout: Double = 10) throws -> (status: Int, body: String) {
        var head = "\(method) \(address.path) HTTP/1.1\r\nHost: \(address.hostHeader)\r\nConnection: close\r\n"
        if let bearer { head += "Authorization: Bearer \(bearer)\r\n" }
        if method == "POST" { head += "Content-Length: 0\r\n" }
        return try exchange(head + "\r\n", address, trust: trust, timeout: timeout)
    }

    /// The same WebSocket upgrade asked again, to read the answer libwebsockets
    /// hides when it is not 101 ("HS: ws upgrade response not 101"): the server says
    /// in its body why it refused (docs/protocol.md, "Connecting"). A 101 answer is
    /// read no further. Like the connection it stands for (`LWSClients`), it sends
    /// no `Origin`: a program is not a page, and a made-up origin would be judged
    /// before the reason the server refused the connection for.
    public static func upgradeAnswer(_ address: WebSocketAddress, subprotocol: String, trust: ClientTrust = .system,
                                     timeout: Double = 5) throws -> (status: Int, body: String) {
        var key = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in key.indices { key[index] = generator.next() }
        let head = "GET \(address.path) HTTP/1.1\r\nHost: \(address.hostHeader)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Key: \(Data(key).base64EncodedString())\r\nSec-WebSocket-Protocol: \(subprotocol)\r\n\r\n"
        return try exchange(head, address, trust: trust, timeout: timeout)
    }

    private static func exchange(_ head: String, _ address: WebSocketAddress, trust: ClientTrust,
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
            throw Failure(description: ConnectProbe.describe(String(cString: strerror(errno)), address: address))
        }
        let channel = address.secure ? try TLSChannel(descriptor: descriptor, address: address, trust: trust) : nil
        defer { channel?.close() }
        let bytes = Array(head.utf8)
        let sent = bytes.withUnsafeBytes { buffer in
            channel?.write(buffer) ?? send(descriptor, buffer.baseAddress, buffer.count, 0)
        }
        guard sent == bytes.count else { throw Failure(description: "the request could not be sent") }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { pointer in
                channel?.read(pointer) ?? recv(descriptor, pointer.baseAddress, pointer.count, 0)
            }
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

/// One blocking TLS client session on a connected socket, verified as the
/// WebSocket connections are: the same trust, the server's name checked.
private final class TLSChannel {
    private let context: OpaquePointer
    private let session: OpaquePointer

    init(descriptor: Int32, address: WebSocketAddress, trust: ClientTrust) throws {
        do {
            context = try trust.makeContext()
        } catch {
            throw PlainHTTP.Failure(description: String(describing: error))
        }
        guard let session = SSL_new(context) else {
            SSL_CTX_free(context)
            throw PlainHTTP.Failure(description: "OpenSSL could not start a TLS session")
        }
        self.session = session
        let literal = address.isAddressLiteral
        let named = literal ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(session), address.host)
            : X509_VERIFY_PARAM_set1_host(SSL_get0_param(session), address.host, 0)
        // Server Name Indication carries names only (RFC 6066, 3).
        if !literal { _ = cw_ssl_set_server_name(session, address.host) }
        guard named == 1, SSL_set_fd(session, descriptor) == 1 else {
            SSL_free(session)
            SSL_CTX_free(context)
            throw PlainHTTP.Failure(description: "OpenSSL could not bind the TLS session to \(address.host)")
        }
        guard SSL_connect(session) == 1 else {
            let verdict = Int32(SSL_get_verify_result(session))
            let names = SSL_get1_peer_certificate(session).map { certificate in
                defer { X509_free(certificate) }
                return TLSRefusal.names(of: certificate)
            } ?? nil
            ERR_clear_error()
            SSL_free(session)
            SSL_CTX_free(context)
            throw PlainHTTP.Failure(description: verdict != X509_V_OK
                ? TLSRefusal.describe(verifyError: verdict, host: address.host, port: address.port,
                                      certificateNames: names, caFiles: trust.caFiles)
                : TLSRefusal.describeHandshake(host: address.host, port: address.port))
        }
    }

    func write(_ buffer: UnsafeRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        return Int(SSL_write(session, base, Int32(clamping: buffer.count)))
    }

    func read(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        return Int(SSL_read(session, base, Int32(clamping: buffer.count)))
    }

    func close() {
        SSL_shutdown(session)
        SSL_free(session)
        SSL_CTX_free(context)
    }
}
