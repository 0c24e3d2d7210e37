import CSQLite

/// An SQLite error: the result code and SQLite's message.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The (extended) result code, `SQLITE_CONSTRAINT`...
    public var code: Int32
    /// What SQLite said, with what was being done.
    public var message: String

    /// Makes an error.
    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// Whether it is a write refused because the file, its directory or its file system is
    /// read-only (`SQLITE_READONLY` and its extended codes).
    public var isReadOnly: Bool { code & 0xff == SQLITE_READONLY }

    /// A database that is not open any more.
    public static let closed = SQLiteError(code: SQLITE_MISUSE, message: "the database is closed")
}

/// One SQLite connection (`sqlite3 *`), closed by ``close()`` or when the value goes away.
///
/// Not `Sendable`: a connection is used by one thread. Statements it prepared must not outlive it
/// (``SQLiteStatement`` finalises its handle in its own `deinit`, and ``close()`` uses
/// `sqlite3_close_v2`, which waits for them).
///
/// ```swift
/// let db = try SQLiteDatabase(path: "record.sqlite")
/// try db.execute("PRAGMA journal_mode=WAL")
/// let insert = try db.prepare("INSERT INTO t(x) VALUES (?)")
/// try insert.bind(1, 42); try insert.run()
/// ```
public final class SQLiteDatabase {
    private var handle: OpaquePointer?

    /// How a connection opens its file.
    public enum Access: Hashable, Sendable {
        /// Reads and writes, creating the file when missing. SQLite falls back to reading only
        /// when the file cannot be written (see ``isReadOnly``).
        case readWriteCreate
        /// Reads only (`SQLITE_OPEN_READONLY`): never writes the file, never creates it.
        case readOnly
        /// Reads only a file that nothing changes meanwhile (`immutable=1`): no lock, no `-wal`
        /// or `-shm` file read or made, so it works on read-only media where ``readOnly`` cannot
        /// open a WAL database whose `-shm` file is missing. Rows in a `-wal` file are not seen.
        case immutable
    }

    /// Opens (or creates) the database at `path`.
    /// - Parameters:
    ///   - path: The file (a plain path, never a URI: `?` and `#` are file name characters).
    ///   - access: How it is opened.
    /// - Throws: ``SQLiteError`` when it cannot be opened (a directory, no permission, not a
    ///   database).
    public init(path: String, access: Access = .readWriteCreate) throws(SQLiteError) {
        var db: OpaquePointer?
        let code: Int32
        switch access {
        case .readWriteCreate:
            code = sqlite3_open_v2(
                path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        case .readOnly:
            code = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        case .immutable:
            code = sqlite3_open_v2(
                Self.fileURI(path) + "?immutable=1", &db,
                SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        }
        guard code == SQLITE_OK, let db else {
            let message =
                db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(db)
            throw SQLiteError(code: code, message: "cannot open \(path): \(message)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5_000)
    }

    /// `file:` and `path` with every byte that is not a letter, a digit, `/`, `-`, `.`, `_` or
    /// `~` percent-encoded: a URI that names exactly that file.
    static func fileURI(_ path: String) -> String {
        var uri = "file:"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "-"),
                UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                uri.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                uri += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return uri
    }

    /// Whether the connection can only read its main database (`sqlite3_db_readonly`): opened
    /// so, or a file SQLite could open only for reading (its permissions, a read-only mount).
    public var isReadOnly: Bool {
        handle.map { sqlite3_db_readonly($0, "main") == 1 } ?? true
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Closes the connection; later calls throw ``SQLiteError/closed``. Idempotent.
    public func close() {
        sqlite3_close_v2(handle)
        handle = nil
    }

    /// The open handle.
    func open() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw .closed }
        return handle
    }

    /// The error of the last call on this connection, with `context`.
    func error(_ code: Int32, _ context: String) -> SQLiteError {
        let message =
            handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return SQLiteError(code: code, message: "\(context): \(message)")
    }

    /// Runs one or more statements that return no rows of interest.
    public func execute(_ sql: String) throws(SQLiteError) {
        let db = try open()
        let code = sqlite3_exec(db, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, "\(sql.prefix(60))") }
    }

    /// Prepares one statement.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(database: self, sql: sql)
    }

    /// The first column of the first row of `sql` as an integer (`PRAGMA user_version`...).
    public func integer(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.integer(0)
    }

    /// The first column of the first row of `sql` as text (`PRAGMA journal_mode`...).
    public func text(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE (0 when `INSERT OR IGNORE` ignored it).
    public var changes: Int {
        handle.map { Int(sqlite3_changes($0)) } ?? 0
    }
}

/// One prepared statement (`sqlite3_stmt *`), finalised when the value goes away.
public final class SQLiteStatement {
    private let database: SQLiteDatabase
    private let handle: OpaquePointer

    init(database: SQLiteDatabase, sql: String) throws(SQLiteError) {
        let db = try database.open()
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw database.error(code, "cannot prepare \(sql.prefix(60))")
        }
        self.database = database
        handle = statement
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// A value to bind.
    public enum Value: Hashable, Sendable {
        /// SQL NULL.
        case null
        /// An integer.
        case integer(Int64)
        /// A real number.
        case real(Double)
        /// UTF-8 text.
        case text(String)
    }

    /// Binds `values` to parameters 1, 2, 3... after a reset.
    public func bind(_ values: [Value]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(handle, index)
            case .integer(let v): code = sqlite3_bind_int64(handle, index, v)
            case .real(let v): code = sqlite3_bind_double(handle, index, v)
            case .text(let v): code = sqlite3_bind_text(handle, index, v, -1, kinesia_sqlite_transient())
            }
            guard code == SQLITE_OK else { throw database.error(code, "cannot bind parameter \(index)") }
        }
    }

    /// Steps once: `true` when a row is there to read, `false` when done.
    public func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(code, "step")
        }
    }

    /// Binds `values` and runs the statement to its end.
    public func run(_ values: [Value] = []) throws(SQLiteError) {
        try bind(values)
        while try step() {}
    }

    /// Binds `values` and reads every row with `read`.
    public func rows<Row>(_ values: [Value] = [], _ read: (SQLiteStatement) -> Row) throws(SQLiteError)
        -> [Row]
    {
        try bind(values)
        var result: [Row] = []
        while try step() { result.append(read(self)) }
        return result
    }

    /// Column `index` of the current row as an integer.
    public func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Column `index` of the current row as a real number; `nil` when NULL.
    public func real(_ index: Int32) -> Double? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_double(handle, index)
    }

    /// Whether column `index` of the current row is NULL.
    public func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Column `index` of the current row as text; `""` when NULL.
    public func text(_ index: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, index) else { return "" }
        return String(cString: bytes)
    }
}
