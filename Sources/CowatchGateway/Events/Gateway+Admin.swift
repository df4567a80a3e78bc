import CowatchConfig
import CowatchCore
import CowatchTime
import Foundation
import SlashCommands

/// One request to the admin API, read off the HTTP request by the LWS layer.
struct AdminRequest {
    var post: Bool
    var path: String
    /// From `Authorization: Bearer`.
    var token: String?
    var address: String
    /// The request's query parameters, by name.
    var arguments: (String) -> String?
}

extension Gateway {
    /// The admin API (docs/security.md, "The operator's controls"): off without
    /// an admin token; every request carries it as `Authorization: Bearer`.
    func adminAnswer(_ request: AdminRequest, id: UInt64) -> HTTPAnswer {
        metrics.httpRequests["admin", default: 0] += 1
        guard let expected = configuration.adminToken else { return .respond(Self.json(404, ["error": "the admin API is off"])) }
        let right = request.token.map { SecretDigest.equal(SecretDigest.hex($0), SecretDigest.hex(expected)) } ?? false
        switch state.adminRequested(from: request.address, rightToken: right, at: eventTime.server) {
        case .tooManyWrongTokens:
            return .respond(Self.json(429, ["error": "too many wrong admin tokens from your address; wait a minute"]))
        case .wrongToken:
            metrics.refusedConnections["admin-token", default: 0] += 1
            return .respond(Self.json(401, ["error": "the admin API needs the operator's token: Authorization: Bearer <token> "
                                                 + "(cowatch admin reads it from --token-file or COWATCH_ADMIN_TOKEN)"]))
        case .open:
            break
        }
        // A cluster's rooms are listed from the leases in the database (which node
        // holds each), with this node's own in full: answered once read.
        if cluster != nil, !request.post, request.path == "/admin/rooms" {
            emit(.listClusterRooms(httpRequest: id))
            return .later(timeoutSeconds: 10)
        }
        return .respond(adminResponse(request))
    }

    /// On the service thread: the cluster's leases read for `GET /admin/rooms`.
    func clusterRoomsListed(_ id: UInt64, _ found: [(room: String, node: String)]?) {
        let node = cluster?.settings.node ?? ""
        guard let found else {
            emit(.answer(httpRequest: id, Self.json(503, ["error": "the database did not answer; this node's rooms alone: "
                                                             + rooms.keys.map(\.rawValue).sorted().joined(separator: ", ")])))
            return
        }
        let here = rooms.values.sorted { $0.room.name.rawValue < $1.room.name.rawValue }.map { entry in
            describe(entry).merging(["node": node]) { $1 }
        }
        let held = Set(rooms.keys.map(\.rawValue))
        let elsewhere = found.filter { !held.contains($0.room) }
            .map { ["name": $0.room, "node": $0.node] as [String: Any] }
        emit(.answer(httpRequest: id, Self.json(200, ["node": node, "rooms": here, "elsewhere": elsewhere])))
    }

