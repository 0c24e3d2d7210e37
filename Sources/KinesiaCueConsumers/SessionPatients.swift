import KinesiaWire

/// Who a voice believes is in front of each session it follows, to greet another patient anew
/// and welcome the same one back: the patient of the session's last run record (`runStarted` on
/// `session/`), or someone it never learned.
///
/// A voice follows its topics live: a run record sent before its subscription reached the
/// worker (a voice started late, or restarted during a run) never arrives. It then knows only the
/// stream the session's events come on (a run's events and its run records share one stream).
/// A `runStarted` on that stream is the run it joined (its record late, or sent again by a worker
/// that rebuilt the run): the same patient. One on another stream is a new run whose patient it
/// cannot compare with the last: it greets them (`"I can see you"`), never welcomes them back
/// (`"I can see you again"`). A greeting said to someone returning is harmless, a welcome back
/// said to a stranger is wrong.
///
/// A value with no I/O:
///
/// ```swift
/// var patients = SessionPatients()
/// patients.heard(from: "left", stream: joined)                              // a run never seen begin
/// patients.runStarted(on: "left", patient: "demo-a", stream: joined)        // false: that same run
/// patients.runStarted(on: "left", patient: "demo-b", stream: next)          // true: greet anew
/// ```
struct SessionPatients: Sendable, Equatable {
    /// What the voice knows of a session's patient.
    enum Known: Sendable, Equatable {
        /// The patient of the session's last run record (`nil` inside: the run named none).
        case named(String?)
        /// The session was heard, on `stream`, before any run record of it arrived.
        case unknown(stream: StreamID)
    }

    private(set) var bySession: [String: Known] = [:]

    /// The voice heard an event of `session` on `stream`: a session heard with no run record
    /// yet has an unknown patient, on the latest stream heard.
    mutating func heard(from session: String, stream: StreamID) {
        switch bySession[session] {
        case nil, .unknown: bySession[session] = .unknown(stream: stream)
        case .named: break
        }
    }

    /// A run of `patient` started on `session`, its record sent on `stream`.
    /// - Returns: Whether the voice greets anew: the session's last patient was another one, or
    ///   one it never learned on another stream. A first run of a session never heard needs no
    ///   greeting anew (nothing was said to anyone yet).
    mutating func runStarted(on session: String, patient: String?, stream: StreamID) -> Bool {
        defer { bySession[session] = .named(patient) }
        switch bySession[session] {
        case nil: return false
        case .unknown(let heard): return heard != stream
        case .named(let previous): return previous != patient
        }
    }
}
