#if canImport(Glibc)
import CowatchConnection
import Glibc
#endif
import CLibWebSockets
import CowatchCore
import CowatchTime
import Foundation
import Logging

/// libwebsockets' diagnostics, routed into swift-log.
private let libraryLogger = Logger(label: "cowatch.libwebsockets")

/// The libwebsockets context of a gateway: creation, the callback every event
/// arrives through, timers, and teardown. Everything here runs on the service
/// thread except `wake()`.
final class LWSServer {
    /// Protocol ids, as `lws_protocols.id`: what a member's frames are encoded in.
    enum ProtocolID: UInt32 {
        case text = 1
        case json = 2
        /// Another node's shared relay link (`RelayWire`).
        case relay = 3
    }

    unowned let gateway: Gateway
    private(set) var context: OpaquePointer?
    /// The event loop: libev on epoll. libwebsockets' own loop is poll(2) over
    /// every descriptor, so each wake-up cost time in proportion to the
    /// connections held, quiet or not; with epoll a wake-up costs what is ready.
    private var loop: OpaquePointer?
    private let foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    let port: Int
    private var destroying = false

    // What lws keeps pointers to: alive until the context is destroyed.
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let extensions: UnsafeMutablePointer<lws_extension>
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    private let roomTimer: UnsafeMutablePointer<cw_timer>
    private let housekeepingTimer: UnsafeMutablePointer<cw_timer>
    /// All zero: no libwebsockets keepalive. The gateway pings and times out idle
    /// connections itself; lws's own timer re-sorts a list of every connection on
    /// each pong, which cost most of an idle server's CPU at 20,000 connections.
    private let noKeepalive: UnsafeMutablePointer<lws_retry_bo_t>
    /// Where several queued frames are put together for one write.
    let writeBuffer: UnsafeMutableRawPointer
    static let writeBudget = 64 * 1024
    /// Each open connection's libwebsockets socket, by connection id.
    var sockets: [UInt64: OpaquePointer] = [:]
    /// Writes asked for outside a writeable callback, made by `flushWrites`.
    private var requestedWrites: [Connection] = []
    private var flushing: [Connection] = []
    /// When the writes asked for are made (`flush-delay`).
    private var gathering: WriteGathering
    /// The threads a big flush's writes are shared with (`sendThreads`), if any.
    let sendCrew: SendCrew?
    /// The writes of the flush being shared, in the crew's order.
    private var shared: [(connection: Connection, wsi: OpaquePointer, frames: [OutboundFrame])] = []
    /// False inside a writeable callback and while flushing: requests then go to
    /// the library, which calls back once the socket can take more.
    var writingDirectly = true
    /// The connection whose received data is being handled, if any.
    var receiving: UInt64?
    /// Each accepted socket's peer address, by its libwebsockets handle, for
    /// `SocketLimits`; the address of the socket being accepted until its handle exists.
    var socketAddresses: [OpaquePointer: String] = [:]
    var acceptedAddress: String?
    /// An upgrade admitted while it is confirmed, for the choice of its protocol
    /// that follows at once (`LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION`).
    var admittedUpgrade: (wsi: OpaquePointer, request: UpgradeRequest)?
    /// Plain HTTP requests answered later, by their sockets.
    var deferred = DeferredAnswers<OpaquePointer>()

