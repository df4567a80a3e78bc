import CowatchCore

// The vocabulary of inputs a room sees from its gateway, shared by the randomized
// tests (which draw steps from a seeded generator) and the room fuzzer (which
// decodes them from bytes). Steps are plain values so that a sequence can be
// replayed, shortened and printed as Swift source.

/// One input of a random session, symbolic so that a sequence can be replayed and
/// shortened: `{seq}`, `{seq-2}`, `{seq+1}`, `{name:3}` and `{NAME:3}` in a
/// message are resolved when the step runs (the room's current seq; slot 3's
/// current display name, as is or upper-cased).
public enum RoomStep: Hashable, Sendable, CustomStringConvertible {
    public enum Resume: Hashable, Sendable {
        /// No `resume` parameter: a new member.
        case none
        /// The token this slot was last welcomed with.
        case own
        /// A token the room never issued.
        case garbage
        /// The token another slot was welcomed with (a resume link opened in a
        /// second tab): that slot's connection is replaced, as the gateway does.
        case slot(Int)
    }

    /// A connection opens for a slot (one browser tab, say). Only a slot whose
    /// connection is closed connects, except with `.own`, which models the same
    /// page reconnecting before the server noticed the old connection dropped.
    case connect(slot: Int, name: String?, player: Bool, join: Bool, resume: Resume)
    /// One WebSocket message; several lines are separated by `\n`.
    case message(slot: Int, text: String)
    case disconnect(slot: Int)
    case measure(slot: Int, milliseconds: Int64)
    /// The clock moves on; timers that come due fire in time order, each `lateness`
    /// after its due instant (but never after the target).
    case advance(milliseconds: Int64, lateness: Int64)
    /// A timer that was cancelled or already fired fires (again): the gateway's
    /// cancel raced with the timer. The room must recognise it as stale.
    case refireRetiredTimer(pick: Int)
    /// A line arrives for a member the room no longer knows (it raced with a kick).
    case ghostLine(text: String)

    public var description: String {
        switch self {
        case .connect(let slot, let name, let player, let join, let resume):
            var parts = ["s\(slot) connects"]
            parts.append(name.map { "name=\(Self.quoted($0))" } ?? "(no name)")
            if player { parts.append("player=1") }
            if !join { parts.append("join=0") }
            switch resume {
            case .none: break
            case .own: parts.append("resume=<its token>")
            case .garbage: parts.append("resume=<garbage>")
            case .slot(let other): parts.append("resume=<token of s\(other)>")
            }
            return parts.joined(separator: " ")
        case .message(let slot, let text):
            return "s\(slot) says \(Self.quoted(text))"
        case .disconnect(let slot):
            return "s\(slot) disconnects"
        case .measure(let slot, let milliseconds):
            return "s\(slot) round trip measured: \(milliseconds) ms"
        case .advance(let milliseconds, let lateness):
            return lateness == 0 ? "clock +\(milliseconds) ms" : "clock +\(milliseconds) ms (timers fire \(lateness) ms late)"
        case .refireRetiredTimer(let pick):
            return "a retired timer fires again (pick \(pick))"
        case .ghostLine(let text):
            return "a forgotten member says \(Self.quoted(text))"
        }
    }

    /// Swift-literal quoting, so a report can be pasted into a test.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
                    || scalar.properties.generalCategory == .format
                    || scalar.properties.generalCategory == .lineSeparator
                    || scalar.properties.generalCategory == .paragraphSeparator
                    || scalar.properties.generalCategory == .nonspacingMark {
                    out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

/// The room a sequence runs in: how many member slots, and the room's limits
/// (sometimes small, so full rooms, full queues and expired resume graces happen).
public struct RoomSetup: Hashable, Sendable, CustomStringConvertible {
    public var slots: Int
    public var configuration: RoomConfiguration

    public init(slots: Int, configuration: RoomConfiguration) {
        self.slots = slots
        self.configuration = configuration
    }

    public var description: String {
        "\(slots) slots, at most \(configuration.maximumMembers) members, queue of \(configuration.maximumQueueLength), "
            + "resume grace \(configuration.resumeGrace.milliseconds) ms"
    }
}