    /// One admin request, its token already checked.
    func adminResponse(_ request: AdminRequest) -> HTTPResponse {
        let now = eventTime.server
        let rest = Array(request.path.split(separator: "/").map(String.init).dropFirst())  // after "admin"
        let roomAction = rest.count == 3 && rest[0] == "rooms" ? (name: rest[1], action: rest[2]) : nil
        switch (request.post, rest.joined(separator: "/")) {
        case (false, "rooms"):
            return Self.json(200, ["rooms": rooms.values.sorted { $0.room.name.rawValue < $1.room.name.rawValue }.map(describe)])
        case (true, _) where roomAction?.action == "close":
            let name = roomAction?.name ?? ""
            guard let room = RoomName(name), let entry = rooms[room] else { return Self.json(404, ["error": "no room \(name)"]) }
            let members = entry.connections.count
            run(entry.room.closedByOperator(now: now), in: entry)
            logger.notice("room closed by the operator", metadata: ["room": "\(room)", "members": "\(members)"])
            return Self.json(200, ["closed": name, "members": members])
        case (true, _) where roomAction?.action == "tokens":
            let name = roomAction?.name ?? ""
            guard let room = RoomName(name), let entry = rooms[room] else { return Self.json(404, ["error": "no room \(name)"]) }
            guard let botName = request.arguments("name").flatMap({ DisplayName($0) }),
                  let scope = TokenScope(rawValue: request.arguments("scope") ?? "chat") else {
                return Self.json(400, ["error": "name=<bot name> and scope=read|chat|control"])
            }
            let (token, actions) = entry.room.issueToken(name: botName, scope: scope, secret: Self.newToken() + Self.newToken(), now: now)
            let number = entry.room.protection.tokens.last?.number ?? 0
            run(actions, in: entry)
            return Self.json(200, ["room": name, "name": botName.text, "scope": scope.rawValue, "token": token, "number": number])
        case (true, _) where roomAction?.action == "revoke-token":
            let name = roomAction?.name ?? ""
            guard let room = RoomName(name), let entry = rooms[room] else { return Self.json(404, ["error": "no room \(name)"]) }
            guard let number = request.arguments("number").flatMap({ Int64($0) }) else {
                return Self.json(400, ["error": "number=<the token's number in /tokens>"])
            }
            let (found, actions) = entry.room.tokenRevokedByOperator(number, now: now)
            guard found else { return Self.json(404, ["error": "no token #\(number) in \(name)"]) }
            run(actions, in: entry)
            return Self.json(200, ["room": name, "revoked": number])
        case (true, "bans"):
            guard let given = request.arguments("address"), !given.isEmpty else {
                return Self.json(400, ["error": "address=<client address> [minutes=<n>]"])
            }
            // One client's address, written as the server writes the addresses it
            // compares: a range or a name would ban nobody, or (0.0.0.0/0) read
            // as if it banned everyone.
            guard let address = Self.canonicalAddress(given) else {
                return Self.json(400, ["error": "address= takes one IPv4 or IPv6 address (no range, no name), not \(given.prefix(100))"])
            }
            var minutes: Double?
            if let text = request.arguments("minutes") {
                guard let value = Double(text), value.isFinite, value > 0, value <= 5_256_000 else {
                    return Self.json(400, ["error": "minutes= takes a number of minutes from 0 to 5256000 (ten years); leave it out for a ban without end"])
                }
                minutes = value
            }
            run(gateway: state.operatorBans(address, until: minutes.map { now.advanced(by: ServerInterval(seconds: $0 * 60)) }))
            return Self.json(200, ["banned": address, "closed": closeOperatorBanned(address)])
        case (true, "bans/lift"):
            guard let given = request.arguments("address") else { return Self.json(400, ["error": "address=<client address>"]) }
            let address = Self.canonicalAddress(given) ?? given
            let lifting = state.operatorLifts(address)
            let lifted = !lifting.isEmpty
            run(gateway: lifting)
            return Self.json(lifted ? 200 : 404, lifted ? ["lifted": address] : ["error": "\(address) is not banned"])
        case (false, "bans"):
            let bans = state.operatorState.bannedAddresses.sorted { $0.key < $1.key }.map { address, until -> [String: Any] in
                ["address": address, "until": until.map { $0.milliseconds } as Any]
            }
            return Self.json(200, ["bans": bans])
        case (true, "drain"):
            // The one boolean grammar of settings (`SettingValue.boolean`); without on=, on.
            let given = request.arguments("on")
            guard let on = given.map({ try? SettingValue.boolean($0) }) ?? true else {
                return Self.json(400, ["error": "on= takes true or false (1, on, yes / 0, off, no), not \((given ?? "").prefix(20))"])
            }
            run(gateway: state.operatorDrains(on))
            return Self.json(200, ["draining": state.operatorState.draining].merging(nodeField) { $1 })
        case (true, "creation-tokens"):
            let uses = request.arguments("uses").flatMap(Int.init) ?? 1
            guard (1...100_000).contains(uses) else { return Self.json(400, ["error": "uses=1..100000"]) }
            let token = Self.newToken() + Self.newToken()
            run(gateway: state.operatorIssuesCreationToken(digest: SecretDigest.hex(token), uses: uses))
            return Self.json(200, ["token": token, "uses": uses])
        default:
            return Self.json(404, ["error": "no such admin request: \(request.post ? "POST" : "GET") \(request.path)"])
        }
    }

    /// In a cluster, which node answered (a drain is that node's).
    private var nodeField: [String: Any] {
        cluster.map { ["node": $0.settings.node] } ?? [:]
    }

    private func describe(_ entry: RoomEntry) -> [String: Any] {
        let room = entry.room
        let playback = room.state.playback
        return [
            "name": room.name.rawValue, "members": room.members.count, "connected": entry.connections.count,
            "status": playback.status.rawValue, "title": room.state.session?.activity.title as Any,
            "owned": room.protection.ownerKeyDigest != nil, "locked": room.state.policy.locked,
            "emptySince": room.protection.emptySince.map { $0.milliseconds } as Any, "bans": room.protection.bans.count,
        ]
    }

    static func json(_ status: UInt32, _ object: [String: Any]) -> HTTPResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return HTTPResponse(status: status, contentType: "application/json", bytes: Array(data) + [10])
    }
}

extension Gateway {
    /// Closes this node's connections from an address the operator banned (here,
    /// or on another node of the cluster); how many.
    @discardableResult
    func closeOperatorBanned(_ address: String) -> Int {
        var closed = 0
        for connection in Array(connections.values) + Array(carried.values) where connection.address == address && !connection.isGone {
            close(connection, code: 4003, reason: "this address may not connect to this server")
            closed += 1
        }
        if closed > 0 { logger.notice("connections of a banned address closed", metadata: ["address": "\(address)", "closed": "\(closed)"]) }
        return closed
    }

    /// `text` as one IPv4 or IPv6 address in the form libwebsockets reports peers
    /// in (`inet_ntop`'s), or nil when it is not one address.
    static func canonicalAddress(_ text: String) -> String? {
        for family in [AF_INET, AF_INET6] {
            var bytes = [UInt8](repeating: 0, count: 16)
            guard inet_pton(family, text, &bytes) == 1 else { continue }
            var written = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(family, bytes, &written, socklen_t(written.count)) != nil else { return nil }
            let address = written.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } ?? "" }
            // An IPv4 client of a dual-stack socket is reported as its IPv4 address.
            if family == AF_INET6, address.hasPrefix("::ffff:"), address.contains(".") { return String(address.dropFirst(7)) }
            return address
        }
        return nil
    }
}
