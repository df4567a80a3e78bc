import CSQLite

/// A thin, throwing wrapper over one SQLite connection. Used by one thread at a
/// time (the store's writer, or start-up before it runs).
final class SQLiteDatabase {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private var handle: OpaquePointer?
    let path: String

    init(path: String) throws {
        self.path = path
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        self.handle = handle
        guard status == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            self.handle = nil
            throw Failure(description: message)
        }
        sqlite3_busy_timeout(handle, 5_000)
    }

    deinit { close() }

    func close() {
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? lastError
            sqlite3_free(error)
            throw Failure(description: message)
        }
    }

    var lastError: String {
        handle.map { String(cString: sqlite3_errmsg($0)) } ?? "database closed"
    }

    /// Runs `sql` with `arguments` bound in order; returns every row's columns as text
    /// (integers are read as text and parsed by the caller).
    @discardableResult
    func run(_ sql: String, _ arguments: [Argument] = []) throws -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { throw Failure(description: lastError) }
        defer { sqlite3_finalize(statement) }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let status: Int32 = switch argument {
            case .text(let text): sqlite3_bind_text(statement, position, text, -1, cw_sqlite_transient())
            case .integer(let value): sqlite3_bind_int64(statement, position, value)
            }
            guard status == SQLITE_OK else { throw Failure(description: lastError) }
        }
        var rows: [[String?]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw Failure(description: lastError) }
            let columns = sqlite3_column_count(statement)
            rows.append((0..<columns).map { column in
                sqlite3_column_text(statement, column).map { String(cString: $0) }
            })
        }
        return rows
    }

    enum Argument {
        case text(String)
        case integer(Int64)
    }
}
