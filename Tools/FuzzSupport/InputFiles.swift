#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading inputs for replay with the C library alone: a fuzz target links no
/// Foundation unless its check needs it.
enum InputFiles {
    /// `path` itself when it is a file; the regular files in it, sorted, when it
    /// is a folder; nothing when it does not exist.
    static func list(_ path: String) -> [String] {
        var info = stat()
        guard stat(path, &info) == 0 else { return [] }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return [path] }
        guard let folder = opendir(path) else { return [] }
        defer { closedir(folder) }
        var files: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name != ".", name != ".." else { continue }
            let full = path.hasSuffix("/") ? path + name : path + "/" + name
            var entryInfo = stat()
            if stat(full, &entryInfo) == 0, (entryInfo.st_mode & S_IFMT) == S_IFREG { files.append(full) }
        }
        return files.sorted()
    }

    /// The whole file, or nil when it cannot be read.
    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count > 0 { bytes.append(contentsOf: buffer[..<count]) }
            if count < buffer.count { break }
        }
        return ferror(file) == 0 ? bytes : nil
    }
}
