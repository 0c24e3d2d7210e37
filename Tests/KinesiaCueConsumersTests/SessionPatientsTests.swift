import Testing

@testable import KinesiaCueConsumers

struct SessionPatientsTests {
    @Test func aRunOfAnotherPatientIsGreetedAnewAndOneOfTheSamePatientIsNot() {
        var patients = SessionPatients()
        var greeted = false
        greeted = patients.runStarted(on: "left", patient: "demo-a")
        #expect(!greeted)
        patients.heard(from: "left")
        greeted = patients.runStarted(on: "left", patient: "demo-a")
        #expect(!greeted)
        greeted = patients.runStarted(on: "left", patient: "demo-b")
        #expect(greeted)
        greeted = patients.runStarted(on: "left", patient: nil)
        #expect(greeted)
        greeted = patients.runStarted(on: "left", patient: nil)
        #expect(!greeted)
    }

    /// The demo's failure: the voice started after the first patient's run record went out, heard
    /// that patient's events, then the second patient's run record. It said "I can see you
    /// again" to the second patient.
    @Test func aRunAfterEventsOfARunNeverSeenBeginningIsGreetedAnew() {
        var patients = SessionPatients()
        var greeted = false
        patients.heard(from: "left")
        patients.heard(from: "left")
        #expect(patients.bySession["left"] == .unknown)
        greeted = patients.runStarted(on: "left", patient: "demo-b")
        #expect(greeted)
        #expect(patients.bySession["left"] == .named("demo-b"))
    }

    @Test func eventsAfterARunRecordDoNotForgetItsPatient() {
        var patients = SessionPatients()
        var greeted = false
        _ = patients.runStarted(on: "left", patient: "demo-a")
        patients.heard(from: "left")
        #expect(patients.bySession["left"] == .named("demo-a"))
        greeted = patients.runStarted(on: "left", patient: "demo-a")
        #expect(!greeted)
    }

    @Test func eachSessionKeepsItsOwnPatient() {
        var patients = SessionPatients()
        var greeted = false
        patients.heard(from: "left")
        _ = patients.runStarted(on: "right", patient: "demo-a")
        patients.heard(from: "right")
        greeted = patients.runStarted(on: "right", patient: "demo-a")
        #expect(!greeted)
        greeted = patients.runStarted(on: "left", patient: "demo-a")
        #expect(greeted)
    }
}
