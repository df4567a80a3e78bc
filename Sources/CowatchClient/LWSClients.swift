#if canImport(Glibc)
import Glibc
#endif
import CLibWebSockets
import COpenSSL
import CowatchTime
import Foundation

/// Many WebSocket client connections on one libwebsockets client context and
/// one service thread: the terminal client, the load generator and the tests.
public final class WebSocketClients: @unchecked Sendable {
    public enum StartError: Error, CustomStringConvertible {
        case contextFailed
        /// The trust asked for could not be set up (an unreadable CA file).
        case trust(String)

        public var description: String {
            switch self {
            case .contextFailed: "could not start the WebSocket client"
            case .trust(let why): why
            }
        }
    }

    enum Request {
        case connect(ClientConnection)
        case send(ClientConnection, [UInt8], binary: Bool)
        case close(ClientConnection, code: UInt16)
    }

    // Cross-thread state, behind `lock`.
    private let lock = NSLock()
    private var requests: [Request] = []
    private var stopRequested = false
    private var nextID: UInt64 = 1

    // Service-thread state.
    private var context: OpaquePointer?
    private var connections: [UInt64: ClientConnection] = [:]
    private var finished = false
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolName: UnsafeMutablePointer<CChar>?
    private let done = DispatchSemaphore(value: 0)
    /// libev on epoll, as the server uses: libwebsockets' own loop polls every
    /// descriptor on each wake-up, which would make a load generator holding
    /// thousands of connections measure itself.
    private let loop: OpaquePointer
    private let foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    /// The OpenSSL context every `wss://` connection verifies its server with; nil
    /// when the clients were made without TLS (a load generator on loopback).
    private let tlsContext: OpaquePointer?
    /// The CA files trusted besides the system's store, for telling a refusal.
    private let caFiles: [String]
    /// Whether a failed connection's cause is asked of the network again
    /// (`ConnectProbe`), which blocks this thread for up to its patience: for a
    /// person's client, whose one connection it is, not for many at once.
    private let probesFailures: Bool

    /// `connectTimeout`: how long a connection may take to open before it
    /// fails (libwebsockets counts whole seconds: rounded up, 1 s to an hour).
    /// `trust`: whom `wss://` connections believe (nil: this client opens none).
    /// `probesFailures`: a failed connection says why in the network's words
    /// ("connection refused"), asked again at the cost of a wait on this thread.
    public convenience init(connectTimeout: MonotonicDuration = .seconds(20), trust: ClientTrust? = .system,
                            probesFailures: Bool = false) throws {
        try self.init(connectTimeoutSeconds: connectTimeout.seconds, trust: trust, probesFailures: probesFailures)
    }

