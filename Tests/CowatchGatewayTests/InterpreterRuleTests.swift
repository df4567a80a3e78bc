import Foundation
import Testing

/// The gateway's rule of one interpreter (README, "Inside the server"), read from
/// its sources: only `Gateway+Interpreter.swift` writes the gateway's rooms,
/// connections, carried members, operator state and routes, and no file drops
/// what a machine decided.
@Suite("One interpreter in the gateway")
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

    /// Lines that assign to one of the tables only the interpreter may write.
    static var tableWrite: some RegexComponent { #/(^|[^.\w])(rooms|connections|carried|connectionSlices)(\[[^\]]*\])?(\?)?(\.\w+(\[[^\]]*\])?)?\s*=[^=]|(rooms|connections|carried)\.removeValue|\.(route|leaving|member|carrier)\s*=[^=]|operatorState(\.\w+)*(\[[^\]]*\])?\s*=[^=]|operatorState\.\w+\.(updateValue|removeValue)/# }

    @Test("the gateway's sources are found")
    func found() throws {
        #expect(try Self.sources().count > 20)
    }

    @Test("only the interpreter writes the rooms, connections, carried members, routes, seats and operator state")
    func oneWriter() throws {
        var offenders: [String] = []
        for (path, text) in try Self.sources() where path.hasPrefix("Events/") || path.hasPrefix("Cluster/Gateway+")
            || path == "Gateway/Gateway.swift" || path.hasPrefix("LWS/") || path.hasPrefix("HTTP/") {
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains(Self.tableWrite) {
                offenders.append("\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(offenders.isEmpty, "written outside Gateway+Interpreter.swift:\n\(offenders.joined(separator: "\n"))")
    }

    @Test("the rule's pattern sees the writes it forbids and lets reads and comparisons be")
    func patternSeesWrites() {
        let writes = ["rooms[name] = entry", "rooms[name]?.links[link.id] = nil", "connections[id] = connection",
                      "guard let entry = rooms.removeValue(forKey: room)", "connection.route = .local", "member.leaving = true",
                      "connection.member = nil",
                      "state.operatorState.draining = true", "state.operatorState.bannedAddresses.updateValue(x, forKey: a)",
                      "carried[member.id] = member"]
        let reads = ["guard let entry = rooms[name] else { return }", "if rooms[name] == nil {",
                     "let waiting = connections[id]", "switch connection.route {", "if state.operatorState.draining {"]
        #expect(writes.allSatisfy { $0.contains(Self.tableWrite) })
        #expect(!reads.contains { $0.contains(Self.tableWrite) })
    }

    @Test("no machine's decisions are discarded with `_ =`")
    func nothingDiscarded() throws {
        var offenders: [String] = []
        for (path, text) in try Self.sources() {
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("_ = ") && (line.contains(".handle(") || line.contains("Actions") || line.contains("state.")) {
                offenders.append("\(path):\(number + 1)")
            }
        }
        #expect(offenders.isEmpty, "\(offenders)")
    }
}
