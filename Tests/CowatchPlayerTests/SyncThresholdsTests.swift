import CowatchPlayer
import Foundation
import Testing

/// The page and the desktop player keep in sync by the same thresholds, declared
/// once (`SyncThresholds`): the page's module is written from them.
@Suite("The sync thresholds have one declaration")
struct SyncThresholdsTests {
    static let module = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/CowatchWeb/Web/static/sync/thresholds.js")

    @Test("static/sync/thresholds.js is what SyncThresholds writes")
    func pageModule() throws {
        let file = try String(contentsOf: Self.module, encoding: .utf8)
        let expected = SyncThresholds.javaScript
        if file != expected {
            try? expected.write(toFile: NSTemporaryDirectory() + "thresholds.js", atomically: true, encoding: .utf8)
        }
        #expect(file == expected, "written to \(NSTemporaryDirectory())thresholds.js")
    }

    @Test("the desktop player reads the shared thresholds")
    func player() {
        #expect(Steadiness.seek == SyncThresholds.seek && Steadiness.nudgeStart == SyncThresholds.nudgeStart)
        #expect(Steadiness.hold == SyncThresholds.hold && Steadiness.medianWindow == SyncThresholds.medianWindow)
    }
}