    init(gateway: Gateway) throws {
        self.gateway = gateway
        let configuration = gateway.configuration
        // A loop of our own (a "foreign" one to libwebsockets), so that it installs
        // no signal handler and the service thread decides when to stop. Made
        // first: failing here leaves nothing to free.
        guard let loop = ev_loop_new(UInt32(EVFLAG_AUTO) | UInt32(EVFLAG_NOSIGMASK)) else {
            throw Gateway.StartError.contextFailed(.other(detail: "libev could not make an event loop"))
        }
        let descriptors = Self.raiseFileLimit()
        let sockets = SocketLimits.total(configured: configuration.maximumConnections, descriptorLimit: descriptors)
        if let note = SocketLimits.startupNote(configured: configuration.maximumConnections,
                                               isDefault: configuration.maximumConnections == GatewayConfiguration.defaultMaximumConnections,
                                               descriptorLimit: descriptors) {
            gateway.logger.log(level: note.warning ? .warning : .info, "\(note.message)",
                               metadata: ["max-connections": "\(configuration.maximumConnections)", "using": "\(sockets)",
                                          "descriptor-limit": "\(descriptors)"])
        }
        gateway.listening(sockets: sockets)
        lws_set_log_level(LLL_ERR | LLL_WARN) { level, line in
            guard let line else { return }
            var text = String(cString: line)
            while text.last?.isNewline == true { text.removeLast() }
            if level & LLL_ERR != 0 { LWSStartupLines.record(text) }
            libraryLogger.log(level: level & LLL_ERR != 0 ? .error : .warning, "\(text)")
        }

        var strings: [UnsafeMutablePointer<CChar>] = []
        func keep(_ text: String) -> UnsafeMutablePointer<CChar>? {
            guard let copy = strdup(text) else { return nil }
            strings.append(copy)
            return copy
        }

        // Text first: lws gives the first protocol to clients that ask for none.
        protocols = .allocate(capacity: 4)
        protocols.initialize(repeating: lws_protocols(), count: 4)
        let named = [("cowatch.v1.text", ProtocolID.text), ("cowatch.v1.json", ProtocolID.json), (relaySubprotocol, ProtocolID.relay)]
        for (index, (name, id)) in named.enumerated() {
            protocols[index].name = UnsafePointer(keep(name))
            protocols[index].callback = lwsServerCallback
            protocols[index].per_session_data_size = MemoryLayout<UInt64>.size
            // lws allocates this per connection; the default (its 64 KiB service
            // buffer) would dwarf everything else an idle member costs. Longer
            // messages arrive in several pieces and are reassembled.
            protocols[index].rx_buffer_size = 4096
            // Without this, sends would be cut to the receive buffer's size too.
            protocols[index].tx_packet_size = 64 * 1024
            protocols[index].id = id.rawValue
        }

        extensions = .allocate(capacity: 2)
        extensions.initialize(repeating: lws_extension(), count: 2)
        extensions[0].name = UnsafePointer(keep("permessage-deflate"))
        extensions[0].callback = lws_extension_callback_pm_deflate
        extensions[0].client_offer = UnsafePointer(keep("permessage-deflate; client_no_context_takeover; client_max_window_bits"))

        noKeepalive = .allocate(capacity: 1)
        noKeepalive.initialize(to: lws_retry_bo_t())
        writeBuffer = .allocate(byteCount: Self.writeBudget, alignment: 16)
        gathering = WriteGathering(delay: MonotonicDuration(configuration.flushDelay))

        roomTimer = .allocate(capacity: 1)
        roomTimer.initialize(to: cw_timer())
        housekeepingTimer = .allocate(capacity: 1)
        housekeepingTimer.initialize(to: cw_timer())

        foreignLoops = .allocate(capacity: 1)
        foreignLoops.initialize(to: UnsafeMutableRawPointer(loop))

        var info = lws_context_creation_info()
        info.port = Int32(configuration.port)
        info.iface = UnsafePointer(keep(configuration.host))
        info.protocols = UnsafePointer(protocols)
        if configuration.permessageDeflate { info.extensions = UnsafePointer(extensions) }
        // No LWS_SERVER_OPTION_VALIDATE_UTF8: the connection's state checks UTF-8
        // itself (`UTF8Validator`), so that a 1007 close, like every other, first
        // flushes what was queued and is counted like the rest.
        info.options = UInt64(LWS_SERVER_OPTION_LIBEV)
        info.foreign_loops = foreignLoops
        // Given an IPv4 address, libwebsockets 4.1 still binds an IPv6 socket that
        // listens on every address; keep it to exactly the address asked for.
        if Self.isIPv4(configuration.host) { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        info.user = Unmanaged.passUnretained(gateway).toOpaque()
        info.retry_and_idle_policy = UnsafePointer(noKeepalive)
        info.max_http_header_pool = 512
        // How long a request may take to arrive, headers and all, and how long a
        // plain HTTP connection may sit idle between requests.
        info.timeout_secs = 10
        info.timeout_secs_ah_idle = UInt32(configuration.httpRequestTimeout.components.seconds)
        info.keepalive_timeout = Int32(configuration.httpRequestTimeout.components.seconds)
        info.pt_serv_buf_size = 64 * 1024
        info.ka_time = 0
        cStrings = strings
        let startupLines = LWSStartupLines.begin()
        let created = lws_create_context(&info)
        let errorLines = LWSStartupLines.finish(startupLines)
        guard let context = created else {
            for string in strings { free(string) }
            protocols.deallocate()
            extensions.deallocate()
            roomTimer.deallocate()
            housekeepingTimer.deallocate()
            noKeepalive.deallocate()
            writeBuffer.deallocate()
            foreignLoops.deallocate()
            ev_loop_destroy(loop)
            let cause = LWSStartupFailure.classify(errorLines: errorLines, host: configuration.host, port: configuration.port)
            gateway.logger.error("the server could not start", metadata: ["cause": "\(cause)"])
            throw Gateway.StartError.contextFailed(cause)
        }
        self.context = context
        // Started once nothing can fail, so that no thread outlives a server that did not start.
        let sendThreads = configuration.sendThreads ?? SendThreads.automatic(cores: ProcessInfo.processInfo.activeProcessorCount)
        sendCrew = sendThreads > 0 ? SendCrew(threads: sendThreads) : nil
        if configuration.sendThreads == nil {
            gateway.logger.info("send threads chosen by the cores", metadata: ["send-threads": "\(sendThreads)"])
        }
        self.loop = loop
        port = Int(lws_get_vhost_listen_port(lws_get_vhost_by_name(context, "default")))
        let owner = Unmanaged.passUnretained(gateway).toOpaque()
        roomTimer.pointee.owner = owner
        housekeepingTimer.pointee.owner = owner
    }

    /// Waits for the next events and dispatches them, then makes the writes
    /// they asked for. Within a turn of the loop an event's writes wait for the
    /// events after it, up to `flush-delay` (`eventEnded`): when many rooms'
    /// commands arrive together (a hundred rooms' controllers at one instant),
    /// their broadcasts leave as one flush, shared with the send threads, rather
    /// than a hundred small ones.
    func serviceOnce() -> Int32 {
        guard let loop, context != nil else { return -1 }
        gathering.turnBegins()
        ev_run(loop, Int32(EVRUN_ONCE))
        gathering.turnEnds()
        flushWrites()
        return 0
    }

    /// An event was handled: the writes waiting are made now, or at a later
    /// event's end or the turn's (`WriteGathering`).
    func eventEnded() {
        if gathering.flushesAfterEvent(now: gateway.time.monotonic()) { flushWrites() }
    }

    /// Safe from any thread: interrupts the service wait.
    func wake() {
        if let context { lws_cancel_service(context) }
    }

    /// Asks for a write. Outside a writeable callback the write is made directly,
    /// once the current callback's work is done (`flushWrites`): a socket that can
    /// take it gets its bytes without a round through the event loop, which would
    /// cost two epoll_ctl calls per member per broadcast (start and stop watching
    /// for writability). A socket with bytes still buffered waits for the library.
    func requestWrite(_ connection: Connection) {
        guard !destroying else { return }
        if writingDirectly && receiving != connection.id {
            guard !connection.writeRequested else { return }
            connection.writeRequested = true
            if requestedWrites.isEmpty { gathering.asked(at: gateway.eventTime.monotonic) }
            requestedWrites.append(connection)
        } else {
            if let wsi = sockets[connection.id] { lws_callback_on_writable(wsi) }
        }
    }

    /// Makes the writes asked for during a callback, each connection once.
    func flushWrites() {
        guard !requestedWrites.isEmpty, !destroying else { return }
        gathering.flushed()
        writingDirectly = false
        defer { writingDirectly = true }
        swap(&requestedWrites, &flushing)
        if let sendCrew, flushing.count >= gateway.configuration.sendThreadsFrom {
            flushShared(sendCrew)
        } else {
            for connection in flushing {
                connection.writeRequested = false
                guard let wsi = writableSocket(connection) else { continue }
                if writeNext(wsi, connection) < 0 { drop(connection) }
            }
        }
        // What the shared writes decided (more to write, reading resumed) is
        // carried out while this is still the flush (`writeNext` does it for its own).
        gateway.eventEnds()
        flushing.removeAll(keepingCapacity: true)
    }

    /// The connection's socket if a write may be made on it now; one with bytes
    /// still buffered by the library waits for its writeable callback instead.
    private func writableSocket(_ connection: Connection) -> OpaquePointer? {
        guard !connection.isGone, let wsi = sockets[connection.id] else { return nil }
        guard lws_partial_buffered(wsi) == 0 else {
            lws_callback_on_writable(wsi)
            return nil
        }
        return wsi
    }

    /// A flush of many writes (a big room's broadcast), shared with the send
    /// threads: each connection's frames are prepared here and published as they
    /// are ready, every thread sends, and once all are made each connection
    /// learns what was written. What a socket did not take goes through the
    /// library, which buffers it, exactly as a direct write's remainder does.
    private func flushShared(_ crew: SendCrew) {
        crew.reserve(flushing.count)
        crew.begin()
        for connection in flushing {
            connection.writeRequested = false
            guard let wsi = writableSocket(connection) else { continue }
            let write = connection.state.nextWrite(budget: Self.writeBudget, now: gateway.eventTime.monotonic)
            if case .frames(let frames) = write, frames.count <= SendCrew.maximumPieces {
                crew.prepare(shared.count, socket: lws_get_socket_fd(wsi), frames: frames)
                shared.append((connection, wsi, frames))
                if shared.count % crew.chunk == 0 { crew.publish(upTo: shared.count) }
            } else if perform(write, wsi, connection) < 0 {
                drop(connection)
            }
        }
        let madeHere = crew.finish(upTo: shared.count)
        gateway.metrics.sharedFlushes += 1
        gateway.metrics.sharedWrites += shared.count
        gateway.metrics.sendThreadWrites += shared.count - madeHere
        for (index, write) in shared.enumerated() {
            switch crew.outcome(index) {
            case .whole:
                gateway.wrote(write.frames, on: write.connection, stillBuffered: false)
            case .rest(let from):
                gateway.metrics.sharedWritesCut += 1
                let written = writeFrames(write.wsi, write.frames, from: from)
                gateway.wrote(write.frames, on: write.connection, stillBuffered: lws_partial_buffered(write.wsi) != 0)
                if !written { drop(write.connection) }
            case .failed:
                gateway.wrote(write.frames, on: write.connection, stillBuffered: false)
                drop(write.connection)
            }
        }
        shared.removeAll(keepingCapacity: true)
    }

    /// Pauses or resumes reading from the connection's socket (rx flow control);
    /// while paused, what the peer sends waits in the kernel's buffers and then
    /// in the peer's.
    func setReading(_ connection: Connection, paused: Bool) {
        guard !destroying, let wsi = sockets[connection.id] else { return }
        lws_rx_flow_control(wsi, paused ? 0 : 1)
    }

    /// Closes the socket at the next turn of the loop, without a close frame.
    func drop(_ connection: Connection) {
        guard !destroying, let wsi = sockets[connection.id] else { return }
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
    }

    /// Arms the room-timer wake-up for the earliest due timer (server time, ms).
    func armTimers(nextDue: ServerInstant?) {
        guard let context, !destroying else { return }
        guard let nextDue else {
            lws_sul_cancel(&roomTimer.pointee.sul)
            return
        }
        let delay = Swift.max(0, nextDue.interval(since: gateway.eventTime.server).milliseconds) * 1000
        roomTimer.withMemoryRebound(to: lws_sorted_usec_list_t.self, capacity: 1) { sul in
            lws_sul_schedule(context, 0, sul, lwsRoomTimerFired, delay)
        }
    }

    /// Answers a request held by `LWS_CALLBACK_HTTP`, on the socket's next
    /// writeable pass; nothing when the socket has closed meanwhile.
    func answerDeferred(_ id: UInt64, with response: HTTPResponse) {
        guard let wsi = deferred.answer(id, with: response) else { return }
        lws_callback_on_writable(wsi)
    }

    func armHousekeeping(afterMicroseconds delay: Int64) {
        guard let context, !destroying else { return }
        housekeepingTimer.withMemoryRebound(to: lws_sorted_usec_list_t.self, capacity: 1) { sul in
            lws_sul_schedule(context, 0, sul, lwsHousekeepingFired, delay)
        }
    }

    func destroy() {
        destroying = true
        if let context { lws_context_destroy(context) }
        sendCrew?.stop()
        context = nil
        if let loop { ev_loop_destroy(loop) }
        loop = nil
        foreignLoops.deallocate()
        for string in cStrings { free(string) }
        cStrings = []
        protocols.deallocate()
        extensions.deallocate()
        roomTimer.deallocate()
        housekeepingTimer.deallocate()
        noKeepalive.deallocate()
        writeBuffer.deallocate()
    }

    static func isIPv4(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in UInt8(part) != nil }
    }

