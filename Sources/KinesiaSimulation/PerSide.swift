import KinesiaMotion

/// A value for each side of the body.
struct PerSide<Value: Sendable>: Sendable {
    var left: Value
    var right: Value

    init(_ left: Value, _ right: Value) {
        self.left = left
        self.right = right
    }

    init(both value: Value) {
        left = value
        right = value
    }

    subscript(side: BodySide) -> Value {
        get { side == .left ? left : right }
        set {
            if side == .left { left = newValue } else { right = newValue }
        }
    }
}

/// A point or vector in the simulator's body units (standing height 1), y down.
struct Vec: Sendable, Hashable {
    var x: Double
    var y: Double

    static let zero = Vec(x: 0, y: 0)

    static func + (a: Vec, b: Vec) -> Vec { Vec(x: a.x + b.x, y: a.y + b.y) }
    static func - (a: Vec, b: Vec) -> Vec { Vec(x: a.x - b.x, y: a.y - b.y) }
    static func * (k: Double, a: Vec) -> Vec { Vec(x: k * a.x, y: k * a.y) }

    var length: Double { (x * x + y * y).squareRoot() }
}
