#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import Foundation

/// The TCP side of Syncplay's protocol, on a thread of its own: it listens,
/// accepts, splits what each client sends into lines, writes the lines it is
/// given, turns a connection to TLS when told (Syncplay's upgrade happens after
/// a line in plain, so the socket is the front's own rather than the
/// WebSocket library's), and reports each connection's end once. It decides
/// nothing beyond its bounds (`SyncplaySession` does).
final class SyncplaySockets: @unchecked Sendable {
    struct Limits: Sendable {
        var connections: Int
        var connectionsPerAddress: Int
        /// Bytes without a line end after which the client is told and let go.
        var lineBytes: Int
        /// Bytes waiting to be written at most; a client that stops reading is let go.
        var pendingBytes: Int
    }

    struct Handlers: Sendable {
        var accepted: @Sendable (Int, String) -> Void
        var line: @Sendable (Int, String) -> Void
        var tooLong: @Sendable (Int) -> Void
        var closed: @Sendable (Int) -> Void
    }

    private final class Client {
        let id: Int
        let fd: Int32
        let address: String
        var input: [UInt8] = []
        var output: [UInt8] = []
        var tls: OpaquePointer?
        /// TLS starts once what was written in plain is out.
        var tlsWanted = false
        var handshaking = false
        /// The handshake or a read waits to write (or a write to read).
        var wantsWrite = false
        var closing = false
        var discarding = false

        init(id: Int, fd: Int32, address: String) {
            self.id = id
            self.fd = fd
            self.address = address
        }
    }

    private enum Order {
        case write(Int, [UInt8])
        case startTLS(Int)
        case close(Int)
    }

    private let limits: Limits
    private let handlers: Handlers
    private let tlsContext: OpaquePointer?
    private let listener: Int32
    let port: Int

    // Cross-thread state, behind `lock`.
    private let lock = NSLock()
    private var orders: [Order] = []
    private var stopping = false
    private let wakeRead: Int32
    private let wakeWrite: Int32

    // The thread's own.
    private var clients: [Int: Client] = [:]
    private var perAddress: [String: Int] = [:]
    private var nextID = 1

