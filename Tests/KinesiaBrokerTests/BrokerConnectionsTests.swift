import KinesiaBus
import Testing

@testable import KinesiaBroker

/// The broker's connection counts, from its monitors' events, with no socket.
struct BrokerConnectionsTests {
    @Test func countsOpenAcceptedAndRefusedConnectionsAndWarnsOncePerKind() {
        var connections = BrokerConnections(descriptorLimit: 100)
        var warnings: [String] = []
        for open in 1...95 {
            if let warning = connections.record(.accepted, openDescriptors: { open + 5 }) {
                warnings.append(warning)
            }
        }
        for _ in 0..<10 {
            if let warning = connections.record(.disconnected, openDescriptors: { 0 }) {
                warnings.append(warning)
            }
        }
        for _ in 0..<3 {
            if let warning = connections.record(.acceptFailed, openDescriptors: { 0 }) {
                warnings.append(warning)
            }
        }
        #expect(connections.counters == ["connections": 85, "connectionsAccepted": 95, "acceptFailures": 3])
        #expect(warnings.count == 2, "\(warnings)")
        #expect(
            warnings.first?.hasPrefix("85 connections open, near the limit of 100 file descriptors") == true)
        #expect(warnings.last?.hasPrefix("a connection was refused") == true)
    }
}
