import CowatchClient
import CowatchCore

/// How the load generator reads a server frame: whether it is a `state`, with its
/// `seq` and whether the group waits for its players, or an `error`. The
/// generator reads every frame of every member on the machine it measures, so
/// this is its biggest cost per delivery (docs/benchmarks.md, "Reading frames in
/// the load generator"). Both readings are the protocol's one decoder
/// (`JSONEventDecoding`, Sources/CowatchCore/EventDecoding+JSON.swift).
public enum FrameReading: String, Sendable, CaseIterable {
    /// The frame's head alone (`JSONEventDecoding.head`): it stops once it has
    /// the fields. The default.
    case head
    /// The whole event into the core's values (`JSONEventDecoding.decode`), as
    /// the desktop player and the bridges read it. Kept to measure what reading
    /// only the head saves.
    case full

    /// What the generator reads of a frame.
    struct Frame: Equatable {
        /// The `seq` of a state (0 for a state line of the text encoding, where states carry no number).
        var stateSeq: Int?
        var isError = false
        /// A state that holds the group `waiting` for its players.
        var waiting = false
    }

    func read(_ text: String, encoding: ClientEncoding) -> Frame {
        var text = text
        return text.withUTF8 { bytes in
            switch encoding {
            case .json: return json(bytes)
            case .text: return Self.textLine(bytes)
            }
        }
    }

    private func json(_ bytes: UnsafeBufferPointer<UInt8>) -> Frame {
        switch self {
        case .head:
            guard let head = try? JSONEventDecoding.head(bytes) else { return Frame() }
            return Frame(stateSeq: head.type == "state" ? head.seq.map { Int($0) } : nil, isError: head.type == "error",
                         waiting: head.status == .waiting)
        case .full:
            switch (try? JSONEventDecoding.decode(bytes)) ?? nil {
            case .state(let state)?: return Frame(stateSeq: Int(state.seq), waiting: state.playback.status == .waiting)
            case .error?: return Frame(isError: true)
            default: return Frame()
            }
        }
    }

    private static let timeLine = Array("= time ".utf8)

    /// The text encoding is for people and has no decoder: a state line is
    /// `= paused ...`, `= playing ...`, `= waiting ...`, `= nothing is playing ...`
    /// or `= the session ended ...`, but not the `= time ...` answer (the bench
    /// sends no informational commands, so no other `= ` line arrives); an error
    /// line starts `! `.
    static func textLine(_ bytes: UnsafeBufferPointer<UInt8>) -> Frame {
        guard bytes.count >= 2, bytes[1] == UInt8(ascii: " ") else { return Frame() }
        if bytes[0] == UInt8(ascii: "!") { return Frame(isError: true) }
        guard bytes[0] == UInt8(ascii: "=") else { return Frame() }
        if bytes.count >= timeLine.count, zip(timeLine, bytes).allSatisfy({ $0 == $1 }) { return Frame() }
        return Frame(stateSeq: 0)
    }
}
