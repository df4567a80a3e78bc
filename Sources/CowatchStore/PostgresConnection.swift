import CLibPQ
import Foundation

/// One PostgreSQL connection through libpq: blocking calls, so each user (the
/// store's writer, the cluster's lease keeper) owns one on a thread of its own and
/// the service loop never waits for the database. Parameters travel separately
/// from the SQL text (`PQexecParams`), never spliced into it.
final class PostgresConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// The connection itself is gone (not a refused statement): reconnect.
        let connectionLost: Bool
        /// The statement's SQLSTATE, when the server gave one.
        var sqlState: String? = nil

        /// A deadlock (40P01) or a serialization failure (40001): the transaction
        /// lost a race with another and is worth trying again as it was. The
        /// database is there; nothing about it is news for the room.
        var isConflict: Bool { sqlState == "40P01" || sqlState == "40001" }
    }

    let url: String
    private var connection: OpaquePointer?
    /// Called after each statement succeeds, with its SQL: where a test stops one
    /// session between two statements to interleave it with another, step by step.
    var afterStatement: ((String) -> Void)?

    /// Connects, waiting at most `timeout` seconds, with every statement limited to
    /// `statementTimeout` seconds so that a stuck database cannot hold a thread.
    init(url: String, timeout: Int = 5, statementTimeout: Double = 10) throws {
        self.url = url
        var full = url
        func add(_ parameter: String, _ value: String) {
            guard !full.contains(parameter + "=") else { return }
            full += (full.contains("?") ? "&" : "?") + parameter + "=" + value
        }
        add("connect_timeout", "\(timeout)")
        // The server's statement_timeout cannot end a wait for a server that is
        // unreachable without a reset (a partition): the kernel would retransmit
        // for many minutes, and go on doing so long after the network is back.
        // Unacknowledged data for this long ends the connection instead, and the
        // caller reconnects.
        add("tcp_user_timeout", "\(Int(statementTimeout * 1000))")
        connection = PQconnectdb(full)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            if let connection { PQfinish(connection) }
            self.connection = nil
            throw Failure(description: "cannot connect to PostgreSQL: \(message.trimmingCharacters(in: .whitespacesAndNewlines))",
                          connectionLost: true)
        }
        try execute("SET statement_timeout = \(Int(statementTimeout * 1000)); SET client_min_messages = warning")
    }

    deinit { close() }

    func close() {
        if let connection { PQfinish(connection) }
        connection = nil
    }

    var isOpen: Bool { connection.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Statements without parameters or results (several may be separated by `;`).
    func execute(_ sql: String) throws {
        guard let connection else { throw Failure(description: "not connected", connectionLost: true) }
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        try check(result, sql)
    }

    /// One statement with text parameters (`$1`, `$2`...); rows of text values.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        try run(sql, parameters, prepared: false)
    }

    /// The same, as a statement prepared once on this connection and executed by
    /// name after: the server parses and plans it once rather than each time,
    /// which is most of a small statement's cost. For statements run often. Every
    /// parameter is declared text (the SQL casts what it needs), so a statement
    /// need not use them all.
    @discardableResult
    func queryPrepared(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        try run(sql, parameters, prepared: true)
    }

    /// Statements prepared on this connection, by their text, and the names they have.
    private var prepared: [String: String] = [:]

    private func run(_ sql: String, _ parameters: [String?], prepared usePrepared: Bool) throws -> [[String?]] {
        guard let connection else { throw Failure(description: "not connected", connectionLost: true) }
        var name: String?
        if usePrepared {
            if let known = prepared[sql] {
                name = known
            } else {
                let fresh = "cowatch_\(prepared.count + 1)"
                let text = Oid(25)
                let types = [Oid](repeating: text, count: parameters.count)
                let result = PQprepare(connection, fresh, sql, Int32(parameters.count), types)
                defer { PQclear(result) }
                try check(result, sql)
                prepared[sql] = fresh
                name = fresh
            }
        }
        var copies = parameters.map { $0.flatMap { strdup($0) } }
        defer { for copy in copies { free(copy) } }
        let result = copies.withUnsafeMutableBufferPointer { buffer -> OpaquePointer? in
            buffer.baseAddress.map { base in
                base.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: parameters.count) { values in
                    if let name { return PQexecPrepared(connection, name, Int32(parameters.count), values, nil, nil, 0) }
                    return PQexecParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
                }
            } ?? (name.map { PQexecPrepared(connection, $0, 0, nil, nil, nil, 0) }
                  ?? PQexecParams(connection, sql, 0, nil, nil, nil, nil, 0))
        }
        defer { PQclear(result) }
        try check(result, sql)
        afterStatement?(sql)
        guard let result else { return [] }
        let rows = Int(PQntuples(result))
        let columns = Int(PQnfields(result))
        var table: [[String?]] = []
        table.reserveCapacity(rows)
        for row in 0..<rows {
            var values: [String?] = []
            for column in 0..<columns {
                if PQgetisnull(result, Int32(row), Int32(column)) != 0 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
                }
            }
            table.append(values)
        }
        return table
    }

    /// `work` inside BEGIN and COMMIT, rolled back when it throws.
    func transaction<T>(_ work: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try work()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func check(_ result: OpaquePointer?, _ sql: String) throws {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK else { return }
        let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "no connection"
        let lost = connection.map { PQstatus($0) != CONNECTION_OK } ?? true
        let state = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        throw Failure(description: message.trimmingCharacters(in: .whitespacesAndNewlines)
                          + " (in: \(sql.prefix(80).replacingOccurrences(of: "\n", with: " ")))",
                      connectionLost: lost, sqlState: state)
    }
}
