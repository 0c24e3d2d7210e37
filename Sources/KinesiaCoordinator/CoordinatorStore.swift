import KinesiaControl
import KinesiaStore

/// The coordinator's desired state, kept in SQLite (`STATE/coordinator.db`): every session
/// plan with its run, the next run number, the last assignment epoch, the latest resume of each
/// run (where it goes on, for a worker of another box), and the request ids of the last
/// commands done with their answers. The changes a message makes are one transaction
/// (``transaction(_:)``), committed before the coordinator sends what follows from them, so
/// that a coordinator killed and restarted brings the same sessions back, never reuses a run
/// number, never sends an epoch lower than one already sent, and does a command sent again
/// (the same request id) only once.
final class CoordinatorStore {
    private let database: SQLiteDatabase
    /// The database's path.
    let path: String

    /// Opens (or makes) the database at `path`.
    ///
    /// - Throws: ``SQLiteError``.
    init(path: String) throws(SQLiteError) {
        self.path = path
        database = try SQLiteDatabase(path: path)
        try database.execute(
            """
            PRAGMA journal_mode=WAL;
            PRAGMA synchronous=FULL;
            CREATE TABLE IF NOT EXISTS plans (session TEXT PRIMARY KEY, plan TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS resumes (session TEXT PRIMARY KEY, resume TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS requests (
                position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, answer TEXT NOT NULL);
            """)
    }

    /// What was kept: the plans that read back, the counters, and a message for each plan
    /// that does not (passed over, never trusted).
    func load() throws(SQLiteError) -> (
        plans: [SessionPlan], nextRun: UInt64, epoch: UInt64, answers: [ControlAnswer],
        resumes: [SessionKey: WorkerAssignment.GivenResume], unreadable: [String]
    ) {
        var plans: [SessionPlan] = []
        var unreadable: [String] = []
        let rows = try database.prepare("SELECT session, plan FROM plans ORDER BY session").rows {
            ($0.text(0), $0.text(1))
        }
        for (session, text) in rows {
            do {
                plans.append(try ControlMessage.plan(decoding: Array(text.utf8)))
            } catch {
                unreadable.append("the plan of \(session) does not read back (\(error)): passed over")
            }
        }
        func counter(_ name: String) throws(SQLiteError) -> UInt64 {
            let rows = try database.prepare("SELECT value FROM counters WHERE name = ?").rows([.text(name)]) {
                $0.text(0)
            }
            return rows.first.flatMap { UInt64($0) } ?? 0
        }
        var answers: [ControlAnswer] = []
        let kept = try database.prepare("SELECT id, answer FROM requests ORDER BY position").rows {
            ($0.text(0), $0.text(1))
        }
        for (id, text) in kept {
            guard case .answer(let answer)? = try? ControlMessage(decoding: Array(text.utf8)), answer.id == id
            else {
                unreadable.append("the answer to request \(id) does not read back: passed over")
                continue
            }
            answers.append(answer)
        }
        var resumes: [SessionKey: WorkerAssignment.GivenResume] = [:]
        let stored = try database.prepare("SELECT session, resume FROM resumes ORDER BY session").rows {
            ($0.text(0), $0.text(1))
        }
        for (session, text) in stored {
            guard let key = try? SessionKey(parsing: session),
                let given = try? ControlMessage.givenResume(decoding: Array(text.utf8))
            else {
                unreadable.append("the resume of \(session)'s run does not read back: passed over")
                continue
            }
            resumes[key] = given
        }
        return (plans, max(1, try counter("nextRun")), try counter("epoch"), answers, resumes, unreadable)
    }

    /// Keeps the answer of a command done (its request id), and the last `limit` of them only.
    func remember(_ answer: ControlAnswer, limit: Int) throws(SQLiteError) {
        try database.prepare("INSERT OR REPLACE INTO requests (id, answer) VALUES (?, ?)").run([
            .text(answer.id), .text(String(decoding: ControlMessage.answer(answer).encoded(), as: UTF8.self)),
        ])
        try database.prepare(
            "DELETE FROM requests WHERE position <= (SELECT MAX(position) FROM requests) - ?"
        ).run([.integer(Int64(limit))])
    }

    /// Runs `body` in one transaction: all of its changes are kept, or none.
    func transaction(_ body: () throws(SQLiteError) -> Void) throws(SQLiteError) {
        try database.execute("BEGIN IMMEDIATE")
        do {
            try body()
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }

    /// Keeps `plan` (replacing the plan of its session).
    func save(_ plan: SessionPlan) throws(SQLiteError) {
        try database.prepare("INSERT OR REPLACE INTO plans (session, plan) VALUES (?, ?)").run([
            .text(plan.key.description), .text(String(decoding: ControlMessage.encoded(plan), as: UTF8.self)),
        ])
    }

    /// Forgets the plan of `key`, and its run's resume.
    func remove(_ key: SessionKey) throws(SQLiteError) {
        try database.prepare("DELETE FROM plans WHERE session = ?").run([.text(key.description)])
        try database.prepare("DELETE FROM resumes WHERE session = ?").run([.text(key.description)])
    }

    /// Keeps the latest resume of `key`'s run (`nil`: forgets it).
    func save(_ given: WorkerAssignment.GivenResume?, of key: SessionKey) throws(SQLiteError) {
        guard let given else {
            try database.prepare("DELETE FROM resumes WHERE session = ?").run([.text(key.description)])
            return
        }
        try database.prepare("INSERT OR REPLACE INTO resumes (session, resume) VALUES (?, ?)").run([
            .text(key.description), .text(String(decoding: ControlMessage.encoded(given), as: UTF8.self)),
        ])
    }

    /// Keeps the counters.
    func save(nextRun: UInt64, epoch: UInt64) throws(SQLiteError) {
        let statement = try database.prepare("INSERT OR REPLACE INTO counters (name, value) VALUES (?, ?)")
        try statement.run([.text("nextRun"), .text(String(nextRun))])
        try statement.run([.text("epoch"), .text(String(epoch))])
    }

    /// Closes the database.
    func close() { database.close() }
}
