import Foundation

/// What travels on a shared relay link between two nodes of a cluster
/// (docs/cluster.md, "Relaying"): one WebSocket link, subprotocol
/// `cowatch.relay.v1`, per room and relaying node, carrying every member that
/// node relays to the room's owner. Each message is one text frame: a header
/// line, and after its `\n` the bytes it carries, passed on untouched.
///
/// Up, from the member's node to the owner (`RelayUp`), and down (`RelayDown`).
/// A member is known on its link by a number the relaying node gives it
/// (`RelayNumber`), never reused on that link.
typealias RelayNumber = UInt32

/// The subprotocol of a shared relay link.
let relaySubprotocol = "cowatch.relay.v1"

/// The encoding a relayed member asked for, as its own connection says it.
enum RelayEncoding: String, Codable, Equatable, Sendable {
    case json, text
}

/// A relayed member's upgrade, as the owner would have read it from the
/// member's own request: its encoding, its address (as its node saw it) and
/// the query's parameters.
struct RelayedUpgrade: Codable, Equatable, Sendable {
    var encoding: RelayEncoding
    var address: String
    var name: String?
    var resume: String?
    var player: Bool
    var join: Bool
    var owner: String?
    var device: String?
    var software: String?
    var invite: String?
    var password: String?
    var token: String?
    var create: String?
}

/// From the relaying node to the owner.
enum RelayUp: Equatable, Sendable {
    /// A member arrived: its number on the link and its upgrade.
    case join(RelayNumber, RelayedUpgrade)
    /// A whole message the member sent (one line or several).
    case message(RelayNumber, [UInt8])
    /// The member's connection ended; `leaving` when it closed with 1000.
    case gone(RelayNumber, leaving: Bool)
    /// The member's round trip to its node, measured there by its pings.
    case roundTrip(RelayNumber, milliseconds: Int)
    /// The member fell behind before its node had the room's state to give it:
    /// the owner sends it the state (`to N`).
    case resynchronize(RelayNumber)
    /// The link has been quiet: the owner answers `pong`, so that a link gone
    /// silent (its owner paused, or cut off without a reset) is noticed.
    case ping
}

/// Who a frame coming down is for.
enum RelayRecipients: Equatable, Sendable {
    /// One member (a reply, a welcome, an error).
    case member(RelayNumber)
    /// Every member on the link that the owner has answered (`joined`) and that
    /// reads `encoding`, but `except`: a room's broadcast, framed once for all.
    case everyone(RelayEncoding, except: RelayNumber?)
    /// The same for the room's `state`: the relaying node also keeps it, to give
    /// a member of its that fell behind the room's state instead of its backlog,
    /// as the owner does for its own.
    case everyoneState(RelayEncoding, except: RelayNumber?)
}

/// From the owner to the relaying node.
enum RelayDown: Equatable, Sendable {
    /// The owner has the member's `join`: what comes down after this may be for it.
    case joined(RelayNumber)
    /// One frame's payload, for these recipients.
    case frame(RelayRecipients, [UInt8])
    /// The owner closes the member's connection with this code and reason.
    case close(RelayNumber, code: UInt16, reason: String)
    /// The answer to `ping`.
    case pong
}

/// Encoding and decoding of the link's messages. Decoding refuses anything
/// malformed (nil): a link is between two nodes of one cluster, so a bad
/// message means a bug or a stranger, and the link is closed.
enum RelayWire {
    /// Header lines are short; a longer one is refused before it is read.
    static let maximumHeaderBytes = 160

    static func encode(_ up: RelayUp) -> [UInt8] {
        switch up {
        case .join(let number, let upgrade):
            let body = (try? JSONEncoder().encode(upgrade)).map(Array.init) ?? Array("{}".utf8)
            return Array("join \(number)\n".utf8) + body
        case .message(let number, let bytes):
            return Array("line \(number)\n".utf8) + bytes
        case .gone(let number, let leaving):
            return Array("gone \(number) \(leaving ? 1 : 0)".utf8)
        case .roundTrip(let number, let milliseconds):
            return Array("rtt \(number) \(milliseconds)".utf8)
        case .resynchronize(let number):
            return Array("resync \(number)".utf8)
        case .ping:
            return Array("ping".utf8)
        }
    }

    static func encode(_ down: RelayDown) -> [UInt8] {
        switch down {
        case .joined(let number):
            return Array("joined \(number)".utf8)
        case .pong:
            return Array("pong".utf8)
        case .frame(let recipients, let payload):
            return header(recipients) + payload
        case .close(let number, let code, let reason):
            // A close frame's reason is at most 123 bytes, cut between
            // characters, and one line.
            var line = Substring(reason.split(whereSeparator: \.isNewline).first ?? "")
            while line.utf8.count > 123 { line = line.dropLast() }
            return Array("close \(number) \(code) \(line)".utf8)
        }
    }

