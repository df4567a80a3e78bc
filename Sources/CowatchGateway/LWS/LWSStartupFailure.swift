import Foundation

/// Why libwebsockets could not start the server, told from the error lines it
/// logged while its context was being created. Its own answer is only "no
/// context", which used to be reported as an address problem whatever the cause;
/// a missing event-library plugin then sent operators looking at their ports.
public enum LWSStartupFailure: Equatable, Sendable, CustomStringConvertible {
    /// The address could not be bound: in use, or not one of this machine's.
    case address(host: String, port: Int)
    /// The plugin that runs libwebsockets on libev (`evlib_ev`) could not be
    /// loaded: Debian ships it apart from the library, as `libwebsockets-evlib-ev`.
    case eventLibraryPlugin(name: String)
    /// A certificate or key libwebsockets could not load, in its words.
    case tls(detail: String)
    /// Anything else, in libwebsockets' words.
    case other(detail: String)

    /// The failure the error lines name. Without any, the address is the likely
    /// cause (the case libwebsockets' own lines name least reliably).
    public static func classify(errorLines lines: [String], host: String, port: Int) -> LWSStartupFailure {
        let lowered = lines.map { $0.lowercased() }
        if let line = lowered.first(where: { $0.contains("evlib") }) {
            return .eventLibraryPlugin(name: pluginName(in: line) ?? "evlib_ev")
        }
        if lowered.contains(where: { $0.contains("bind") || $0.contains("unable to find interface") }) {
            return .address(host: host, port: port)
        }
        if let index = lowered.firstIndex(where: { line in
            ["ssl", "tls", "cert", "private key"].contains { line.contains($0) }
        }) {
            return .tls(detail: lines[index])
        }
        guard !lines.isEmpty else { return .address(host: host, port: port) }
        return .other(detail: lines.joined(separator: "; "))
    }

    /// `evlib_ev` in "lws_create_context: unable to load evlib plugin evlib_ev".
    private static func pluginName(in line: String) -> String? {
        guard let start = line.range(of: "evlib_") else { return nil }
        let name = line[start.lowerBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return name.count > "evlib_".count ? String(name) : nil
    }

    public var description: String {
        switch self {
        case .address(let host, let port):
            "could not listen on \(host):\(port) (in use, or not an address of this machine?)"
        case .eventLibraryPlugin(let name):
            "libwebsockets could not load its libev plugin (\(name)): install Debian's libwebsockets-evlib-ev"
                + " (deploy/runtime-packages lists every package the server needs)"
        case .tls(let detail):
            "libwebsockets could not set up TLS: \(detail)"
        case .other(let detail):
            "libwebsockets could not start: \(detail)"
        }
    }
}

/// The error lines libwebsockets logs while a context is created, gathered for
/// `LWSStartupFailure`. Its log emitter is a C function that can carry no state,
/// so the lines go through here; starts on several threads at once each get
/// every line logged meanwhile, which can only add to what they read.
enum LWSStartupLines {
    /// Lines kept for one start: a start that fails says why in its first few.
    static let keptLines = 32
    private static let lock = NSLock()
    nonisolated(unsafe) private static var open: [Int: [String]] = [:]
    nonisolated(unsafe) private static var nextToken = 0

    /// Starts gathering; `finish` with the token returns what came meanwhile.
    static func begin() -> Int {
        lock.withLock {
            nextToken += 1
            open[nextToken] = []
            return nextToken
        }
    }

    static func record(_ line: String) {
        lock.withLock {
            for token in open.keys where open[token, default: []].count < keptLines { open[token]?.append(line) }
        }
    }

    static func finish(_ token: Int) -> [String] {
        lock.withLock { open.removeValue(forKey: token) ?? [] }
    }
}