    /// Binds and listens at once, so that a port in use is said at start.
    init(host: String, port: Int, limits: Limits, tls: OpaquePointer?, handlers: Handlers) throws(SyncplayStartError) {
        self.limits = limits
        self.handlers = handlers
        tlsContext = tls
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            throw SyncplayStartError("syncplay: \(host) is not an address to listen on")
        }
        defer { freeaddrinfo(first) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SyncplayStartError("syncplay: could not make a socket: \(Self.lastError())") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0, listen(fd, 128) == 0 else {
            let problem = Self.lastError()
            Glibc.close(fd)
            throw SyncplayStartError("syncplay: could not listen on \(host):\(port): \(problem)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let bound = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        var boundPort = port
        if bound == 0 {
            if storage.ss_family == sa_family_t(AF_INET) {
                boundPort = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) } }
            } else if storage.ss_family == sa_family_t(AF_INET6) {
                boundPort = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) } }
            }
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            Glibc.close(fd)
            throw SyncplayStartError("syncplay: could not make a pipe: \(Self.lastError())")
        }
        for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        listener = fd
        self.port = boundPort
        wakeRead = ends[0]
        wakeWrite = ends[1]
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "cowatch-syncplay"
        thread.start()
    }

    /// Syncplay's lines end in CR LF (Twisted's `LineReceiver`), which its client waits for.
    func write(_ id: Int, _ line: String) { order(.write(id, Array(line.utf8) + [13, 10])) }
    func startTLS(_ id: Int) { order(.startTLS(id)) }
    func close(_ id: Int) { order(.close(id)) }

    /// Closes every connection and the listener.
    func stop() {
        lock.withLock { stopping = true }
        wake()
    }

    private func order(_ order: Order) {
        lock.withLock { orders.append(order) }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    // MARK: - The thread

    private func run() {
        while true {
            let (taken, stop) = lock.withLock { () -> ([Order], Bool) in
                defer { orders.removeAll() }
                return (orders, stopping)
            }
            if stop { break }
            for order in taken { carryOut(order) }
            var polled = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                          pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            let ids = Array(clients.keys)
            for id in ids {
                guard let client = clients[id] else { continue }
                var events = Int16(POLLIN)
                if !client.output.isEmpty || client.wantsWrite { events |= Int16(POLLOUT) }
                polled.append(pollfd(fd: client.fd, events: events, revents: 0))
            }
            guard poll(&polled, nfds_t(polled.count), -1) >= 0 || errno == EINTR else { break }
            if polled[0].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 256)
                while Glibc.read(wakeRead, &sink, sink.count) > 0 {}
            }
            if polled[1].revents & Int16(POLLIN) != 0 { acceptAll() }
            for (index, id) in ids.enumerated() {
                let revents = polled[index + 2].revents
                guard revents != 0, let client = clients[id] else { continue }
                if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 || client.wantsWrite { serviceRead(client) }
                if let client = clients[id], revents & Int16(POLLOUT) != 0 { flush(client) }
            }
        }
        for client in clients.values { finish(client, report: true) }
        Glibc.close(listener)
        Glibc.close(wakeRead)
        if let tlsContext { SSL_CTX_free(tlsContext) }
    }

    private func carryOut(_ order: Order) {
        switch order {
        case .write(let id, let bytes):
            guard let client = clients[id], !client.closing || !client.output.isEmpty else { return }
            if client.output.count + bytes.count > limits.pendingBytes {
                // It stopped reading what it is sent.
                finish(client, report: true)
                return
            }
            client.output += bytes
            flush(client)
        case .startTLS(let id):
            guard let client = clients[id], tlsContext != nil else { return }
            client.tlsWanted = true
            flush(client)
        case .close(let id):
            guard let client = clients[id] else { return }
            client.closing = true
            // Mid-handshake nothing more can be said, in plain or in TLS: it goes now
            // (a client that asked for TLS and never began is let go by its session's timeout).
            if client.handshaking {
                finish(client, report: true)
                return
            }
            flush(client)
        }
    }

    private func acceptAll() {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let address = Self.numericAddress(&storage, length)
            if clients.count >= limits.connections || perAddress[address, default: 0] >= limits.connectionsPerAddress {
                // Told in Syncplay's words, in plain, before anything else is read.
                let line = SyncplaySession.error(clients.count >= limits.connections
                    ? "this server has no room for another Syncplay connection; try again later"
                    : "too many Syncplay connections from your address").text + "\r\n"
                _ = line.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                Glibc.close(fd)
                continue
            }
            var yes: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let client = Client(id: nextID, fd: fd, address: address)
            nextID += 1
            clients[client.id] = client
            perAddress[address, default: 0] += 1
            handlers.accepted(client.id, address)
        }
    }

    private func serviceRead(_ client: Client) {
        if client.handshaking {
            handshake(client)
            return
        }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while clients[client.id] != nil {
            let got: Int
            if let tls = client.tls {
                client.wantsWrite = false
                got = Int(buffer.withUnsafeMutableBytes { SSL_read(tls, $0.baseAddress, Int32($0.count)) })
                if got <= 0 {
                    stalled(client, tls, result: got, wanting: SSL_ERROR_WANT_READ)
                    return
                }
            } else {
                got = Glibc.read(client.fd, &buffer, buffer.count)
                if got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
                if got <= 0 {
                    finish(client, report: true)
                    return
                }
            }
            received(client, buffer[0..<got])
            // A line asking for TLS ends what is read in plain: the handshake follows.
            if client.tlsWanted || client.closing { return }
        }
    }

    private func received(_ client: Client, _ bytes: ArraySlice<UInt8>) {
        guard !client.closing else { return }
        client.input += bytes
        while let end = client.input.firstIndex(of: 10) {
            var line = client.input[..<end]
            client.input.removeSubrange(...end)
            if line.last == 13 { line = line.dropLast() }
            if client.discarding {
                client.discarding = false
                continue
            }
            handlers.line(client.id, String(decoding: line, as: UTF8.self))
            if client.tlsWanted || client.closing { return }
        }
        if client.input.count > limits.lineBytes {
            client.input.removeAll()
            client.discarding = true
            handlers.tooLong(client.id)
        }
    }

    private func flush(_ client: Client) {
        while !client.output.isEmpty {
            let sent: Int
            if let tls = client.tls {
                if client.handshaking { return }
                sent = Int(client.output.withUnsafeBytes { SSL_write(tls, $0.baseAddress, Int32(min($0.count, 16_384))) })
                if sent <= 0 {
                    stalled(client, tls, result: sent, wanting: SSL_ERROR_WANT_WRITE)
                    return
                }
            } else {
                sent = client.output.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                    finish(client, report: true)
                    return
                }
            }
            client.output.removeFirst(sent)
        }
        if client.tlsWanted, client.tls == nil, let tlsContext {
            // Everything said in plain is out: the client's ClientHello comes next.
            guard let tls = SSL_new(tlsContext) else {
                finish(client, report: true)
                return
            }
            cw_ssl_allow_partial_writes(tls)
            SSL_set_fd(tls, client.fd)
            client.tls = tls
            client.handshaking = true
            handshake(client)
            return
        }
        if client.closing { finish(client, report: true) }
    }

    /// A TLS read or write that did nothing: it waits for the socket the way it
    /// wants (`own`: the way it was going; the other way round it waits to
    /// write, `wantsWrite`), or the connection failed and goes.
    private func stalled(_ client: Client, _ tls: OpaquePointer, result: Int, wanting own: Int32) {
        switch SSL_get_error(tls, Int32(result)) {
        case own: return
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: client.wantsWrite = true
        default: finish(client, report: true)
        }
    }

    private func handshake(_ client: Client) {
        guard let tls = client.tls else { return }
        let result = SSL_accept(tls)
        if result == 1 {
            client.handshaking = false
            client.wantsWrite = false
            flush(client)
            // What came with the handshake's last record is read now.
            if clients[client.id] != nil { serviceRead(client) }
            return
        }
        switch SSL_get_error(tls, result) {
        case SSL_ERROR_WANT_READ: client.wantsWrite = false
        case SSL_ERROR_WANT_WRITE: client.wantsWrite = true
        default: finish(client, report: true)
        }
    }

    private func finish(_ client: Client, report: Bool) {
        guard clients.removeValue(forKey: client.id) != nil else { return }
        if let tls = client.tls {
            if !client.handshaking { SSL_shutdown(tls) }
            SSL_free(tls)
        }
        Glibc.close(client.fd)
        perAddress[client.address, default: 1] -= 1
        if perAddress[client.address] == 0 { perAddress[client.address] = nil }
        if report { handlers.closed(client.id) }
    }

    private static func numericAddress(_ storage: inout sockaddr_storage, _ length: socklen_t) -> String {
        var host = [CChar](repeating: 0, count: 64)
        let found = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getnameinfo($0, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) }
        }
        guard found == 0 else { return "unknown" }
        let text = host.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } ?? "unknown" }
        return text.hasPrefix("::ffff:") && text.contains(".") ? String(text.dropFirst(7)) : text
    }

    static func lastError() -> String {
        String(cString: strerror(errno))
    }

    /// A server TLS context from a certificate chain and its key (PEM files).
    static func tlsContext(certificate: String, key: String) throws(SyncplayStartError) -> OpaquePointer {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw SyncplayStartError("syncplay: TLS is not available") }
        _ = cw_ssl_ctx_require_tls12(context)
        guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
            SSL_CTX_free(context)
            throw SyncplayStartError("syncplay: could not read the certificate \(certificate): \(tlsError())")
        }
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1, SSL_CTX_check_private_key(context) == 1 else {
            SSL_CTX_free(context)
            throw SyncplayStartError("syncplay: could not use the key \(key) with the certificate \(certificate): \(tlsError())")
        }
        return context
    }

    static func tlsError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no detail" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return buffer.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } ?? "no detail" }
    }
}

public struct SyncplayStartError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