    /// The header of a frame coming down, with its `\n`: the owner writes it
    /// before a payload it already has, once per link.
    static func header(_ recipients: RelayRecipients) -> [UInt8] {
        switch recipients {
        case .member(let number):
            Array("to \(number)\n".utf8)
        case .everyone(let encoding, nil):
            Array("all \(encoding.rawValue)\n".utf8)
        case .everyone(let encoding, let except?):
            Array("all \(encoding.rawValue) \(except)\n".utf8)
        case .everyoneState(let encoding, nil):
            Array("state \(encoding.rawValue)\n".utf8)
        case .everyoneState(let encoding, let except?):
            Array("state \(encoding.rawValue) \(except)\n".utf8)
        }
    }

    static func decodeUp(_ bytes: some Collection<UInt8>) -> RelayUp? {
        guard let (words, body) = split(bytes) else { return nil }
        switch (words.first, words.count) {
        case ("join", 2):
            guard let number = RelayNumber(words[1]), let body,
                  let upgrade = try? JSONDecoder().decode(RelayedUpgrade.self, from: Data(body)) else { return nil }
            return .join(number, upgrade)
        case ("line", 2):
            guard let number = RelayNumber(words[1]), let body else { return nil }
            return .message(number, body)
        case ("gone", 3):
            guard body == nil, let number = RelayNumber(words[1]), let leaving = flag(words[2]) else { return nil }
            return .gone(number, leaving: leaving)
        case ("ping", 1):
            return body == nil ? .ping : nil
        case ("resync", 2):
            guard body == nil, let number = RelayNumber(words[1]) else { return nil }
            return .resynchronize(number)
        case ("rtt", 3):
            guard body == nil, let number = RelayNumber(words[1]), let milliseconds = Int(words[2]),
                  (0...3_600_000).contains(milliseconds) else { return nil }
            return .roundTrip(number, milliseconds: milliseconds)
        default:
            return nil
        }
    }

    static func decodeDown(_ bytes: some Collection<UInt8>) -> RelayDown? {
        guard let (words, body) = split(bytes, words: 4) else { return nil }
        switch (words.first, words.count) {
        case ("pong", 1):
            return body == nil ? .pong : nil
        case ("joined", 2):
            guard body == nil, let number = RelayNumber(words[1]) else { return nil }
            return .joined(number)
        case ("to", 2):
            guard let number = RelayNumber(words[1]), let body else { return nil }
            return .frame(.member(number), body)
        case ("all", 2), ("all", 3), ("state", 2), ("state", 3):
            guard let encoding = RelayEncoding(rawValue: words[1]), let body else { return nil }
            var except: RelayNumber?
            if words.count == 3 {
                guard let number = RelayNumber(words[2]) else { return nil }
                except = number
            }
            return .frame(words[0] == "state" ? .everyoneState(encoding, except: except) : .everyone(encoding, except: except), body)
        case ("close", 3), ("close", 4):
            guard body == nil, let number = RelayNumber(words[1]), let code = UInt16(words[2]) else { return nil }
            return .close(number, code: code, reason: words.count == 4 ? words[3] : "")
        default:
            return nil
        }
    }

    /// The header's words (at most `words`: the last takes the rest of the
    /// line, spaces and all, as a `close`'s reason does) and, after the first
    /// `\n`, the body (nil when there is no `\n`).
    private static func split(_ bytes: some Collection<UInt8>, words limit: Int = 3) -> ([String], [UInt8]?)? {
        let newline = bytes.firstIndex(of: UInt8(ascii: "\n"))
        let head = bytes[bytes.startIndex..<(newline ?? bytes.endIndex)]
        guard !head.isEmpty, head.count <= maximumHeaderBytes else { return nil }
        let words = String(decoding: head, as: UTF8.self)
            .split(separator: " ", maxSplits: limit - 1, omittingEmptySubsequences: false).map(String.init)
        // Only a close's reason may be empty.
        guard words.dropLast(words.first == "close" ? 1 : 0).allSatisfy({ !$0.isEmpty }) else { return nil }
        let body = newline.map { Array(bytes[bytes.index(after: $0)...]) }
        return (words, body)
    }

    private static func flag(_ word: String) -> Bool? {
        switch word {
        case "1": true
        case "0": false
        default: nil
        }
    }
}
