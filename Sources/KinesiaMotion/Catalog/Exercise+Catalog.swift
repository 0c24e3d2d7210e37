extension Exercise {
    /// Arm raised forward in the sagittal plane.
    public static let shoulderFlexion = Exercise(
        id: "shoulderFlexion", view: .side, measure: .shoulderElevation,
        kind: .reps(start: 30, end: 20, minPeak: 60),
        formRules: [
            FormRule(.keepElbowStraight, .elbowFlexion, above: 30),
            FormRule(.keepTrunkUpright, .trunkLean, above: 15),
        ])

    /// Arm raised to the side, facing the camera.
    public static let shoulderAbduction = Exercise(
        id: "shoulderAbduction", view: .front, measure: .shoulderElevation,
        kind: .reps(start: 30, end: 20, minPeak: 60),
        formRules: [
            FormRule(.keepElbowStraight, .elbowFlexion, above: 30),
            FormRule(.keepTrunkUpright, .trunkLean, above: 15),
            FormRule(.keepShouldersLevel, .shoulderTilt, above: 12),
        ])

    /// Elbow curl.
    public static let elbowFlexion = Exercise(
        id: "elbowFlexion", view: .sideOrFront, measure: .elbowFlexion,
        kind: .reps(start: 35, end: 20, minPeak: 70),
        formRules: [FormRule(.keepUpperArmStill, .upperArmDrift, above: 20)])

    /// Standing knee curl.
    public static let kneeFlexion = Exercise(
        id: "kneeFlexion", view: .side, measure: .kneeFlexion,
        kind: .reps(start: 30, end: 20, minPeak: 60),
        formRules: [
            FormRule(.keepThighStill, .thighDrift, above: 15),
            FormRule(.keepTrunkUpright, .trunkLean, above: 20),
        ])

    /// Seated knee extension.
    public static let kneeExtension = Exercise(
        id: "kneeExtension", view: .side, measure: .seatedKneeExtension,
        kind: .reps(start: 20, end: 10, minPeak: 45),
        formRules: [FormRule(.keepThighStill, .thighDrift, above: 15)])

    /// Standing knee raise.
    public static let hipFlexion = Exercise(
        id: "hipFlexion", view: .side, measure: .hipFlexion,
        kind: .reps(start: 25, end: 15, minPeak: 45),
        formRules: [FormRule(.keepTrunkUpright, .trunkLean, above: 15)])

    /// Standing leg raise to the side, facing the camera.
    public static let hipAbduction = Exercise(
        id: "hipAbduction", view: .front, measure: .hipAbduction,
        kind: .reps(start: 12, end: 6, minPeak: 20),
        formRules: [
            FormRule(.keepKneeStraight, .kneeFlexion, above: 20),
            FormRule(.keepTrunkUpright, .trunkLean, above: 10),
            FormRule(.keepHipsLevel, .hipTilt, above: 10),
        ])

    /// Squat, seen from the side.
    public static let squat = Exercise(
        id: "squat", view: .side, measure: .kneeFlexion,
        kind: .reps(start: 30, end: 20, minPeak: 60),
        formRules: [FormRule(.keepTrunkUpright, .trunkLean, above: 45)])

    /// Knee-to-wall lunge: the tibia's inclination (no toe points exist).
    public static let ankleDorsiflexion = Exercise(
        id: "ankleDorsiflexion", view: .side, measure: .tibiaInclination,
        kind: .reps(start: 10, end: 5, minPeak: 15),
        formRules: [])

    /// Wall sit: hold 30 s with the knee flexed at least 75 degrees.
    public static let wallSit = Exercise(
        id: "wallSit", view: .side, measure: .kneeFlexion,
        kind: .hold(threshold: 75, seconds: 30),
        formRules: [FormRule(.keepTrunkUpright, .trunkLean, above: 20)])

    /// The whole catalog, in the order of `CATALOG.md`.
    public static let catalog: [Exercise] = [
        .shoulderFlexion, .shoulderAbduction, .elbowFlexion, .kneeFlexion, .kneeExtension,
        .hipFlexion, .hipAbduction, .squat, .ankleDorsiflexion, .wallSit,
    ]

    /// The catalog exercise with identifier `id`, or `nil`.
    public static func named(_ id: String) -> Exercise? {
        catalog.first { $0.id == id }
    }
}
