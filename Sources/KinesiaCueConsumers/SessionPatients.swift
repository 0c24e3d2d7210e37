/// Who a voice believes is in front of each session it follows, to greet another patient anew
/// and welcome the same one back: the patient of the session's last run record (`runStarted` on
/// `session/`), or someone it never learned.
///
/// A voice follows its topics live: a run record sent before its subscription reached the
/// worker (a voice started late, or restarted during a run) never arrives. When the next run
/// starts, the voice does not know who was there before. It then greets the patient of the new
/// run as a new patient (`"I can see you"`), never welcomes them back (`"I can see you again"`):
/// a greeting said to someone returning is harmless, a welcome back said to a stranger is wrong.
///
/// A value with no I/O:
///
/// ```swift
/// var patients = SessionPatients()
/// patients.heard(from: "left")                                       // a run we never saw begin
/// patients.runStarted(on: "left", patient: "demo-b")                 // true: greet anew
/// patients.runStarted(on: "left", patient: "demo-b")                 // false: the same patient
/// ```
struct SessionPatients: Sendable, Equatable {
    /// What the voice knows of a session's patient.
    enum Known: Sendable, Equatable {
        /// The patient of the session's last run record (`nil` inside: the run named none).
        case named(String?)
        /// The session was heard before any run record of it arrived.
        case unknown
    }

    private(set) var bySession: [String: Known] = [:]

    /// The voice heard an event of `session`: a session heard with no run record yet has an
    /// unknown patient.
    mutating func heard(from session: String) {
        if bySession[session] == nil { bySession[session] = .unknown }
    }

    /// A run of `patient` started on `session`.
    /// - Returns: Whether the voice greets anew: the session was heard before and its patient was
    ///   another one, or one it never learned. A first run of a session never heard needs no
    ///   greeting anew (nothing was said to anyone yet).
    mutating func runStarted(on session: String, patient: String?) -> Bool {
        defer { bySession[session] = .named(patient) }
        switch bySession[session] {
        case nil: return false
        case .unknown: return true
        case .named(let previous): return previous != patient
        }
    }
}
