import KinesiaWire
import Testing

@testable import KinesiaCueConsumers

struct SessionPatientsTests {
    let first = StreamID(1)
    let second = StreamID(2)

    @Test func aRunOfAnotherPatientIsGreetedAnewAndOneOfTheSamePatientIsNot() {
        var patients = SessionPatients()
        var greeted = patients.runStarted(on: "left", patient: "demo-a", stream: first)
        #expect(!greeted, "a first run: nothing was said to anyone yet")
        patients.heard(from: "left", stream: first)
        greeted = patients.runStarted(on: "left", patient: "demo-a", stream: second)
        #expect(!greeted)
        greeted = patients.runStarted(on: "left", patient: "demo-b", stream: StreamID(3))
        #expect(greeted)
        greeted = patients.runStarted(on: "left", patient: nil, stream: StreamID(4))
        #expect(greeted)
        greeted = patients.runStarted(on: "left", patient: nil, stream: StreamID(5))
        #expect(!greeted)
    }

    /// The demo's failure: the voice started after the first patient's run record went out, heard
    /// that patient's events, then the second patient's run record. It said "I can see you
    /// again" to the second patient.
    @Test func aRunOnAnotherStreamAfterEventsOfARunNeverSeenBeginningIsGreetedAnew() {
        var patients = SessionPatients()
        patients.heard(from: "left", stream: first)
        patients.heard(from: "left", stream: first)
        #expect(patients.bySession["left"] == .unknown(stream: first))
        let greeted = patients.runStarted(on: "left", patient: "demo-b", stream: second)
        #expect(greeted)
        #expect(patients.bySession["left"] == .named("demo-b"))
    }

    /// The run record of the run the voice joined (late, or sent again by a worker that rebuilt
    /// the run): the same patient, not a new one.
    @Test func theRecordOfTheRunHeardIsNoNewPatient() {
        var patients = SessionPatients()
        patients.heard(from: "left", stream: first)
        let greeted = patients.runStarted(on: "left", patient: "demo-a", stream: first)
        #expect(!greeted)
        #expect(patients.bySession["left"] == .named("demo-a"))
    }

    /// A sender that started over without a run record (a worker restarted): the latest stream
    /// heard is the one a run record is compared with.
    @Test func theLatestStreamHeardIsTheOneCompared() {
        var patients = SessionPatients()
        patients.heard(from: "left", stream: first)
        patients.heard(from: "left", stream: second)
        let greeted = patients.runStarted(on: "left", patient: "demo-a", stream: second)
        #expect(!greeted)
    }

    @Test func eventsAfterARunRecordDoNotForgetItsPatient() {
        var patients = SessionPatients()
        _ = patients.runStarted(on: "left", patient: "demo-a", stream: first)
        patients.heard(from: "left", stream: first)
        #expect(patients.bySession["left"] == .named("demo-a"))
        let greeted = patients.runStarted(on: "left", patient: "demo-a", stream: second)
        #expect(!greeted)
    }

    @Test func eachSessionKeepsItsOwnPatient() {
        var patients = SessionPatients()
        patients.heard(from: "left", stream: first)
        _ = patients.runStarted(on: "right", patient: "demo-a", stream: second)
        patients.heard(from: "right", stream: second)
        var greeted = patients.runStarted(on: "right", patient: "demo-a", stream: StreamID(3))
        #expect(!greeted)
        greeted = patients.runStarted(on: "left", patient: "demo-a", stream: StreamID(4))
        #expect(greeted)
    }
}
