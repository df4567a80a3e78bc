import CowatchCore
/// The server's counters, gauges and latency histogram, rendered in the
/// Prometheus text exposition format at `/metrics`. Touched only on the service
/// thread, so plain integers suffice.
struct GatewayMetrics {
    var connectionsOpened = 0
    var commands: [String: Int] = [:]
    var errors: [String: Int] = [:]
    var closes: [CloseKey: Int] = [:]
    var outboxDrops = 0
    var outboxResyncs = 0
    /// Lines refused because their connection held `max-held-lines` already.
    var heldLinesRefused = 0
    var httpRequests: [String: Int] = [:]
    /// Plain HTTP requests answered with a refusal, by status.
    var httpRefusals: [UInt32: Int] = [:]
    var refusedConnections: [String: Int] = [:]
    var broadcasts = 0
    var deliveries = 0
    /// `send()`-level writes: a write may carry several queued frames.
    var writes = 0
    /// Flushes whose writes were shared with the send threads (`SendCrew`), the
    /// writes in them, and how many of those the send threads made rather than
    /// the service thread.
    var sharedFlushes = 0
    var sharedWrites = 0
    var sendThreadWrites = 0
    /// Shared writes the socket did not take whole, finished by libwebsockets.
    var sharedWritesCut = 0
    var readingPauses = 0
    /// Connections dropped without a close frame, by cause.
    var dropped: [String: Int] = [:]
    /// Our close frame went out and the peer never answered it.
    var closeRepliesMissing = 0
    /// Empty rooms forgotten at their expiry.
    var roomsExpired = 0
    var unusedRoomsGivenUp = 0
    var untrustedForwarding = 0
    var chatBytesDropped = 0
    /// Voice (`Voice/`): seats asked of the media server, seats lost or refused
    /// by it, and what it holds now.
    var voiceJoins = 0
    var voiceFailures = 0
    var voiceRooms = 0
    var voiceSeats = 0
    var voiceLinkUp = false
    var fanOut = Histogram(bounds: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1])
    var roundTrip = Histogram(bounds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1])
    /// One housekeeping pass over a slice of the connections' deadlines (pings,
    /// timeouts): the loop does nothing else meanwhile, so it grows with the
    /// connections held.
    var connectionPass = Histogram(bounds: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1])
    /// Shared links looked at, by verdict (media, not-media, unchecked, busy).
    var mediaChecks: [String: Int] = [:]
    var mediaCheckTime = Histogram(bounds: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])

    struct CloseKey: Hashable {
        /// The close code, or `unattributed` when neither side's close frame was seen
        /// (a dropped connection, or a framing or UTF-8 violation that libwebsockets
        /// closed by itself with 1002 or 1007).
        var code: String
        /// `server` or `client`.
        var initiator: String
    }

    struct Histogram {
        /// Upper bounds in seconds.
        let bounds: [Double]
        var counts: [Int]
        var sum = 0.0
        var count = 0

        init(bounds: [Double]) {
            self.bounds = bounds
            self.counts = Array(repeating: 0, count: bounds.count)
        }

        mutating func observe(seconds: Double) {
            sum += seconds
            count += 1
            if let index = bounds.firstIndex(where: { seconds <= $0 }) { counts[index] += 1 }
        }
    }

    struct Gauges {
        var connections: Int
        var rooms: Int
        var members: Int
        var timers: Int
        var storeFailures: Int
        var storePending: Int
    }

    func render(_ gauges: Gauges) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func labelled(_ name: String, _ label: String, _ values: [String: Int]) {
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                out += "\(name){\(label)=\"\(key)\"} \(value)\n"
            }
        }
        func single(_ name: String, _ type: String, _ help: String, _ value: Int) {
            family(name, type, help)
            out += "\(name) \(value)\n"
        }
        family("cowatch_build_info", "gauge", "This server's version (always 1).")
        out += "cowatch_build_info{version=\"\(CowatchVersion.current)\"} 1\n"
        single("cowatch_connections", "gauge", "Open WebSocket connections.", gauges.connections)
        single("cowatch_rooms", "gauge", "Rooms in memory, empty ones kept until their expiry included.", gauges.rooms)
        single("cowatch_rooms_expired_total", "counter", "Empty rooms forgotten at their expiry.", roomsExpired)
        single("cowatch_untrusted_forwarding_peers", "gauge",
               "Peers (up to 64) that sent X-Forwarded-For without being in trusted-proxies.", untrustedForwarding)
        single("cowatch_unused_rooms_given_up_total", "counter", "Empty rooms nobody used, forgotten to make room for a new one.",
               unusedRoomsGivenUp)
        single("cowatch_chat_bytes_dropped_total", "counter", "Chat bytes dropped to keep all rooms under chat-total-bytes.",
               chatBytesDropped)
        single("cowatch_members", "gauge", "Connected room members.", gauges.members)
        single("cowatch_voice_link_up", "gauge", "1 while the media server for voice is reached and its session stands.",
               voiceLinkUp ? 1 : 0)
        single("cowatch_voice_rooms", "gauge", "Rooms with a voice room on the media server.", voiceRooms)
        single("cowatch_voice_seats", "gauge", "Members seated, or being seated, in voice.", voiceSeats)
        single("cowatch_voice_joins_total", "counter", "Offers sent on to the media server.", voiceJoins)
        single("cowatch_voice_failures_total", "counter", "Seats the media server refused or lost.", voiceFailures)
        single("cowatch_timers", "gauge", "Armed room timers.", gauges.timers)
        single("cowatch_store_failed_writes_total", "counter", "Store write batches that failed and were rolled back.", gauges.storeFailures)
        single("cowatch_store_pending_changes", "gauge", "Changes queued for the store and not yet written (a batch being written counts as one).",
               gauges.storePending)
        single("cowatch_connections_opened_total", "counter", "WebSocket connections accepted.", connectionsOpened)
        family("cowatch_connections_refused_total", "counter", "Connections refused, by reason.")
        labelled("cowatch_connections_refused_total", "reason", refusedConnections)
        family("cowatch_commands_total", "counter", "Lines handled, by command (chat for chat lines).")
        labelled("cowatch_commands_total", "command", commands)
        family("cowatch_errors_total", "counter", "Error events sent, by code.")
        labelled("cowatch_errors_total", "code", errors)
        family("cowatch_closes_total", "counter", "WebSocket closes, by code and by who closed; code unattributed: no close frame seen from either side (dropped, or closed by libwebsockets itself for a framing or UTF-8 violation, 1002 or 1007).")
        for (key, value) in closes.sorted(by: { ($0.key.code, $0.key.initiator) < ($1.key.code, $1.key.initiator) }) {
            out += "cowatch_closes_total{code=\"\(key.code)\",initiator=\"\(key.initiator)\"} \(value)\n"
        }
        single("cowatch_broadcasts_total", "counter", "Events broadcast to a room.", broadcasts)
        single("cowatch_deliveries_total", "counter", "Frames written to connections.", deliveries)
        single("cowatch_writes_total", "counter", "Socket writes; one write carries every frame queued for a member that fits.", writes)
        single("cowatch_shared_flushes_total", "counter", "Flushes of send-threads-from writes or more, shared with the send threads.", sharedFlushes)
        single("cowatch_shared_writes_total", "counter", "Socket writes made in shared flushes, by any thread.", sharedWrites)
        single("cowatch_send_thread_writes_total", "counter", "Socket writes of shared flushes made by the send threads rather than the service thread.", sendThreadWrites)
        single("cowatch_shared_writes_cut_total", "counter", "Shared writes a socket did not take whole; the library buffers the rest.", sharedWritesCut)
        single("cowatch_reading_paused_total", "counter", "Times reading from a connection paused because it left its events unread.", readingPauses)
        family("cowatch_dropped_without_close_total", "counter", "Connections dropped without a close frame, by cause (took-nothing: what was queued, and the close frame, could not be sent before the deadline).")
        labelled("cowatch_dropped_without_close_total", "cause", dropped)
        single("cowatch_close_replies_missing_total", "counter", "Server close frames the peer never answered within the close timeout (closed anyway).", closeRepliesMissing)
        single("cowatch_outbox_drops_total", "counter", "Frames dropped from slow connections' outboxes.", outboxDrops)
        single("cowatch_outbox_resyncs_total", "counter", "Times a slow connection was sent the latest state instead of its backlog.", outboxResyncs)
        single("cowatch_held_lines_refused_total", "counter",
               "Lines refused because their connection already held max-held-lines while a link was checked or its room placed.",
               heldLinesRefused)
        family("cowatch_http_requests_total", "counter", "Plain HTTP requests, by route.")
        labelled("cowatch_http_requests_total", "route", httpRequests)
        family("cowatch_http_refusals_total", "counter", "Plain HTTP requests refused before any route (bad framing, Host, method, path), by status.")
        labelled("cowatch_http_refusals_total", "status", Dictionary(uniqueKeysWithValues: httpRefusals.map { ("\($0.key)", $0.value) }))
        Self.histogram("cowatch_broadcast_fanout_seconds",
                  "Time from a broadcast until its frame was written to the last recipient.", fanOut, into: &out)
        Self.histogram("cowatch_round_trip_seconds", "WebSocket ping round trips.", roundTrip, into: &out)
        Self.histogram("cowatch_connection_pass_seconds",
                       "One housekeeping pass over a slice of the connections' deadlines and pings (the loop waits for it).", connectionPass, into: &out)
        family("cowatch_media_checks_total", "counter", "Links shared with /watch or /queue that were looked at, by verdict.")
        labelled("cowatch_media_checks_total", "verdict", mediaChecks)
        Self.histogram("cowatch_media_check_seconds", "Time to check a shared link.", mediaCheckTime, into: &out)
        return out
    }

    /// One histogram in the Prometheus text format, appended to `out`.
    static func histogram(_ name: String, _ help: String, _ histogram: Histogram, into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        var cumulative = 0
        for (bound, count) in zip(histogram.bounds, histogram.counts) {
            cumulative += count
            out += "\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        out += "\(name)_bucket{le=\"+Inf\"} \(histogram.count)\n"
        out += "\(name)_sum \(histogram.sum)\n"
        out += "\(name)_count \(histogram.count)\n"
    }
}
