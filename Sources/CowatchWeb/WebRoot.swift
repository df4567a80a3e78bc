import Foundation

/// The browser client's files (`Web/` beside this file), read once at start-up
/// and served from memory by the gateway.
///
/// Looked for, in order: `$COWATCH_WEB_ROOT`; the resource bundle SwiftPM puts next
/// to the binary (`Cowatch_CowatchWeb.resources/Web`); `../share/cowatch/web`
/// beside the binary's folder (an installed layout). The first that has
/// `room.html` wins.
public struct WebRoot: Sendable {
    public struct File: Sendable {
        public var contentType: String
        public var body: [UInt8]
    }

    /// The folder the files were read from, or nil when none was found.
    public let directory: String?
    private let files: [String: File]

    /// The resource bundle SwiftPM builds for this module, next to the binary.
    public static let bundleName = "Cowatch_CowatchWeb.resources"

    public init(overriding override: String? = ProcessInfo.processInfo.environment["COWATCH_WEB_ROOT"]) {
        let directory = Self.candidates(override: override).first { path in
            FileManager.default.fileExists(atPath: path + "/room.html")
        }
        self.directory = directory
        var files: [String: File] = [:]
        if let directory, let enumerator = FileManager.default.enumerator(atPath: directory) {
            while let relative = enumerator.nextObject() as? String {
                let path = directory + "/" + relative
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                      let data = FileManager.default.contents(atPath: path)
                else { continue }
                files["/" + relative] = File(contentType: Self.contentType(of: relative), body: Array(data))
            }
        }
        self.files = files
    }

    var isAvailable: Bool { files["/room.html"] != nil }

    /// A file by its path under the web root (`/room.html`, `/static/room.js`).
    public func file(_ path: String) -> File? {
        guard !path.contains("..") else { return nil }
        return files[path]
    }

    static func candidates(override: String?) -> [String] {
        var paths: [String] = []
        if let override, !override.isEmpty { paths.append(override) }
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()
        let binDirectory = executable.deletingLastPathComponent().path
        paths.append(binDirectory + "/\(bundleName)/Web")
        paths.append(binDirectory + "/../share/cowatch/web")
        if let bundle = Bundle.main.resourcePath { paths.append(bundle + "/\(bundleName)/Web") }
        // Test runners live in the same build folder as the bundle.
        for bundle in Bundle.allBundles { paths.append(bundle.bundlePath + "/../\(bundleName)/Web") }
        return paths
    }

    static func contentType(of path: String) -> String {
        switch path.split(separator: ".").last.map(String.init) ?? "" {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "json": "application/json"
        case "webmanifest": "application/manifest+json"
        default: "application/octet-stream"
        }
    }
}
