import CowatchClient
import Foundation

/// How the load generator reads a server frame: whether it is a `state`, with its
/// `seq`, or an `error`. The generator reads every frame of every member on the
/// machine it measures, so this is its biggest cost per delivery
/// (docs/benchmarks.md, "Reading frames in the load generator").
public enum FrameReading: String, Sendable, CaseIterable {
    /// A byte scan for the two fields (`StateFrameScanner`): the default.
    case scan
    /// Foundation's `JSONDecoder` into a small `Decodable`, as the store decodes
    /// its JSON; text lines have no decoder and are scanned either way. Kept to
    /// measure what the scan saves.
    case decode

    /// What the generator needs of a frame: the `seq` of a state (0 for a state
    /// line of the text encoding, where states carry no number), and, when
    /// `needError`, whether it is an error.
    func read(_ text: String, encoding: ClientEncoding, needError: Bool) -> (stateSeq: Int?, isError: Bool) {
        switch (self, encoding) {
        case (.decode, .json):
            guard let head = try? Self.decoder.decode(FrameHead.self, from: Data(text.utf8)) else { return (nil, false) }
            return (head.type == "state" ? head.seq : nil, head.type == "error")
        case (.scan, _), (.decode, .text):
            let seq = StateFrameScanner.stateSeq(text, encoding: encoding)
            return (seq, seq == nil && needError && StateFrameScanner.isError(text, encoding: encoding))
        }
    }

    private static let decoder = JSONDecoder()

    /// The two fields of an event the generator looks at; the rest is skipped.
    private struct FrameHead: Decodable {
        var type: String
        var seq: Int?
    }
}
