public import KinesiaAnalytics
public import KinesiaMotion

/// What one report page shows: a camera's (a patient's) sessions with their measured angle and
/// events, and the camera's analytics. Values only; ``ReportPage`` renders it.
public struct SessionReport: Sendable {
    /// One session of the camera (`left`, `right`...).
    public struct Session: Sendable {
        /// The session's name.
        public var name: String
        /// The measured angle (smoothed primary measure) over pose time, from its snapshots;
        /// `nil` where it was not measurable.
        public var samples: [(t: Double, value: Double?)]
        /// Its events at their pose times, in order.
        public var events: [(t: Double, event: MotionEvent)]
        /// The baseline measured elsewhere (an analytics session's, for its side), shown when the
        /// session's own events have none.
        public var measuredBaseline: Double?

        /// Makes a session.
        public init(
            name: String, samples: [(t: Double, value: Double?)], events: [(t: Double, event: MotionEvent)],
            measuredBaseline: Double? = nil
        ) {
            self.name = name
            self.samples = samples
            self.events = events
            self.measuredBaseline = measuredBaseline
        }

        /// The judged reps (clean and rejected), in order.
        public var reps: [Rep] {
            events.compactMap {
                switch $0.event {
                case .repCompleted(let rep), .repRejected(let rep): rep
                default: nil
                }
            }
        }

        /// The form faults at their times.
        public var faults: [(t: Double, fault: FormFeedback)] {
            events.compactMap { if case .formFault(let fault) = $0.event { ($0.t, fault) } else { nil } }
        }

        /// The baseline: the session's own (its last ``MotionEvent/baselineCompleted(_:)``), else
        /// ``measuredBaseline``.
        public var baseline: Double? {
            events.lazy.compactMap { if case .baselineCompleted(let value) = $0.event { value } else { nil } }
                .last ?? measuredBaseline
        }
    }

    /// The page's title (the camera, or the patient).
    public var title: String
    /// The sessions, in the order shown.
    public var sessions: [Session]
    /// The analytics records of the camera, in order.
    public var analytics: [(t: Double, record: AnalyticsRecord)]
    /// What the page shows, a line each, under its title (a run's exercise, side, patient and
    /// thresholds).
    public var details: [String]

    /// Makes a report.
    public init(
        title: String, sessions: [Session], analytics: [(t: Double, record: AnalyticsRecord)],
        details: [String] = []
    ) {
        self.title = title
        self.sessions = sessions
        self.analytics = analytics
        self.details = details
    }
}
