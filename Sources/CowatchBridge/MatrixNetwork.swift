import CowatchClient
import CowatchTime
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// The Matrix adapter: a `ChatNetwork` that carries out what `MatrixSession`
/// decides, with URLSession against the homeserver's client-server API, and
/// keeps its state in a `MatrixStateFile`. Answers and timers are handled one
/// at a time on `queue`.
public final class MatrixNetwork: ChatNetwork, @unchecked Sendable {
    public let identity: String
    private let queue: DispatchQueue
    private let homeserver: String
    private let stateFile: String
    private let logger: Logger
    private let urlSession: URLSession
    /// Where events are timed and timers set.
    private let time: any TimeSource
    // On `queue` only.
    private var session: MatrixSession
    private var tasks: [MatrixSession.RequestID: URLSessionDataTask] = [:]
    private var deliver: (@Sendable (NetworkEvent) -> Void)?

    public init(identity: String, settings: MatrixSession.Settings, stateFile: String, logger: Logger,
                time: any TimeSource = SystemTime()) {
        self.identity = identity
        self.time = time
        homeserver = settings.homeserver
        self.stateFile = stateFile
        self.logger = logger
        let saved = MatrixStateFile.read(stateFile)
        session = MatrixSession(settings: settings, saved: saved, transactionPrefix: UUID().uuidString.lowercased(),
                                seed: Backoff.seed(identity + settings.user))
        queue = DispatchQueue(label: "cowatch-matrix")
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 4
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        urlSession = URLSession(configuration: configuration)
    }

    public func start(events: @escaping @Sendable (NetworkEvent) -> Void) {
        queue.async { [self] in
            deliver = events
            run(.start(now: time.monotonic()))
        }
    }

    public func perform(_ command: NetworkCommand) {
        queue.async { [self] in run(.command(command, now: time.monotonic())) }
    }

    public func stop() {
        queue.sync { [self] in
            run(.stop)
            deliver = nil
        }
        urlSession.invalidateAndCancel()
    }

    private func run(_ event: MatrixSession.Event) {
        for action in session.handle(event) { perform(action) }
    }

    private func perform(_ action: MatrixSession.Action) {
        switch action {
        case .request(let request):
            start(request)
        case .cancel(let id):
            tasks.removeValue(forKey: id)?.cancel()
        case .schedule(let timer, let delay):
            time.schedule(after: delay, on: queue) { [self] in run(.timerFired(timer, now: time.monotonic())) }
        case .deliver(let event):
            deliver?(event)
        case .keep(let saved):
            if case .failure(let problem) = MatrixStateFile.write(saved, to: stateFile) {
                logger.log(LogEntry(.warning, "the Matrix state could not be kept; a restart may log in again and replay or miss lines",
                                    ["problem": problem.message]), [:])
            }
        case .log(let entry):
            logger.log(entry, ["homeserver": homeserver])
        }
    }

    private func start(_ request: MatrixSession.Request) {
        guard let url = URL(string: homeserver + request.path) else {
            run(.failed(request.id, reason: "not a valid address: \(homeserver)\(request.path)", now: time.monotonic()))
            return
        }
        var urlRequest = URLRequest(url: url, timeoutInterval: request.timeout.seconds)
        urlRequest.httpMethod = request.method
        if request.authorized, let token = session.accessToken {
            urlRequest.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        }
        if let body = request.body {
            urlRequest.httpBody = Data(body.utf8)
            urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let id = request.id
        let task = urlSession.dataTask(with: urlRequest) { [self] data, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode
            let reason = error.map { $0.localizedDescription } ?? "no answer"
            queue.async { [self] in
                guard tasks.removeValue(forKey: id) != nil else { return }
                let now = time.monotonic()
                if let status, error == nil {
                    run(.response(id, status: status, body: data ?? Data(), now: now))
                } else {
                    run(.failed(id, reason: reason, now: now))
                }
            }
        }
        tasks[id] = task
        task.resume()
    }
}
