import Foundation
import Testing

/// What the compiler cannot say of the gateway: the tables have one writer by
/// their access (`fileprivate(set)` in `GatewayTables.swift`), and a machine's
/// decisions cannot be dropped without a warning, save by `_ =`; this reads the
/// sources for that one way.
@Suite("No machine's decisions dropped")
struct InterpreterRuleTests {
    static let gateway = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/CowatchGateway")

    /// Every Swift file of the gateway, by its path below `Sources/CowatchGateway`.
    static func sources() throws -> [(path: String, text: String)] {
        let enumerator = FileManager.default.enumerator(atPath: gateway.path)
        var files: [(String, String)] = []
        while let relative = enumerator?.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            files.append((relative, try String(contentsOf: gateway.appendingPathComponent(relative), encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    @Test("the gateway's sources are found")
    func found() throws {
        #expect(try Self.sources().count > 20)
    }

    @Test("no machine's decisions are discarded with `_ =`")
    func nothingDiscarded() throws {
        var offenders: [String] = []
        for (path, text) in try Self.sources() {
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("_ = ") && (line.contains(".handle(") || line.contains("Actions") || line.contains("state.")
                                          || line.contains("tables.")) {
                offenders.append("\(path):\(number + 1)")
            }
        }
        #expect(offenders.isEmpty, "\(offenders)")
    }
}
