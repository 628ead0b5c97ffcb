import BluetideBase
import BluetideHCI
import BluetideTransport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import BluetideHost

/// A measurement, not a test of speed (it asserts only that discovery worked): the time of a
/// whole-database discovery between two hosts on a virtual link, and the ATT requests each one
/// takes. Run it with `BLUETIDE_MEASURE_GATT=1 swift test --filter GATTDiscoveryMeasurementTests`;
/// the figures are printed.
@Suite(.timeLimit(.minutes(5))) struct GATTDiscoveryMeasurementTests {
    static let enabled = ProcessInfo.processInfo.environment["BLUETIDE_MEASURE_GATT"] != nil
    static let rounds = 50

    /// Ten services of four notifying characteristics each (one CCCD apiece), and the test service.
    static var services: [GATTServiceDefinition] {
        var services: [GATTServiceDefinition] = []
        for s in 0..<10 {
            var characteristics: [GATTCharacteristicDefinition] = []
            for c in 0..<4 {
                let uuid = BluetoothUUID(UInt16(0xFD00 + s * 16 + c))
                characteristics.append(GATTCharacteristicDefinition(uuid: uuid, properties: [.read, .notify], value: [UInt8(c)]))
            }
            services.append(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0xFE00 + s)), characteristics: characteristics))
        }
        return services + [TestService.definition]
    }

    @Test(.enabled(if: enabled)) func wholeDatabaseDiscoveryOverAVirtualLink() async throws {
        let linkName = "measure-\(UUID().uuidString)"
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("\(linkName).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let peripheralAddress = BluetoothAddress.randomStatic(0x1234_5678_9ABD)
        let peripheral = HostStack(
            transport: await VirtualTransport.attach(toLinkNamed: linkName),
            configuration: .init(randomAddress: peripheralAddress, deviceName: "Measure", services: Self.services))
        let central = HostStack(
            transport: try await Transport.open("virtual:\(linkName)+snoop:\(capture)"),
            configuration: .init(randomAddress: .randomStatic(0x0BAD_CAFE_0002)))
        try await peripheral.start()
        try await central.start()
        try await peripheral.startAdvertising(AdvertisingData([.completeLocalName("Measure")]), intervalMilliseconds: 20)
        let link = try await central.connect(to: peripheralAddress, timeout: 5)
        let first = try await link.gatt.discoverDatabase()
        #expect(first.count == 13)
        let clock = ContinuousClock()
        let cpuBefore = Self.cpuSeconds()
        let start = clock.now
        for _ in 0..<Self.rounds { #expect(try await link.gatt.discoverDatabase() == first) }
        let elapsed = clock.now - start
        let cpu = Self.cpuSeconds() - cpuBefore
        try await link.disconnect()
        await central.close()
        await peripheral.close()
        // Every ACL packet the central sent is an ATT request of one of the identical discoveries.
        let requests = try BTSnoopReader.records(atPath: capture).filter {
            if case .acl = $0.packet { $0.direction == .sent } else { false }
        }.count
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        print(String(
            format: "gatt-discovery-measurement: %d discoveries of %d services, %d ATT requests each, %.3f ms and %.3f ms of CPU per discovery",
            Self.rounds, first.count, requests / (Self.rounds + 1), seconds * 1000 / Double(Self.rounds), cpu * 1000 / Double(Self.rounds)))
    }

    /// User and system CPU time of the whole process (both hosts and the link), seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6
    }
}
