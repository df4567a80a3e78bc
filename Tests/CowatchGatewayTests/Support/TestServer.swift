import CowatchClient
import CowatchCore
import CowatchGateway
import CowatchStore
import CowatchTime
import Foundation
import Logging

/// A real server on a free loopback port, and the clients connected to it.
final class TestServer: @unchecked Sendable {
    let gateway: Gateway
    let port: Int
    let clients: WebSocketClients
    /// The gateway's clocks, which a test moves ahead instead of sleeping (`skip`).
    let time = SkippableTime()

    /// `store`: where rooms are brought back from and saved; none by default.
    init(store: (any RoomStore)? = nil, _ configure: (inout GatewayConfiguration) -> Void = { _ in }) throws {
        var configuration = GatewayConfiguration(port: 0)
        configure(&configuration)
        var logger = Logger(label: "cowatch.test")
        logger.logLevel = .critical
        gateway = Gateway(configuration: configuration, store: store, logger: logger, time: time)
        port = try gateway.start()
        clients = try WebSocketClients()
    }

    /// Moves the server's clocks ahead by `seconds` and returns once what came
    /// due meanwhile (graces, expiries, deadlines) has been handled.
    func skip(_ span: MonotonicDuration) throws {
        time.skip(span)
        let handled = DispatchSemaphore(value: 0)
        gateway.timeSkipped { handled.signal() }
        guard handled.wait(timeout: .now() + 20) == .success else { throw TestFailure("the server did not handle the skipped time") }
    }

    /// Waits until `count` members are connected to the server's rooms (its
    /// `cowatch_members` gauge): a close the test made has been seen.
    func waitForMembers(_ count: Int, timeout: Double = 10) throws {
        try poll(until: "the server coming to \(count) connected members", timeout: timeout) {
            (try? get("/metrics").body)?.split(separator: "\n").contains("cowatch_members \(count)") == true
        }
    }

    func address(_ path: String) -> WebSocketAddress {
        WebSocketAddress("ws://127.0.0.1:\(port)\(path)")!
    }

    /// Connects a member and waits for its welcome (and the state after it).
    func join(_ room: String = "lobby", name: String, encoding: ClientEncoding = .json,
              query: String = "", headers: [(name: String, value: String)] = []) throws -> TestMember {
        let member = TestMember(name: name, encoding: encoding)
        let path = "/rooms/\(room)?name=\(name)\(query.isEmpty ? "" : "&" + query)"
        member.connection = clients.connect(address(path), encoding: encoding, handlers: member.handlers, headers: headers)
        guard member.next(where: { $0.contains(encoding == .json ? "\"type\":\"welcome\"" : "* welcome to") }) != nil else {
            throw TestFailure("\(name) was not welcomed: \(member.closeInfo.map { "\($0)" } ?? "no close")")
        }
        return member
    }

    /// Opens a connection without waiting for anything.
    func open(_ path: String, encoding: ClientEncoding = .json) -> TestMember {
        let member = TestMember(name: path, encoding: encoding)
        member.connection = clients.connect(address(path), encoding: encoding, handlers: member.handlers)
        return member
    }

    /// GET over plain HTTP: status and body.
    func get(_ path: String) throws -> (status: Int, body: String) {
        try HTTPGet.fetch(port: port, path: path)
    }

    func stop() {
        clients.shutdown()
        gateway.stop()
        gateway.waitUntilStopped()
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A minimal HTTP/1.1 GET over a socket, so tests need no HTTP client library.
enum HTTPGet {
    static func fetch(port: Int, path: String) throws -> (status: Int, body: String) {
        guard let address = WebSocketAddress("http://127.0.0.1:\(port)\(path)") else {
            throw TestFailure("not a path: \(path)")
        }
        return try PlainHTTP.request("GET", address, bearer: nil, timeout: 5)
    }
}
