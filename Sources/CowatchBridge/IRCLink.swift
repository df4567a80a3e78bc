#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CowatchTime
import Foundation

/// One TCP connection to an IRC server, in TLS for `ircs://`, on a thread of its
/// own: it connects, reports each line received, writes the lines it is given,
/// and reports its end once. It decides nothing (`IRCSession` does).
final class IRCLink: @unchecked Sendable {
    struct Endpoint: Sendable, Hashable {
        var host: String
        var port: Int
        var tls: TLSOptions?
    }

    struct TLSOptions: Sendable, Hashable {
        /// Check the server's certificate and name (off only for testing).
        var verify: Bool
        /// Trust this PEM file's certificates instead of the system's.
        var caFile: String?
    }

    struct Handlers: Sendable {
        var connected: @Sendable () -> Void
        var line: @Sendable (String) -> Void
        var closed: @Sendable (String) -> Void
    }

    private let endpoint: Endpoint
    private let connectTimeout: MonotonicDuration
    /// Bytes without a line end after which what was received is thrown away:
    /// a server's line, tags included, is far shorter.
    private let maximumLineBytes: Int
    /// Bytes waiting to be written at most; a server that stops reading is dropped.
    private let maximumPendingBytes: Int
    private let handlers: Handlers

    // Cross-thread state, behind `lock`.
    private let lock = NSLock()
    private var outbox: [UInt8] = []
    private var closeRequested = false
    private var wakeWrite: Int32 = -1

    // The link's own thread.
    private var socket: Int32 = -1
    private var tls: OpaquePointer?
    private var tlsContext: OpaquePointer?

    init(endpoint: Endpoint, connectTimeout: MonotonicDuration, maximumLineBytes: Int = 16_384, maximumPendingBytes: Int = 1 << 20,
         handlers: Handlers) {
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
        self.maximumLineBytes = maximumLineBytes
        self.maximumPendingBytes = maximumPendingBytes
        self.handlers = handlers
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "cowatch-irc"
        thread.start()
    }

    /// Queues one line (CR-LF is added).
    func write(_ line: String) {
        lock.withLock { outbox += Array(line.utf8) + [13, 10] }
        wake()
    }

    /// Writes what is queued, then closes.
    func close() {
        lock.withLock { closeRequested = true }
        wake()
    }

    private func wake() {
        lock.withLock {
            guard wakeWrite >= 0 else { return }
            var byte: UInt8 = 1
            _ = Glibc.write(wakeWrite, &byte, 1)
        }
    }

    // MARK: - The thread

    private func run() {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            handlers.closed("could not make a pipe: \(Self.lastError())")
            return
        }
        for end in pipeEnds { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        lock.withLock { wakeWrite = pipeEnds[1] }
        let reason = connectAndServe(wakeRead: pipeEnds[0])
        if let tls {
            SSL_shutdown(tls)
            SSL_free(tls)
        }
        if let tlsContext { SSL_CTX_free(tlsContext) }
        if socket >= 0 { Glibc.close(socket) }
        lock.withLock {
            wakeWrite = -1
            Glibc.close(pipeEnds[1])
        }
        Glibc.close(pipeEnds[0])
        handlers.closed(reason)
    }

    /// Returns why the connection ended.
    private func connectAndServe(wakeRead: Int32) -> String {
        let deadline = Self.now() + connectTimeout
        if let problem = connect(deadline: deadline, wakeRead: wakeRead) { return problem }
        if endpoint.tls != nil, let problem = handshake(deadline: deadline, wakeRead: wakeRead) { return problem }
        handlers.connected()
        return serve(wakeRead: wakeRead)
    }

