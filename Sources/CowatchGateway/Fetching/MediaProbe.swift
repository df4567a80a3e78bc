import CowatchTime
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Makes the one bounded request that `MediaCheck` judges: a GET of the link's
/// first kilobyte (`Range: bytes=0-1023`), read no further than its headers,
/// within a timeout, following at most a few redirects, and (unless the operator
/// allows it) never to a private, loopback or link-local address: each host is
/// resolved and its addresses judged before it is visited. Runs off the service
/// thread; `completion` is called once, on some other thread.
final class MediaProbe: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let settings: MediaCheck.Settings
    /// Where the whole visit's deadline is set: the gateway's clock, so that a
    /// test's skipped time brings it.
    private let time: any TimeSource
    private let completion: @Sendable (MediaCheck.Verdict) -> Void
    private let lock = NSLock()
    private var done = false
    private var redirects = 0
    private var refusedRedirect: String?
    private var session: URLSession?

    private init(settings: MediaCheck.Settings, time: any TimeSource, completion: @escaping @Sendable (MediaCheck.Verdict) -> Void) {
        self.settings = settings
        self.time = time
        self.completion = completion
    }

    static func check(_ link: String, settings: MediaCheck.Settings, time: any TimeSource = SystemTime(),
                      completion: @escaping @Sendable (MediaCheck.Verdict) -> Void) {
        let probe = MediaProbe(settings: settings, time: time, completion: completion)
        DispatchQueue.global().async { probe.start(link) }
    }

    private func start(_ link: String) {
        guard let url = URL(string: link), let host = url.host, !host.isEmpty else {
            return finish(.unchecked("its address could not be read"))
        }
        if let refusal = Self.visitRefusal(host: host, settings: settings) { return finish(.unchecked(refusal)) }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = settings.timeout.seconds
        configuration.timeoutIntervalForResource = settings.timeout.seconds
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        lock.withLock { self.session = session }
        var request = URLRequest(url: url, timeoutInterval: settings.timeout.seconds)
        request.httpMethod = "GET"
        request.setValue("bytes=0-1023", forHTTPHeaderField: "Range")
        request.setValue("cowatch-media-check", forHTTPHeaderField: "User-Agent")
        session.dataTask(with: request).resume()
        // URLSession's own timeouts count idle time; this bounds the whole check.
        time.schedule(after: settings.timeout + .milliseconds(500), on: .global()) { [self] in
            finish(.unchecked(Self.timeoutWords(settings.timeout)))
        }
    }

    /// Why the server will not visit `host`, or nil when it may: also for the
    /// subtitles it fetches (`SubtitleFetch.swift`).
    static func visitRefusal(host: String, settings: MediaCheck.Settings) -> String? {
        if settings.allowPrivateAddresses { return nil }
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let addresses = resolve(name)
        if addresses.isEmpty { return "its host name \(name.prefix(100)) does not resolve here" }
        if addresses.contains(where: { !MediaCheck.isPublic($0) }) {
            return "it points at a private or local address, which this server does not visit"
        }
        return nil
    }

    static func resolve(_ host: String) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &found) == 0, let first = found else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [[UInt8]] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr {
                switch Int32(current.pointee.ai_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        var raw = pointer.pointee.sin_addr
                        addresses.append(withUnsafeBytes(of: &raw) { Array($0) })
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        var raw = pointer.pointee.sin6_addr
                        addresses.append(withUnsafeBytes(of: &raw) { Array($0) })
                    }
                default:
                    break
                }
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }

    private func finish(_ verdict: MediaCheck.Verdict) {
        let session = lock.withLock { () -> URLSession?? in
            if done { return .none }
            done = true
            defer { self.session = nil }
            return .some(self.session)
        }
        guard case .some(let ending) = session else { return }
        ending?.invalidateAndCancel()
        completion(verdict)
    }

    // MARK: - URLSessionDataDelegate

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        let count = lock.withLock { redirects += 1; return redirects }
        let refusal = Self.redirectRefusal(count: count, to: request.url?.host, settings: settings)
        if let refusal {
            lock.withLock { refusedRedirect = refusal }
            completionHandler(nil)
        } else {
            completionHandler(request)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        completionHandler(.cancel)
        guard let http = response as? HTTPURLResponse else { return finish(.unchecked("it is not an HTTP link")) }
        if (300...399).contains(http.statusCode), let refusal = lock.withLock({ refusedRedirect }) {
            return finish(.unchecked(refusal))
        }
        let type = http.value(forHTTPHeaderField: "Content-Type")
        finish(MediaCheck.verdict(status: http.statusCode, contentType: type, path: http.url?.path ?? ""))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let error else { return }
        finish(.unchecked(Self.failureWords(error, timeout: settings.timeout)))
    }

    // MARK: - Shared with SubtitleFetch, which visits links under the same rules

    /// Why a redirect (the `count`th of this visit) to `host` is not followed, if it is not.
    static func redirectRefusal(count: Int, to host: String?, settings: MediaCheck.Settings) -> String? {
        if count > settings.maximumRedirects { return "the link redirects more than \(settings.maximumRedirects) times" }
        return host.flatMap { visitRefusal(host: $0, settings: settings) }
    }

    /// A visit that outlasted its bound, in words (URLSession's timeout or the
    /// whole visit's timer).
    static func timeoutWords(_ timeout: MonotonicDuration) -> String {
        "the server did not answer within \(Int(timeout.seconds.rounded())) s"
    }

    /// A failed visit in words.
    static func failureWords(_ error: any Error, timeout: MonotonicDuration) -> String {
        let nsError = error as NSError
        return switch nsError.code {
        case NSURLErrorTimedOut: timeoutWords(timeout)
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: "the host name does not resolve here"
        case NSURLErrorCannotConnectToHost: "the server refused the connection"
        case NSURLErrorServerCertificateUntrusted, NSURLErrorSecureConnectionFailed: "the server's TLS certificate is not trusted here"
        default: "the server could not be reached (\(nsError.localizedDescription))"
        }
    }
}
