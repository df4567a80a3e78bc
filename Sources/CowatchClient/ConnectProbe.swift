import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a TCP connection could not be made, asked of the network again:
/// libwebsockets reports every failure as "Unable to connect".
enum ConnectProbe {
    /// How long the second try may wait for an answer.
    static let patience = 2

    /// The system's words for the failure (`strerror`), or nil when the server
    /// answers now.
    static func failure(host: String, port: Int) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &found)
        guard resolved == 0, let info = found else { return String(cString: gai_strerror(resolved)) }
        defer { freeaddrinfo(info) }
        let descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue),
                                info.pointee.ai_protocol)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        if connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return nil }
        guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
        var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        guard poll(&waiting, 1, Int32(patience * 1000)) == 1 else { return String(cString: strerror(ETIMEDOUT)) }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
        return code == 0 ? nil : String(cString: strerror(code))
    }

    /// The failure as a sentence naming the address, with what usually causes it.
    static func describe(_ why: String, address: WebSocketAddress) -> String {
        let lowered = why.lowercased()
        if lowered.contains("refused") {
            return "nothing accepts connections at \(address.authority) (connection refused): "
                + "is the server running, and is that its port?"
        }
        if lowered.contains("timed out") {
            return "\(address.authority) did not answer (connection timed out): a firewall, or the wrong address?"
        }
        return "cannot connect to \(address.authority): \(why)"
    }
}
