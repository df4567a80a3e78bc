import ArgumentParser
import CowatchCore
import CowatchGateway
import Dispatch
import Foundation
import Logging

/// `cowatch serve`: the server. Stops gracefully on SIGTERM and SIGINT.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Cowatch server: rooms over WebSocket, /healthz and /metrics."
    )

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Flag(help: "Listen on every address of this machine (same as --host 0.0.0.0).")
    var allInterfaces = false

    @Option(help: "TCP port for HTTP and WebSocket (0 picks a free one).")
    var port = 7480

    @Option(help: "Largest client message in bytes (larger closes with 1009).")
    var maxMessageBytes = 8 * 1024

    @Option(help: "Rooms the server holds at once.")
    var maxRooms = 10_000

    @Option(help: "Members per room.")
    var maxMembers = 1_000

    @Option(help: "Open connections per client IP address.")
    var maxConnectionsPerAddress = 64

    @Option(help: "Commands each connection may send per second.")
    var commandsPerSecond = 20.0

    @Option(help: "Commands a connection may send in a burst.")
    var commandBurst = 40.0

    @Option(help: "Frames queued for one connection before it is sent the latest state instead.")
    var outboxLimit = 256

    @Option(help: "Seconds a connection may stay too slow before it is closed (1008).")
    var stuckTimeout = 10.0

    @Option(help: "Seconds between pings to each connection.")
    var pingInterval = 10.0

    @Option(help: "Seconds of silence after which a connection is dropped.")
    var idleTimeout = 35.0

    @Option(help: "Seconds a disconnected member can come back with its resume token.")
    var resumeGrace = 60.0

    @Flag(help: "Serve /echo, a plain WebSocket echo for the conformance suite.")
    var echo = false

    @Flag(help: "Offer permessage-deflate compression (costs CPU and memory per connection).")
    var permessageDeflate = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    func run() throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { LogfmtHandler(label: $0, level: level) }
        let logger = Logger(label: "cowatch.serve")

        var room = RoomConfiguration()
        room.maximumMembers = maxMembers
        room.resumeGrace = ServerInterval(seconds: resumeGrace)
        let configuration = GatewayConfiguration(
            host: allInterfaces ? "0.0.0.0" : host, port: port,
            maximumMessageBytes: maxMessageBytes, maximumRooms: maxRooms,
            maximumConnectionsPerAddress: maxConnectionsPerAddress,
            commandsPerSecond: commandsPerSecond, commandBurst: commandBurst,
            outboxLimit: outboxLimit, stuckTimeoutSeconds: stuckTimeout,
            pingIntervalSeconds: pingInterval, idleTimeoutSeconds: idleTimeout,
            echoEndpoint: echo, permessageDeflate: permessageDeflate, room: room)

        let gateway = Gateway(configuration: configuration, logger: Logger(label: "cowatch.gateway"))
        let boundPort: Int
        do {
            boundPort = try gateway.start()
        } catch {
            logger.critical("could not start", metadata: ["error": "\(error)"])
            throw ExitCode.failure
        }
        logger.notice("rooms are kept in memory: they are lost when the server stops")
        let banner = "cowatch: serving on http://\(configuration.host):\(boundPort)/ (WebSocket ws://\(configuration.host):\(boundPort)/rooms/<room>); Ctrl-C stops\n"
        FileHandle.standardOutput.write(Data(banner.utf8))
        let signals = SignalWatcher { signal in
            logger.info("signal received, shutting down", metadata: ["signal": "\(signal)"])
            gateway.stop()
        }
        gateway.waitUntilStopped()
        _ = signals
    }
}

/// Turns SIGTERM and SIGINT into a callback on a queue instead of killing the process.
final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "cowatch.signals")
        sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }
}
