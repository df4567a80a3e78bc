import CowatchTime
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches one subtitle track for a page, with the link check's protections
/// (`MediaProbe.swift`): never a private, loopback or link-local address unless
/// the operator allows it, each redirect's host judged the same way, at most
/// `maximumRedirects` of them, the whole fetch within `timeout`, and no
/// more than `maximumSubtitleBytes` read. `SubtitleProxy` judges the answer.
/// Runs off the service thread; `completion` is called once, on another thread.
final class SubtitleFetch: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    typealias Outcome = Result<[UInt8], SubtitleProxy.Refusal>

    private let settings: MediaCheck.Settings
    /// Where the whole visit's deadline is set: the gateway's clock, so that a
    /// test's skipped time brings it.
    private let time: any TimeSource
    private let completion: @Sendable (Outcome) -> Void
    private let lock = NSLock()
    private var done = false
    private var redirects = 0
    private var refusedRedirect: String?
    private var body: [UInt8] = []
    private var session: URLSession?

    private init(settings: MediaCheck.Settings, time: any TimeSource, completion: @escaping @Sendable (Outcome) -> Void) {
        self.settings = settings
        self.time = time
        self.completion = completion
    }

    static func fetch(_ link: String, settings: MediaCheck.Settings, time: any TimeSource = SystemTime(),
                      completion: @escaping @Sendable (Outcome) -> Void) {
        let fetch = SubtitleFetch(settings: settings, time: time, completion: completion)
        DispatchQueue.global().async { fetch.start(link) }
    }

    private static func refusal(_ why: String) -> Outcome {
        .failure(SubtitleProxy.Refusal(status: 502, message: "the subtitles could not be fetched: \(why)"))
    }

    private func start(_ link: String) {
        guard let url = URL(string: link), let host = url.host, !host.isEmpty else {
            return finish(Self.refusal("their address could not be read"))
        }
        if let refusal = MediaProbe.visitRefusal(host: host, settings: settings) { return finish(Self.refusal(refusal)) }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = settings.timeout.seconds
        configuration.timeoutIntervalForResource = settings.timeout.seconds
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        lock.withLock { self.session = session }
        var request = URLRequest(url: url, timeoutInterval: settings.timeout.seconds)
        request.httpMethod = "GET"
        request.setValue("text/vtt, text/plain;q=0.9", forHTTPHeaderField: "Accept")
        request.setValue("cowatch-subtitles", forHTTPHeaderField: "User-Agent")
        session.dataTask(with: request).resume()
        // URLSession's own timeouts count idle time; this bounds the whole fetch.
        time.schedule(after: settings.timeout + .milliseconds(500), on: .global()) { [self] in
            finish(Self.refusal(MediaProbe.timeoutWords(settings.timeout)))
        }
    }

    private func finish(_ outcome: Outcome) {
        let session = lock.withLock { () -> URLSession?? in
            if done { return .none }
            done = true
            body = []
            defer { self.session = nil }
            return .some(self.session)
        }
        guard case .some(let ending) = session else { return }
        ending?.invalidateAndCancel()
        completion(outcome)
    }

    // MARK: - URLSessionDataDelegate

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        let count = lock.withLock { redirects += 1; return redirects }
        let refusal = MediaProbe.redirectRefusal(count: count, to: request.url?.host, settings: settings)
        if let refusal {
            lock.withLock { refusedRedirect = refusal }
            completionHandler(nil)
        } else {
            completionHandler(request)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let http = response as? HTTPURLResponse else {
            completionHandler(.cancel)
            return finish(Self.refusal("their link is not an HTTP link"))
        }
        if (300...399).contains(http.statusCode), let refusal = lock.withLock({ refusedRedirect }) {
            completionHandler(.cancel)
            return finish(Self.refusal(refusal))
        }
        let length = http.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        if let refusal = SubtitleProxy.headRefusal(status: http.statusCode, contentType: http.value(forHTTPHeaderField: "Content-Type"),
                                                   path: http.url?.path ?? "", contentLength: length,
                                                   limit: settings.maximumSubtitleBytes) {
            completionHandler(.cancel)
            return finish(.failure(refusal))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let tooLarge = lock.withLock { () -> Bool in
            guard !done else { return false }
            body.append(contentsOf: data)
            return body.count > settings.maximumSubtitleBytes
        }
        if tooLarge { finish(.failure(SubtitleProxy.tooLarge(settings.maximumSubtitleBytes))) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let error else {
            let bytes = lock.withLock { body }
            if let refusal = SubtitleProxy.bodyRefusal(bytes) { return finish(.failure(refusal)) }
            return finish(.success(bytes))
        }
        finish(Self.refusal(MediaProbe.failureWords(error, timeout: settings.timeout)))
    }
}
