import CLibWebSockets
import CowatchCore

extension LWSServer {
    // swiftlint:disable:next cyclomatic_complexity
    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_HTTP:
            let path = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
            return respond(wsi, gateway.httpResponse(for: path))

        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            let request = upgradeRequest(wsi)
            if let refusal = gateway.admit(request) {
                let body = Array(refusal.body.utf8)
                return body.withUnsafeBufferPointer { buffer in
                    cw_http_refuse_upgrade(wsi, refusal.status, Self.reasonPhrase(refusal.status), buffer.baseAddress, buffer.count)
                }
            }
            return 0

        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            guard let user else { return -1 }
            let request = upgradeRequest(wsi)
            if gateway.admit(request) != nil { return -1 }
            let id = gateway.nextConnectionID
            gateway.nextConnectionID += 1
            user.storeBytes(of: id, as: UInt64.self)
            gateway.upgrades[id] = request
            return 0

        case LWS_CALLBACK_ESTABLISHED:
            guard let id = connectionID(user) else { return -1 }
            let protocolID = lws_get_protocol(wsi).map { $0.pointee.id } ?? ProtocolID.text.rawValue
            gateway.established(wsi, id: id, encoding: protocolID == ProtocolID.json.rawValue ? .json : .text)
            return 0

        case LWS_CALLBACK_RECEIVE:
            guard let id = connectionID(user), let connection = gateway.connections[id] else { return -1 }
            return receive(wsi, connection, input, length)

        case LWS_CALLBACK_RECEIVE_PONG:
            guard let id = connectionID(user), let connection = gateway.connections[id] else { return 0 }
            gateway.pong(on: connection)
            return 0

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let id = connectionID(user), let connection = gateway.connections[id] else { return -1 }
            return writeNext(wsi, connection)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            guard let id = connectionID(user), let connection = gateway.connections[id] else { return 0 }
            var code = "1005"
            if let input, length >= 2 {
                let bytes = input.assumingMemoryBound(to: UInt8.self)
                code = String(UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
            }
            connection.closeSeen = true
            gateway.metrics.closes[GatewayMetrics.CloseKey(code: code, initiator: "client"), default: 0] += 1
            return 0

        case LWS_CALLBACK_CLOSED:
            guard let id = connectionID(user) else { return 0 }
            if let connection = gateway.connections[id], connection.pendingClose == nil, !connection.closeSeen {
                gateway.metrics.closes[GatewayMetrics.CloseKey(code: "unattributed", initiator: "unknown"), default: 0] += 1
            }
            gateway.closed(id: id)
            return 0

        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            gateway.serviceWoken()
            return 0

        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            return gateway.stopping ? 1 : 0

        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    static func reasonPhrase(_ status: UInt32) -> String {
        switch status {
        case 400: "Bad Request"
        case 404: "Not Found"
        case 429: "Too Many Requests"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }

    private func connectionID(_ user: UnsafeMutableRawPointer?) -> UInt64? {
        guard let user else { return nil }
        let id = user.load(as: UInt64.self)
        return id == 0 ? nil : id
    }

    private func respond(_ wsi: OpaquePointer, _ response: HTTPResponse) -> Int32 {
        response.body.withUnsafeBufferPointer { buffer in
            cw_http_respond(wsi, response.status, response.contentType, buffer.baseAddress, buffer.count)
        }
    }

    /// Frames of a message arrive in pieces; a whole message is handed on.
    private func receive(_ wsi: OpaquePointer, _ connection: Connection, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        connection.lastHeard = ServerClock.monotonicMicroseconds()
        let binary = lws_frame_is_binary(wsi) != 0
        if binary && connection.encoding != .echo {
            return closeNow(wsi, connection, code: 1003, reason: "binary messages are not accepted; send text")
        }
        if let input, length > 0 {
            connection.incoming.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
        let limit = connection.encoding == .echo ? Self.echoMessageLimit : gateway.configuration.maximumMessageBytes
        if connection.incoming.count > limit {
            return closeNow(wsi, connection, code: 1009, reason: "message over \(limit) bytes")
        }
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let message = connection.incoming
        connection.incoming = []
        if connection.encoding == .echo {
            gateway.echo(message, binary: binary, on: connection)
        } else {
            gateway.received(message: message, on: connection)
        }
        return 0
    }

    /// The conformance suite sends messages of up to 16 MiB to the echo endpoint.
    static let echoMessageLimit = 32 << 20

    private func closeNow(_ wsi: OpaquePointer, _ connection: Connection, code: UInt16, reason: String) -> Int32 {
        let text = Array(Gateway.closeReason(reason).utf8)
        text.withUnsafeBufferPointer { buffer in
            let bytes = UnsafeMutablePointer(mutating: buffer.baseAddress)
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), bytes, buffer.count)
        }
        connection.pendingClose = (code, reason)
        gateway.metrics.closes[GatewayMetrics.CloseKey(code: "\(code)", initiator: "server"), default: 0] += 1
        return -1
    }

    /// One write per writeable callback, as libwebsockets requires; asks again
    /// while frames remain.
    private func writeNext(_ wsi: OpaquePointer, _ connection: Connection) -> Int32 {
        let now = ServerClock.monotonicMicroseconds()
        if connection.outbox.isEmpty, let close = connection.pendingClose {
            let text = Array(close.reason.utf8)
            text.withUnsafeBufferPointer { buffer in
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(close.code)),
                                 UnsafeMutablePointer(mutating: buffer.baseAddress), buffer.count)
            }
            return -1
        }
        guard let frame = connection.outbox.popFirst() else {
            if lws_partial_buffered(wsi) == 0 { gateway.drained(connection) }
            return 0
        }
        let written = frame.write(to: wsi)
        gateway.settle(frame, now: now)
        if frame.kind != .ping { gateway.metrics.deliveries += 1 }
        guard written else { return -1 }
        if !connection.outbox.isEmpty || connection.pendingClose != nil {
            requestWrite(connection)
        } else if lws_partial_buffered(wsi) != 0 {
            // The socket took only part of it; the next callback comes once lws has
            // flushed the rest, and only then has the connection caught up.
            requestWrite(connection)
        } else {
            gateway.drained(connection)
        }
        return 0
    }

    /// The room, the member's name and flags, and the client's address, read
    /// while the upgrade request's headers are still available.
    private func upgradeRequest(_ wsi: OpaquePointer) -> UpgradeRequest {
        let path = header(wsi, WSI_TOKEN_GET_URI) ?? ""
        let echo = gateway.configuration.echoEndpoint && path == "/echo"
        var room: RoomName?
        if path.hasPrefix("/rooms/") { room = RoomName(String(path.dropFirst("/rooms/".count))) }
        var address = [CChar](repeating: 0, count: 128)
        let peer = lws_get_peer_simple(wsi, &address, address.count).map { String(cString: $0) } ?? "unknown"
        return UpgradeRequest(
            room: room, echo: echo,
            name: argument(wsi, "name"), resume: argument(wsi, "resume"),
            player: Self.isOn(argument(wsi, "player")) ?? false,
            join: Self.isOn(argument(wsi, "join")) ?? true,
            address: peer)
    }

    static func isOn(_ value: String?) -> Bool? {
        guard let value else { return nil }
        switch value.lowercased() {
        case "1", "on", "true", "yes", "": return true
        case "0", "off", "false", "no": return false
        default: return nil
        }
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
