#if canImport(Glibc)
import Glibc
#endif
import CowatchConfig
import CowatchConnection
import CLibWebSockets
import CFrameGuard
import CowatchCore
import CowatchTime

extension LWSServer {
    /// One libwebsockets callback, turned into the gateway's event; what the
    /// gateway answers is turned back into what the library expects.
    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi, path: input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/")
        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let answer = deferred.take(for: wsi) else { return lws_callback_http_dummy(wsi, reason, user, input, length) }
            lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
            return respond(wsi, answer.response, headOnly: answer.headOnly)
        case LWS_CALLBACK_RAW_ADOPT:
            // A CONNECT request, or one libwebsockets' parser gave up on, arrives here
            // as raw bytes: neither is anything this server serves.
            gateway.httpRefused(status: 400)
            cw_raw_refuse(wsi, Self.rawRefusal)
            return -1
        case LWS_CALLBACK_RAW_RX:
            return -1
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi)
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            return chooseProtocol(wsi, user)
        case LWS_CALLBACK_ESTABLISHED:
            return established(wsi, user)
        case LWS_CALLBACK_RECEIVE:
            return receive(wsi, user, input, length)
        case LWS_CALLBACK_RECEIVE_PONG:
            guard let id = connectionID(user), let connection = gateway.connections[id] else { return 0 }
            if refuseUnmasked(wsi, connection) { return 0 }
            gateway.ponged(connection)
            return 0
        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let id = connectionID(user), let connection = gateway.connections[id] else { return -1 }
            writingDirectly = false
            defer { writingDirectly = true }
            return writeNext(wsi, connection)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            guard let id = connectionID(user), let connection = gateway.connections[id] else { return 0 }
            let close = PeerClose.read(UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))
            if let (high, low) = close.rewrite, let input {
                input.storeBytes(of: high, as: UInt8.self)
                input.storeBytes(of: low, toByteOffset: 1, as: UInt8.self)
            }
            return gateway.peerClosed(connection, code: close.code, malformed: close.malformed) ? -1 : 0
        case LWS_CALLBACK_CLOSED:
            cw_frame_guard_forget(lws_get_socket_fd(wsi))
            guard let id = connectionID(user) else { return 0 }
            sockets[id] = nil
            gateway.closed(id: id)
            return 0
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            gateway.serviceWoken()
            return 0
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            return socketOffered(user)
        case LWS_CALLBACK_WSI_CREATE:
            if let address = acceptedAddress {
                acceptedAddress = nil
                socketAddresses[wsi] = address
                gateway.socketOpened(from: address)
            }
            return 0
        case LWS_CALLBACK_WSI_DESTROY:
            if let address = socketAddresses.removeValue(forKey: wsi) { gateway.socketClosed(from: address) }
            deferred.forget(wsi)
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    private func httpRequest(_ wsi: OpaquePointer, path: String) -> Int32 {
        let head = requestHead(wsi, path: path)
        let headOnly = head.method == .head
        let request = HTTPRequestEvent(head: head, path: path, token: Self.bearer(header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION)),
                                       address: clientAddress(wsi), arguments: { [self] name in argument(wsi, name) },
                                       id: deferred.nextID)
        switch gateway.httpRequested(request) {
        case .respond(let response):
            return respond(wsi, response, headOnly: headOnly)
        case .later(let timeoutSeconds):
            deferred.hold(wsi, headOnly: headOnly)
            lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, timeoutSeconds)
            return 0
        }
    }

    private func confirmUpgrade(_ wsi: OpaquePointer) -> Int32 {
        let request = upgradeRequest(wsi)
        if let refusal = gateway.admit(request) {
            let body = Array(refusal.body.utf8)
            return body.withUnsafeBufferPointer { buffer in
                cw_http_refuse_upgrade(wsi, refusal.status, Self.reasonPhrase(refusal.status), buffer.baseAddress, buffer.count)
            }
        }
        // The same upgrade's protocol is chosen next, in this same call into
        // the library: it is not admitted twice.
        admittedUpgrade = (wsi, request)
        return 0
    }

    private func chooseProtocol(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let user else { return -1 }
        let request: UpgradeRequest
        if let admitted = admittedUpgrade, admitted.wsi == wsi {
            request = admitted.request
        } else {
            request = upgradeRequest(wsi)
            if gateway.admit(request) != nil { return -1 }
        }
        admittedUpgrade = nil
        user.storeBytes(of: gateway.upgradeAccepted(request), as: UInt64.self)
        return 0
    }

    private func established(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let id = connectionID(user) else { return -1 }
        let protocolID = lws_get_protocol(wsi).map { $0.pointee.id } ?? ProtocolID.text.rawValue
        sockets[id] = wsi
        cw_frame_guard_watch(lws_get_socket_fd(wsi))
        let encoding: Connection.Encoding = switch ProtocolID(rawValue: protocolID) {
        case .json: .json
        case .relay: .relay
        case .text, nil: .text
        }
        gateway.established(id: id, encoding: encoding)
        return 0
    }

    private func receive(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
                         _ length: Int) -> Int32 {
        guard let id = connectionID(user), let connection = gateway.connections[id] else { return -1 }
        if refuseUnmasked(wsi, connection) { return 0 }
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        let midFrame = lws_remaining_packet_payload(wsi) != 0
        let final = lws_is_final_fragment(wsi) != 0 && !midFrame
        // The library may hold a pong to a ping that came in this same read; it
        // goes out on the library's writeable pass, so this connection's own
        // replies take that pass too, after it, rather than a direct write.
        receiving = connection.id
        defer { receiving = nil }
        gateway.received(bytes, binary: lws_frame_is_binary(wsi) != 0, final: final, midFrame: midFrame, on: connection)
        // Carried out while this connection is still the one receiving.
        gateway.eventEnds()
        return 0
    }

    private func socketOffered(_ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let user else { return 1 }
        let arguments = user.assumingMemoryBound(to: lws_filter_network_conn_args.self)
        let address = Self.numericAddress(arguments)
        if case .refuseSocket(let refusal) = gateway.socketOffered(from: address) {
            if let refusal {
                let response = Array(refusal.response.utf8)
                _ = response.withUnsafeBytes { send(arguments.pointee.accept_fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            }
            return 1
        }
        // The socket's wsi is made next, in this same call into the library.
        acceptedAddress = address
        return 0
    }


    static func reasonPhrase(_ status: UInt32) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 421: "Misdirected Request"
        case 429: "Too Many Requests"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }

    /// Whether the client's frames came unmasked (`CFrameGuard` saw one): the
    /// gateway is told, and nothing more from it is read.
    private func refuseUnmasked(_ wsi: OpaquePointer, _ connection: Connection) -> Bool {
        guard cw_frame_guard_unmasked(lws_get_socket_fd(wsi)) != 0 else { return false }
        gateway.unmaskedFrame(on: connection)
        return true
    }

    /// The peer's address as libwebsockets writes it elsewhere (`lws_get_peer_simple`).
    static func numericAddress(_ arguments: UnsafeMutablePointer<lws_filter_network_conn_args>) -> String {
        var host = [CChar](repeating: 0, count: 64)
        let found = withUnsafePointer(to: &arguments.pointee.cli_addr) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                getnameinfo(address, arguments.pointee.clilen, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
            }
        }
        guard found == 0 else { return "unknown" }
        let text = host.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } ?? "unknown" }
        // An IPv4 peer of a dual-stack socket, as libwebsockets reports it.
        return text.hasPrefix("::ffff:") && text.contains(".") ? String(text.dropFirst(7)) : text
    }

    /// The client's address of a plain HTTP request, as the admin API and the
    /// limits per address count it (`X-Forwarded-For` from a trusted proxy).
    private func clientAddress(_ wsi: OpaquePointer) -> String {
        var address = [CChar](repeating: 0, count: 128)
        let peer = lws_get_peer_simple(wsi, &address, address.count).map { String(cString: $0) } ?? "unknown"
        return gateway.clientAddress(peer: peer, forwardedFor: header(wsi, WSI_TOKEN_X_FORWARDED_FOR))
    }

    private func connectionID(_ user: UnsafeMutableRawPointer?) -> UInt64? {
        guard let user else { return nil }
        let id = user.load(as: UInt64.self)
        return id == 0 ? nil : id
    }

    private func respond(_ wsi: OpaquePointer, _ response: HTTPResponse, headOnly: Bool) -> Int32 {
        let headers = (gateway.securityHeaders + response.headers).map { $0 + "\n" }.joined()
        return response.body.withUnsafeBufferPointer { buffer in
            cw_http_respond_with(wsi, response.status, Self.reasonPhrase(response.status), response.contentType, headers, buffer.baseAddress, buffer.count,
                                 headOnly ? 0 : 1, response.close ? 1 : 0)
        }
    }

    static let rawRefusal: String = {
        let body = "this server answers GET and HEAD, and WebSocket upgrades\n"
        return "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + "content-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n" + body
    }()

    /// The parts of a request's head that `HTTPRequestRules` judges.
    private func requestHead(_ wsi: OpaquePointer, path: String) -> HTTPRequestHead {
        let methods: [(lws_token_indexes, HTTPRequestHead.Method)] = [
            (WSI_TOKEN_GET_URI, .get), (WSI_TOKEN_POST_URI, .post), (WSI_TOKEN_OPTIONS_URI, .options),
            (WSI_TOKEN_PUT_URI, .put), (WSI_TOKEN_PATCH_URI, .patch), (WSI_TOKEN_DELETE_URI, .delete),
            (WSI_TOKEN_HEAD_URI, .head),
        ]
        let found = methods.first { lws_hdr_total_length(wsi, $0.0) > 0 }
        // libwebsockets ends the path's first fragment at `;` or `&` and starts another.
        let continues = found.map { fragments(wsi, $0.0).count > 1 } ?? false
        return HTTPRequestHead(
            method: found?.1, path: path, pathContinues: continues, hosts: fragments(wsi, WSI_TOKEN_HOST),
            http10: header(wsi, WSI_TOKEN_HTTP).map { !$0.hasPrefix("HTTP/1.1") } ?? true,
            contentLengths: fragments(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH),
            transferEncoding: lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0)
    }

    /// Each value libwebsockets kept for a header: one per field line, since it
    /// chains a repeated header's lines as fragments.
    private func fragments(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> [String] {
        var values: [String] = []
        var buffer = [CChar](repeating: 0, count: 1024)
        for index in 0..<16 {
            guard lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), token, Int32(index)) >= 0 else { break }
            values.append(buffer.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } ?? "" })
        }
        return values
    }

    /// What is queued for a connection leaves in one write of ready-made frames
    /// (as many as fit the write buffer), as libwebsockets allows one write per
    /// writeable callback; then the close frame, once everything queued is gone.
    func writeNext(_ wsi: OpaquePointer, _ connection: Connection) -> Int32 {
        defer { gateway.eventEnds() }
        return perform(connection.state.nextWrite(budget: Self.writeBudget, now: gateway.eventTime.monotonic), wsi, connection)
    }

    /// Makes one write the connection's state asked for; -1 when the socket failed.
    func perform(_ write: ConnectionState.Write, _ wsi: OpaquePointer, _ connection: Connection) -> Int32 {
        switch write {
        case .nothing:
            gateway.wrote([], on: connection, stillBuffered: lws_partial_buffered(wsi) != 0)
            return 0
        case .frames(let frames):
            let written = writeFrames(wsi, frames, from: 0)
            gateway.wrote(frames, on: connection, stillBuffered: lws_partial_buffered(wsi) != 0)
            return written ? 0 : -1
        case .close(let close):
            let payload = WebSocketFraming.closePayload(code: close.code, reason: close.reason)
            let frame = WebSocketFraming.header(.close, length: payload.count) + payload
            let written = frame.withUnsafeBytes { writeRaw(wsi, $0) }
            return written && close.awaitsReply ? 0 : -1
        }
    }

    /// Frames in one write through the library, from byte `from` of them on
    /// (0, or where a shared write stopped), which buffers what the socket
    /// cannot take yet; false when the socket failed.
    func writeFrames(_ wsi: OpaquePointer, _ frames: [OutboundFrame], from: Int) -> Bool {
        if frames.count == 1 {
            let framed = frames[0].framed
            return writeRaw(wsi, UnsafeRawBufferPointer(rebasing: framed[from...]))
        }
        // Several frames fit the write budget together (`nextWrite`), so they fit the buffer.
        var skip = from
        var offset = 0
        for frame in frames {
            let framed = frame.framed
            let start = Swift.min(skip, framed.count)
            skip -= start
            let part = UnsafeRawBufferPointer(rebasing: framed[start...])
            UnsafeMutableRawBufferPointer(start: writeBuffer + offset, count: part.count).copyMemory(from: part)
            offset += part.count
        }
        return writeRaw(wsi, UnsafeRawBufferPointer(start: writeBuffer, count: offset))
    }

    /// Bytes already framed go out as they are: libwebsockets writes them without
    /// adding a header (its HTTP write type), buffering whatever the socket does
    /// not take at once.
    private func writeRaw(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let pointer = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        return lws_write(wsi, pointer, bytes.count, LWS_WRITE_HTTP) >= bytes.count
    }

    /// The room, the member's name and flags, and the client's address, read
    /// while the upgrade request's headers are still available.
    private func upgradeRequest(_ wsi: OpaquePointer) -> UpgradeRequest {
        let path = header(wsi, WSI_TOKEN_GET_URI) ?? ""
        let echo = gateway.configuration.echoEndpoint && path == "/echo"
        var room: RoomName?
        var relay = false
        if path.hasPrefix("/rooms/") { room = RoomName(String(path.dropFirst("/rooms/".count))) }
        if path.hasPrefix("/relay/") {
            room = RoomName(String(path.dropFirst("/relay/".count)))
            relay = true
        }
        var address = [CChar](repeating: 0, count: 128)
        let peer = lws_get_peer_simple(wsi, &address, address.count).map { String(cString: $0) } ?? "unknown"
        let front = gateway.configuration.frontSecret == nil ? nil : customHeader(wsi, Gateway.frontHeader)
        var request = UpgradeRequest(
            room: room, echo: echo, relay: relay,
            name: argument(wsi, "name"), resume: argument(wsi, "resume"),
            player: Self.isOn(argument(wsi, "player")) ?? false,
            join: Self.isOn(argument(wsi, "join")) ?? true,
            owner: argument(wsi, "owner"), device: argument(wsi, "device"),
            invite: argument(wsi, "invite"), password: argument(wsi, "password"),
            token: argument(wsi, "token") ?? Self.bearer(header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION)),
            create: argument(wsi, "create"),
            origin: header(wsi, WSI_TOKEN_ORIGIN), hostHeader: header(wsi, WSI_TOKEN_HOST),
            address: gateway.clientAddress(peer: peer, forwardedFor: header(wsi, WSI_TOKEN_X_FORWARDED_FOR), front: front))
        request.fromFront = gateway.provesFront(peer: peer, front: front)
        request.software = argument(wsi, "software")
        if relay { request.relayProof = customHeader(wsi, RelayProof.header) }
        return request
    }

    /// A header libwebsockets has no token for, by name.
    private func customHeader(_ wsi: OpaquePointer, _ name: String) -> String? {
        let key = name.lowercased() + ":"
        let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.utf8.count)))
        guard length > 0, length < 4096 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, Int32(key.utf8.count)) >= 0 else { return nil }
        return buffer.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } }
    }

    /// The token of an `Authorization: Bearer <token>` header.
    static func bearer(_ authorization: String?) -> String? {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return nil }
        let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// A query flag (`player`, `join`): the one boolean grammar of settings
    /// (`SettingValue.boolean`), a bare `player=` meaning on; nil when absent
    /// or not a boolean.
    static func isOn(_ value: String?) -> Bool? {
        guard let value else { return nil }
        return value.isEmpty ? true : try? SettingValue.boolean(value)
    }

    private func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length < 4096 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return buffer.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } }
    }

    private func argument(_ wsi: OpaquePointer, _ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 1024)
        guard let value = lws_get_urlarg_by_name(wsi, name + "=", &buffer, Int32(buffer.count)) else { return nil }
        return String(cString: value)
    }
}
