import KinesiaWire

extension Topology {
    /// Checks what decoding cannot: unique names, known `after` references, a start order
    /// without cycles, a usable bus address and consistent restart limits.
    ///
    /// - Throws: ``TopologyValidationError`` naming the field (`processes[1].after`).
    public func validate() throws(TopologyValidationError) {
        if let bus {
            try Self.validateBus(bus)
        }
        guard !processes.isEmpty else {
            throw TopologyValidationError(field: "processes", message: "no process to run")
        }
        var seen: [String: Int] = [:]
        for (index, process) in processes.enumerated() {
            let field = "processes[\(index)]"
            try Self.validateName(process.name, field: "\(field).name")
            if let first = seen[process.name] {
                throw TopologyValidationError(
                    field: "\(field).name",
                    message: "\"\(process.name)\" is already the name of processes[\(first)]")
            }
            seen[process.name] = index
            if let executable = process.executable, executable.isEmpty {
                throw TopologyValidationError(
                    field: "\(field).executable", message: "empty (leave it out to run kinesia)")
            }
            if process.executable == nil, process.command.first?.isEmpty ?? true {
                throw TopologyValidationError(
                    field: "\(field).command",
                    message: "needs a kinesia subcommand, e.g. [\"broker\"]")
            }
            for key in process.environment.keys where key.isEmpty || key.contains("=") {
                throw TopologyValidationError(
                    field: "\(field).environment", message: "bad variable name \"\(key)\"")
            }
        }
        for (index, process) in processes.enumerated() {
            for (position, name) in process.after.enumerated() {
                let field = "processes[\(index)].after[\(position)]"
                guard seen[name] != nil else {
                    throw TopologyValidationError(field: field, message: "no process is named \"\(name)\"")
                }
                guard name != process.name else {
                    throw TopologyValidationError(field: field, message: "a process cannot come after itself")
                }
            }
        }
        if let cycle = startOrderCycle() {
            let names = cycle.map { processes[$0].name }
            throw TopologyValidationError(
                field: "processes[\(cycle[0])].after",
                message: "the start order has a cycle: \(names.joined(separator: " after ")) "
                    + "(brokers always start first, ingests after workers and consumers)")
        }
        if restart.maxDelay < restart.initialDelay {
            throw TopologyValidationError(
                field: "restart.maxDelaySeconds",
                message: "less than initialDelaySeconds (\(restart.initialDelay) > \(restart.maxDelay))")
        }
    }

    /// For every process (by index), the indices of the processes that must be running before
    /// it starts: its `after` list plus the role order (every broker before anything else,
    /// every worker and consumer before an ingest).
    public func startDependencies() -> [[Int]] {
        let indexOfName = Dictionary(
            processes.enumerated().map { ($0.element.name, $0.offset) },
            uniquingKeysWith: { first, _ in first })
        return processes.enumerated().map { index, process in
            var dependencies = Set(process.after.compactMap { indexOfName[$0] })
            for (other, candidate) in processes.enumerated() where other != index {
                if Self.roleStartRank(candidate.role) < Self.roleStartRank(process.role) {
                    dependencies.insert(other)
                }
            }
            return dependencies.sorted()
        }
    }

    /// Brokers 0, workers and consumers 1, ingests 2.
    private static func roleStartRank(_ role: ProcessRole) -> Int {
        switch role {
        case .broker: 0
        case .worker, .consumer: 1
        case .ingest: 2
        }
    }

    /// A cycle in ``startDependencies()`` (as process indices, each one after the next), or `nil`.
    private func startOrderCycle() -> [Int]? {
        let dependencies = startDependencies()
        enum Mark { case unvisited, visiting, done }
        var marks = [Mark](repeating: .unvisited, count: processes.count)
        var stack: [Int] = []
        func visit(_ node: Int) -> [Int]? {
            switch marks[node] {
            case .done: return nil
            case .visiting:
                let start = stack.firstIndex(of: node) ?? 0
                return Array(stack[start...]) + [node]
            case .unvisited: break
            }
            marks[node] = .visiting
            stack.append(node)
            for next in dependencies[node] {
                if let cycle = visit(next) { return cycle }
            }
            stack.removeLast()
            marks[node] = .done
            return nil
        }
        for node in processes.indices {
            if let cycle = visit(node) { return cycle }
        }
        return nil
    }

    /// The rule and the message of every command (``Topic/isValidName(_:)``): a process name
    /// becomes the process's `health/` topic and `KINESIA_PROCESS_NAME`.
    private static func validateName(_ name: String, field: String) throws(TopologyValidationError) {
        guard Topic.isValidName(name) else {
            throw TopologyValidationError(
                field: field, message: Topic.invalidNameMessage(name, role: "process name"))
        }
    }

    private static func validateBus(_ bus: String) throws(TopologyValidationError) {
        guard !bus.isEmpty else {
            throw TopologyValidationError(field: "bus", message: "empty (leave it out for the default)")
        }
        guard bus.contains("://") else { return }
        guard bus.hasPrefix("tcp://") else {
            throw TopologyValidationError(
                field: "bus", message: "\"\(bus)\" is neither a directory nor tcp://HOST:PORT")
        }
        let address = bus.dropFirst("tcp://".count)
        guard let colon = address.lastIndex(of: ":"), colon != address.startIndex,
            let port = Int(address[address.index(after: colon)...]), (1...65534).contains(port)
        else {
            throw TopologyValidationError(
                field: "bus",
                message: "\"\(bus)\" is not tcp://HOST:PORT with PORT from 1 to 65534 (PORT+1 is used too)")
        }
    }
}