    private init(connectTimeoutSeconds connectTimeout: Double, trust: ClientTrust?, probesFailures: Bool = false) throws {
        caFiles = trust?.caFiles ?? []
        self.probesFailures = probesFailures
        do {
            tlsContext = try trust?.makeContext()
        } catch {
            throw StartError.trust(String(describing: error))
        }
        protocolName = strdup("cowatch-client")
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = lwsClientCallback
        // libwebsockets' own lines ("E: SSL error: ...") would come before the
        // sentence this client prints for the same failure (`connectionError`).
        lws_set_log_level(0, nil)

        guard let loop = ev_loop_new(UInt32(EVFLAG_AUTO) | UInt32(EVFLAG_NOSIGMASK)) else {
            protocols.deallocate()
            free(protocolName)
            if let tlsContext { SSL_CTX_free(tlsContext) }
            throw StartError.contextFailed
        }
        self.loop = loop
        foreignLoops = .allocate(capacity: 1)
        foreignLoops.initialize(to: UnsafeMutableRawPointer(loop))

        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_LIBEV)
        if let tlsContext {
            // libwebsockets sets up client TLS only with its global init, and then
            // uses the context handed to it rather than making its own.
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.provided_client_ssl_ctx = tlsContext
        }
        info.foreign_loops = foreignLoops
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.timeout_secs = 20
        info.connect_timeout_secs = UInt32(max(1, min(connectTimeout.rounded(.up), 3600)))
        guard let context = lws_create_context(&info) else {
            protocols.deallocate()
            free(protocolName)
            foreignLoops.deallocate()
            ev_loop_destroy(loop)
            if let tlsContext { SSL_CTX_free(tlsContext) }
            throw StartError.contextFailed
        }
        self.context = context
        let thread = Thread { [self] in run() }
        thread.name = "cowatch-clients"
        thread.start()
    }

    /// Opens a connection; events arrive through `handlers` on the service thread.
    /// `headers`: more request headers for the upgrade. `subprotocol`: asked for
    /// instead of the encoding's (a cluster node's shared relay link).
    public func connect(_ address: WebSocketAddress, encoding: ClientEncoding, handlers: ClientHandlers,
                        headers: [(name: String, value: String)] = [], subprotocol: String? = nil) -> ClientConnection {
        let id = lock.withLock { () -> UInt64 in
            defer { nextID += 1 }
            return nextID
        }
        let connection = ClientConnection(id: id, address: address, encoding: encoding, handlers: handlers, owner: self)
        connection.headers = headers
        connection.subprotocol = subprotocol ?? encoding.rawValue
        submit(.connect(connection))
        return connection
    }

    /// Closes every connection and stops the service thread.
    public func shutdown() {
        lock.withLock { stopRequested = true }
        wake()
        done.wait()
        done.signal()
    }

    func submit(_ request: Request) {
        lock.withLock { requests.append(request) }
        wake()
    }

    /// Under the lock that `run` takes to forget the context before destroying it,
    /// so that no other thread wakes a destroyed context.
    private func wake() {
        lock.withLock {
            if let context { lws_cancel_service(context) }
        }
    }

    private func run() {
        while !finished && context != nil {
            ev_run(loop, Int32(EVRUN_ONCE))
        }
        let ending = lock.withLock { () -> OpaquePointer? in
            defer { context = nil }
            return context
        }
        if let ending { lws_context_destroy(ending) }
        ev_loop_destroy(loop)
        foreignLoops.deallocate()
        protocols.deallocate()
        free(protocolName)
        // libwebsockets does not free a context it was handed.
        if let tlsContext { SSL_CTX_free(tlsContext) }
        done.signal()
    }

    // MARK: - Service thread

    fileprivate func drainRequests() {
        let (pending, stopping) = lock.withLock { () -> ([Request], Bool) in
            defer { requests.removeAll() }
            return (requests, stopRequested)
        }
        for request in pending {
            switch request {
            case .connect(let connection): open(connection)
            case .send(let connection, let bytes, let binary):
                guard !connection.finished else { continue }
                connection.outbox.append((bytes, binary))
                if let wsi = connection.wsi { lws_callback_on_writable(wsi) }
            case .close(let connection, let code):
                connection.closeRequested = true
                connection.closeCodeToSend = code
                if let wsi = connection.wsi { lws_callback_on_writable(wsi) }
            }
        }
        if stopping {
            for connection in connections.values where !connection.closeRequested {
                connection.closeRequested = true
                if let wsi = connection.wsi { lws_callback_on_writable(wsi) }
            }
            if connections.isEmpty { finished = true }
        }
    }

    private func open(_ connection: ClientConnection) {
        guard let context else { return }
        func keep(_ text: String) -> UnsafePointer<CChar>? {
            guard let copy = strdup(text) else { return nil }
            connection.cStrings.append(copy)
            return UnsafePointer(copy)
        }
        var info = lws_client_connect_info()
        info.context = context
        info.address = keep(connection.address.host)
        info.port = Int32(connection.address.port)
        info.path = keep(connection.address.path)
        info.host = keep(connection.address.hostHeader)
        // No Origin: it is a page's (RFC 6455, 10.2), and the server judges pages by it.
        info.protocol = keep(connection.subprotocol)
        info.local_protocol_name = UnsafePointer(protocolName)
        info.ietf_version_or_minus_one = -1
        if connection.address.secure {
            guard tlsContext != nil else {
                connections[connection.id] = connection
                finish(connection, CloseInfo(code: nil, reason: "this client was started without TLS and cannot open \(connection.address.webSocketURL)"))
                return
            }
            info.ssl_connection = Int32(LCCSCF_USE_SSL.rawValue)
            // libwebsockets checks the certificate against `host` as a DNS name cut
            // at its first ':'; an address is checked here instead, against the
            // certificate's IP addresses (the verification callback).
            if connection.address.isAddressLiteral {
                info.ssl_connection |= Int32(LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue)
            }
        }
        if let source = connection.address.source { info.iface = keep(source) }
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: UInt(connection.id))
        connections[connection.id] = connection
        connection.wsi = lws_client_connect_via_info(&info)
        if connection.wsi == nil {
            // libwebsockets resolves the name before it returns: a name that does
            // not resolve ends here.
            finish(connection, CloseInfo(code: nil, reason: "cannot reach \(connection.address.authority) (does the name resolve?)"))
        }
    }

    fileprivate func connection(for wsi: OpaquePointer) -> ClientConnection? {
        guard let raw = lws_get_opaque_user_data(wsi) else { return nil }
        return connections[UInt64(UInt(bitPattern: raw))]
    }

    fileprivate func finish(_ connection: ClientConnection, _ info: CloseInfo) {
        guard !connection.finished else { return }
        connection.finished = true
        connection.wsi = nil
        connections[connection.id] = nil
        for string in connection.cStrings { free(string) }
        connection.cStrings = []
        connection.handlers.closed(info)
        if lock.withLock({ stopRequested }) && connections.isEmpty { finished = true }
    }

    // swiftlint:disable:next cyclomatic_complexity
    fileprivate func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_OPENSSL_PERFORM_SERVER_CERT_VERIFICATION:
            // `user` is OpenSSL's store context and `length` its verdict so far: a
            // refusal is kept, to say which it was when the connection fails, with
            // the names the server's certificate is for.
            guard let user, let connection = connection(for: wsi) else { return 0 }
            let store = OpaquePointer(user)
            let leaf = X509_STORE_CTX_get_error_depth(store) == 0 ? X509_STORE_CTX_get_current_cert(store) : nil
            if length != 0, let leaf, connection.address.isAddressLiteral,
               X509_check_ip_asc(leaf, connection.address.host, 0) != 1 {
                X509_STORE_CTX_set_error(store, X509_V_ERR_IP_ADDRESS_MISMATCH)
            } else if length != 0 {
                return 0
            }
            connection.certificateError = X509_STORE_CTX_get_error(store)
            // The names it is for, read only for a refusal's words.
            if let leaf { connection.certificateNames = TLSRefusal.names(of: leaf) }
            return length != 0 ? 1 : 0
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainRequests()
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            guard let connection = connection(for: wsi), !connection.headers.isEmpty, let input else { return 0 }
            let cursor = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
            guard let start = cursor.pointee else { return 0 }
            let end = start + length
            for (name, value) in connection.headers {
                let added = (name.lowercased() + ":").withCString { namePointer in
                    value.withCString { valuePointer in
                        lws_add_http_header_by_name(wsi, UnsafeRawPointer(namePointer).assumingMemoryBound(to: UInt8.self),
                                                    UnsafeRawPointer(valuePointer).assumingMemoryBound(to: UInt8.self),
                                                    Int32(value.utf8.count), cursor, end)
                    }
                }
                if added != 0 { return -1 }
            }
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            guard let connection = connection(for: wsi) else { return -1 }
            connection.wsi = wsi
            connection.handlers.opened()
            if !connection.outbox.isEmpty || connection.closeRequested { lws_callback_on_writable(wsi) }
        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard let connection = connection(for: wsi) else { return -1 }
            if let input, length > 0 {
                connection.incoming.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            }
            if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
                let text = String(decoding: connection.incoming, as: UTF8.self)
                connection.incoming.removeAll(keepingCapacity: true)
                connection.handlers.received(text)
            }
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            guard let connection = connection(for: wsi) else { return -1 }
            return writeNext(wsi, connection)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            guard let connection = connection(for: wsi) else { return 0 }
            if let input, length >= 2 {
                let bytes = UnsafeRawBufferPointer(start: input, count: length)
                connection.closeCode = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
                connection.closeReason = String(decoding: bytes.dropFirst(2), as: UTF8.self)
            } else {
                connection.closeCode = 1005
            }
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            guard let connection = connection(for: wsi) else { return 0 }
            let text = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
            finish(connection, CloseInfo(code: nil, reason: connectionError(text, connection)))
        case LWS_CALLBACK_CLIENT_CLOSED:
            guard let connection = connection(for: wsi) else { return 0 }
            finish(connection, CloseInfo(code: connection.closeCode, reason: connection.closeReason))
        default:
            break
        }
        return 0
    }

    /// libwebsockets' words for a failed connection, or, over TLS, which of the
    /// certificate's faults or the handshake's it was.
    func connectionError(_ text: String, _ connection: ClientConnection) -> String {
        let address = connection.address
        // The upgrade's refusal ("HS: ...") is read again by the caller, in words.
        if text.hasPrefix("HS:") { return text }
        if address.secure, let code = connection.certificateError, code != X509_V_OK {
            return TLSRefusal.describe(verifyError: code, host: address.host, port: address.port,
                                       certificateNames: connection.certificateNames, caFiles: caFiles)
        }
        let lowered = text.lowercased()
        if address.secure, lowered.contains("ssl") || lowered.contains("tls") {
            return TLSRefusal.describeHandshake(host: address.host, port: address.port)
        }
        // libwebsockets says only "Unable to connect": ask the network why.
        if probesFailures, let why = ConnectProbe.failure(host: address.host, port: address.port) {
            return ConnectProbe.describe(why, address: address)
        }
        return "\(address.authority): \(text)"
    }

    private func writeNext(_ wsi: OpaquePointer, _ connection: ClientConnection) -> Int32 {
        guard let (bytes, binary) = connection.outbox.popFirst() else {
            guard connection.closeRequested else { return 0 }
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(connection.closeCodeToSend)), nil, 0)
            return -1
        }
        let pre = Int(cw_lws_pre())
        var buffer = [UInt8](repeating: 0, count: pre + bytes.count)
        buffer.replaceSubrange(pre..<(pre + bytes.count), with: bytes)
        let written = buffer.withUnsafeMutableBufferPointer { pointer -> Int32 in
            guard let base = pointer.baseAddress else { return -1 }
            return lws_write(wsi, base + pre, bytes.count, binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT)
        }
        guard written >= bytes.count else { return -1 }
        if !connection.outbox.isEmpty || connection.closeRequested { lws_callback_on_writable(wsi) }
        return 0
    }
}

private func lwsClientCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                               _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    let clients = Unmanaged<WebSocketClients>.fromOpaque(owner).takeUnretainedValue()
    return clients.handle(wsi, reason, user, input, length)
}