    private func connect(deadline: MonotonicInstant, wakeRead: Int32) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &found)
        guard status == 0, let first = found else {
            return "could not resolve \(endpoint.host): \(String(cString: gai_strerror(status)))"
        }
        defer { freeaddrinfo(first) }
        var problem = "no address for \(endpoint.host)"
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let address = cursor {
            cursor = address.pointee.ai_next
            let candidate = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard candidate >= 0 else { continue }
            _ = fcntl(candidate, F_SETFL, fcntl(candidate, F_GETFL) | O_NONBLOCK)
            var on: Int32 = 1
            setsockopt(candidate, SOL_SOCKET, SO_KEEPALIVE, &on, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(candidate, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                socket = candidate
                return nil
            }
            guard errno == EINPROGRESS else {
                problem = "could not connect to \(endpoint.host):\(endpoint.port): \(Self.lastError())"
                Glibc.close(candidate)
                continue
            }
            switch wait(for: candidate, events: Int16(POLLOUT), deadline: deadline, wakeRead: wakeRead) {
            case .ready:
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(candidate, SOL_SOCKET, SO_ERROR, &error, &length)
                if error == 0 {
                    socket = candidate
                    return nil
                }
                problem = "could not connect to \(endpoint.host):\(endpoint.port): \(String(cString: strerror(error)))"
            case .timedOut:
                problem = "connecting to \(endpoint.host):\(endpoint.port) took over \(Int(connectTimeout.seconds)) s"
            case .closing:
                Glibc.close(candidate)
                return "closed while connecting"
            }
            Glibc.close(candidate)
        }
        return problem
    }

    private enum Readiness { case ready, timedOut, closing }

    private func wait(for descriptor: Int32, events: Int16, deadline: MonotonicInstant, wakeRead: Int32) -> Readiness {
        while true {
            if lock.withLock({ closeRequested }) { return .closing }
            let left = deadline - Self.now()
            guard left > .zero else { return .timedOut }
            var fds = [pollfd(fd: descriptor, events: events, revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let count = poll(&fds, nfds_t(fds.count), Int32(min(left, .seconds(3600)).microseconds / 1000) + 1)
            if count > 0, fds[1].revents != 0 { drain(wakeRead) }
            if count > 0, fds[0].revents != 0 { return .ready }
        }
    }

    // MARK: - TLS

    private func handshake(deadline: MonotonicInstant, wakeRead: Int32) -> String? {
        guard let options = endpoint.tls, let context = SSL_CTX_new(TLS_client_method()) else {
            return "TLS is not available: \(Self.tlsError())"
        }
        tlsContext = context
        _ = cw_ssl_ctx_require_tls12(context)
        if options.verify {
            if let caFile = options.caFile {
                guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                    return "could not read the CA file \(caFile): \(Self.tlsError())"
                }
            } else {
                SSL_CTX_set_default_verify_paths(context)
            }
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        } else {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        }
        guard let tls = SSL_new(context) else { return "TLS is not available: \(Self.tlsError())" }
        self.tls = tls
        cw_ssl_allow_partial_writes(tls)
        SSL_set_fd(tls, socket)
        let isAddress = Self.isNumericAddress(endpoint.host)
        if !isAddress { _ = cw_ssl_set_server_name(tls, endpoint.host) }
        if options.verify {
            let parameters = SSL_get0_param(tls)
            if isAddress {
                X509_VERIFY_PARAM_set1_ip_asc(parameters, endpoint.host)
            } else {
                X509_VERIFY_PARAM_set1_host(parameters, endpoint.host, 0)
            }
        }
        while true {
            ERR_clear_error()
            let result = SSL_connect(tls)
            if result == 1 { return nil }
            let events: Int16
            switch SSL_get_error(tls, result) {
            case SSL_ERROR_WANT_READ: events = Int16(POLLIN)
            case SSL_ERROR_WANT_WRITE: events = Int16(POLLOUT)
            default:
                let verified = SSL_get_verify_result(tls)
                if options.verify, verified != Int(X509_V_OK) {
                    return "the server's TLS certificate was refused: \(String(cString: X509_verify_cert_error_string(verified)))"
                }
                return "the TLS handshake failed: \(Self.tlsError())"
            }
            switch wait(for: socket, events: events, deadline: deadline, wakeRead: wakeRead) {
            case .ready: continue
            case .timedOut: return "the TLS handshake with \(endpoint.host) took over \(Int(connectTimeout.seconds)) s"
            case .closing: return "closed while connecting"
            }
        }
    }

    static func isNumericAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    // MARK: - Connected

    /// Reads and writes until the server closes, an error, or `close()` with
    /// nothing left to write.
    private func serve(wakeRead: Int32) -> String {
        var received: [UInt8] = []
        var pending: [UInt8] = []
        var readWantsWrite = false
        var writeWantsRead = false
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let closing = lock.withLock { () -> Bool in
                pending += outbox
                outbox.removeAll(keepingCapacity: true)
                return closeRequested
            }
            if pending.count > maximumPendingBytes { return "the server stopped reading (\(pending.count) bytes waiting)" }
            if !pending.isEmpty, !writeWantsRead {
                switch flush(&pending) {
                case .wrote, .blocked: writeWantsRead = false
                case .blockedOnRead: writeWantsRead = true
                case .failed(let problem): return problem
                }
            }
            if closing, pending.isEmpty { return "closed by the bridge" }

            var events = Int16(POLLIN)
            if (!pending.isEmpty && !writeWantsRead) || readWantsWrite { events |= Int16(POLLOUT) }
            var fds = [pollfd(fd: socket, events: events, revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            // While closing, a server that takes nothing more is given a few seconds.
            let timeout: Int32 = closing ? 3000 : -1
            let count = poll(&fds, nfds_t(fds.count), timeout)
            if count < 0 {
                if errno == EINTR { continue }
                return "poll failed: \(Self.lastError())"
            }
            if count == 0, closing { return "closed by the bridge" }
            if fds[1].revents != 0 { drain(wakeRead) }
            guard fds[0].revents != 0 else { continue }
            writeWantsRead = false

            // Read whatever is there.
            readWantsWrite = false
            reading: while true {
                let got = buffer.withUnsafeMutableBytes { raw -> Int in
                    guard let base = raw.baseAddress else { return -1 }
                    if let tls {
                        ERR_clear_error()
                        return Int(SSL_read(tls, base, Int32(raw.count)))
                    }
                    return Glibc.recv(socket, base, raw.count, 0)
                }
                if got > 0 {
                    received += buffer[0..<got]
                    deliverLines(&received)
                    continue
                }
                if let tls {
                    switch SSL_get_error(tls, Int32(got)) {
                    case SSL_ERROR_WANT_READ: break reading
                    case SSL_ERROR_WANT_WRITE:
                        readWantsWrite = true
                        break reading
                    case SSL_ERROR_ZERO_RETURN: return "the server closed the connection"
                    default:
                        return got == 0 ? "the server closed the connection" : "TLS read failed: \(Self.tlsError())"
                    }
                }
                if got == 0 { return "the server closed the connection" }
                if errno == EAGAIN || errno == EWOULDBLOCK { break reading }
                if errno == EINTR { continue }
                return "read failed: \(Self.lastError())"
            }
        }
    }

    private enum Flush { case wrote, blocked, blockedOnRead, failed(String) }

    private func flush(_ pending: inout [UInt8]) -> Flush {
        while !pending.isEmpty {
            let sent = pending.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                if let tls {
                    ERR_clear_error()
                    return Int(SSL_write(tls, base, Int32(min(raw.count, 16_384))))
                }
                return Glibc.send(socket, base, raw.count, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                pending.removeFirst(sent)
                continue
            }
            if let tls {
                switch SSL_get_error(tls, Int32(sent)) {
                case SSL_ERROR_WANT_WRITE: return .blocked
                case SSL_ERROR_WANT_READ: return .blockedOnRead
                default: return .failed("TLS write failed: \(Self.tlsError())")
                }
            }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .blocked }
            if errno == EINTR { continue }
            return .failed("write failed: \(Self.lastError())")
        }
        return .wrote
    }

    private func deliverLines(_ received: inout [UInt8]) {
        var start = 0
        while let end = received[start...].firstIndex(of: 10) {
            var line = received[start..<end]
            if line.last == 13 { line = line.dropLast() }
            if !line.isEmpty { handlers.line(String(decoding: line, as: UTF8.self)) }
            start = end + 1
        }
        received.removeFirst(start)
        if received.count > maximumLineBytes { received.removeAll() }
    }

    private func drain(_ descriptor: Int32) {
        var scratch = [UInt8](repeating: 0, count: 64)
        while Glibc.read(descriptor, &scratch, scratch.count) > 0 {}
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }

    private static func tlsError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "unknown error" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The monotonic clock (`SystemClock`), for the link's own poll deadlines:
    /// `poll` waits in real time, which no skipped time could shorten.
    private static func now() -> MonotonicInstant { SystemClock.monotonic() }
}