    /// Each connection is a file descriptor; the default limit of 1,024 would cap
    /// a server far below its configured limits. Returns the limit in force.
    @discardableResult
    static func raiseFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return 1024 }
        let wanted: rlim_t = 1 << 20
        var raised = rlimit(rlim_cur: Swift.max(limit.rlim_cur, wanted), rlim_max: Swift.max(limit.rlim_max, wanted))
        if setrlimit(RLIMIT_NOFILE_VALUE, &raised) != 0 {
            raised = rlimit(rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max)
            _ = setrlimit(RLIMIT_NOFILE_VALUE, &raised)
        }
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return 1024 }
        return Int(clamping: limit.rlim_cur)
    }

    private static var RLIMIT_NOFILE_VALUE: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }

    var isDestroying: Bool { destroying }
}

private func gateway(of wsi: OpaquePointer) -> Gateway? {
    guard let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return nil }
    return Unmanaged<Gateway>.fromOpaque(owner).takeUnretainedValue()
}

/// One of the server's timers went off: an event of its own, handled by `fired`,
/// then the writes it asked for.
private func timerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?, _ fired: (Gateway) -> Void) {
    guard let sul, let owner = cw_timer_owner(sul) else { return }
    let gateway = Unmanaged<Gateway>.fromOpaque(owner).takeUnretainedValue()
    guard let server = gateway.server, !server.isDestroying else { return }
    gateway.eventBegins()
    // A timer's work (a housekeeping pass over many connections) holds back no write already asked for.
    server.flushWrites()
    fired(gateway)
    gateway.eventEnds()
    server.eventEnded()
}

private func lwsRoomTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    timerFired(sul) { $0.fireTimers() }
}

private func lwsHousekeepingFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    timerFired(sul) { $0.housekeeping() }
}

/// Every libwebsockets event of the server arrives here.
private func lwsServerCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                               _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let gateway = gateway(of: wsi), let server = gateway.server, !server.isDestroying else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    gateway.eventBegins()
    let result = server.handle(wsi, reason, user, input, length)
    gateway.eventEnds()
    server.eventEnded()
    return result
}
