import Foundation
import KinesiaMotion
import KinesiaSimulation
import Testing

struct SimulationSpecTests {
    @Test func parsesTheExerciseAndEveryKey() throws {
        let spec = try SimulationSpec(
            parsing: "sim:squat,seed=7,reps=5,side=both,fps=60,size=720x1280,noise=1.5,faults=0.2,"
                + "dropouts=off,brokenhold=no,start=100")
        #expect(spec.exercise == .squat)
        #expect(spec.options.seed == 7)
        #expect(spec.options.reps == 5)
        #expect(spec.options.sides == .together)
        #expect(spec.options.frameRate == 60)
        #expect(spec.options.imageSize == CGSize(width: 720, height: 1280))
        #expect(spec.options.noise == 1.5)
        #expect(spec.options.faultRate == 0.2)
        #expect(spec.options.dropouts == false)
        #expect(spec.options.brokenHold == false)
        #expect(spec.options.startTime == 100)
        let simulation = try spec.makeSimulator().run()
        #expect(simulation.poses.first?.timestamp == 100)
        #expect(simulation.poses.first?.imageSize == CGSize(width: 720, height: 1280))
    }

    @Test func bareExerciseTakesTheDefaultsAndBothSides() throws {
        let spec = try SimulationSpec(parsing: "sim:shoulderAbduction")
        #expect(spec.exercise == .shoulderAbduction)
        #expect(spec.options.seed == SimulationOptions().seed)
        #expect(spec.options.sides == .alternating)
        #expect(try SimulationSpec(parsing: "sim:wallSit").options.sides == .together)
        #expect(try SimulationSpec(parsing: "sim:kneeFlexion,side=left").options.sides == .left)
        #expect(try SimulationSpec(parsing: "sim:kneeFlexion,side=RIGHT").options.sides == .right)
        #expect(
            try SimulationSpec(parsing: "sim:kneeFlexion, width=640 ,height=480").options.imageSize
                == CGSize(width: 640, height: 480))
        #expect(SimulationSpec.isSimulation("sim:squat"))
        #expect(!SimulationSpec.isSimulation("recording.jsonl"))
    }

    @Test func unknownExerciseListsTheValidOnes() {
        let valid = Exercise.catalog.map(\.id)
        #expect(throws: SimulationSpecError.unknownExercise("plank", valid: valid)) {
            try SimulationSpec(parsing: "sim:plank,seed=1")
        }
        #expect(throws: SimulationSpecError.unknownExercise("", valid: valid)) {
            try SimulationSpec(parsing: "sim:")
        }
        let text = SimulationSpecError.unknownExercise("plank", valid: valid).description
        for id in valid { #expect(text.contains(id)) }
    }

    @Test func badKeysAndValuesAreTypedErrors() {
        #expect(throws: SimulationSpecError.notASimulation("squat")) { try SimulationSpec(parsing: "squat") }
        #expect(throws: SimulationSpecError.malformedOption("seed")) {
            try SimulationSpec(parsing: "sim:squat,seed")
        }
        #expect(throws: SimulationSpecError.unknownKey("speed", valid: SimulationSpec.keys)) {
            try SimulationSpec(parsing: "sim:squat,speed=2")
        }
        #expect(throws: SimulationSpecError.duplicateKey("seed")) {
            try SimulationSpec(parsing: "sim:squat,seed=1,seed=2")
        }
        #expect(throws: SimulationSpecError.conflictingKeys("size", "width")) {
            try SimulationSpec(parsing: "sim:squat,size=640x480,width=800")
        }
        let bad: [(String, String)] = [
            ("seed", "-1"), ("seed", "x"), ("reps", "0"), ("reps", "1.5"), ("side", "up"), ("fps", "0"),
            ("fps", "4"),
            ("fps", "nan"), ("fps", "inf"), ("size", "640"), ("size", "10x10"), ("noise", "-1"),
            ("faults", "2"), ("dropouts", "maybe"), ("start", "nan"),
        ]
        for (key, value) in bad {
            #expect(throws: SimulationSpecError.self, "\(key)=\(value)") {
                try SimulationSpec(parsing: "sim:squat,\(key)=\(value)")
            }
            do {
                _ = try SimulationSpec(parsing: "sim:squat,\(key)=\(value)")
            } catch {
                guard case .invalidValue(let k, let v, _) = error else {
                    Issue.record("\(key)=\(value): \(error)")
                    continue
                }
                #expect(k == key && v == value)
            }
        }
        #expect(
            SimulationSpecError.invalidValue(key: "fps", value: "0", expected: "poses a second, 1...1000")
                .description
                == "invalid fps=0: expected poses a second, 1...1000")
    }

    @Test(arguments: Exercise.catalog)
    func everyCatalogExerciseParsesAndSimulates(exercise: Exercise) throws {
        let spec = try SimulationSpec(parsing: "sim:\(exercise.id),reps=1,seed=3")
        #expect(spec.exercise == exercise)
        #expect(try spec.makeSimulator().truth.reps.isEmpty == false)
    }
}
