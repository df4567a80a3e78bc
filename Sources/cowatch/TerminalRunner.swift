import CowatchClient
import CowatchTime
import Foundation

/// Carries out what `ClientLife` decides for `cowatch connect`: the one place that
/// touches the connection, the timers and the process's exit. Events from the
/// client's service thread, from the reading thread and from timers are handled
/// one at a time on `queue`.
final class TerminalRunner: @unchecked Sendable {
    private let queue = DispatchQueue(label: "cowatch-terminal")
    private let clients: WebSocketClients
    private let address: WebSocketAddress
    private let encoding: ClientEncoding
    private let trust: ClientTrust
    /// Where events are timed and timers set.
    private let time: any TimeSource
    // On `queue` only.
    private var life: ClientLife
    private var connection: ClientConnection?

    init(address: WebSocketAddress, encoding: ClientEncoding, trust: ClientTrust, life: ClientLife, connectTimeout: MonotonicDuration,
         time: any TimeSource = SystemTime()) throws {
        self.address = address
        self.time = time
        self.encoding = encoding
        self.trust = trust
        self.life = life
        clients = try WebSocketClients(connectTimeout: connectTimeout, trust: trust, probesFailures: true)
    }

    func start() {
        post(.start(now: time.monotonic()))
    }

    func post(_ event: ClientLife.Event) {
        queue.async { [self] in
            for action in life.handle(event) { perform(action) }
        }
    }

    private func perform(_ action: ClientLife.Action) {
        switch action {
        case .connect(let attempt, let resume):
            let target = resume.map { address.adding("resume", $0) } ?? address
            connection = clients.connect(target, encoding: encoding, handlers: ClientHandlers(
                opened: { [self] in post(.opened(attempt)) },
                received: { [self] text in post(.received(attempt, text)) },
                closed: { [self] info in post(.closed(attempt, info, now: time.monotonic())) }))
        case .send(let text):
            connection?.send(text)
        case .close:
            connection?.close()
        case .print(let text):
            Output.line(text)
        case .say(let text):
            Output.error(text)
        case .explainRefusal(let attempt):
            let target = address
            let subprotocol = encoding.rawValue
            DispatchQueue.global().async { [self] in
                let answer = try? PlainHTTP.upgradeAnswer(target, subprotocol: subprotocol, trust: trust)
                post(.refusalExplained(attempt, status: answer?.status == 101 ? nil : answer?.status,
                                       body: answer?.body ?? "", now: time.monotonic()))
            }
        case .schedule(let timer, let delay):
            time.schedule(after: delay, on: queue) { [self] in
                for action in life.handle(.timerFired(timer, now: time.monotonic())) { perform(action) }
            }
        case .exit(let code):
            connection?.close()
            clients.shutdown()
            exit(code)
        }
    }
}
