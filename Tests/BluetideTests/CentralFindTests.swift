import Foundation
import Testing
@testable import Bluetide

/// Issue 22 item 3: one device finder, `Central.find`, for the CLI, the serial scanner, the coach
/// and the ride (three peripherals of ``CentralScanTests/world()`` on a private virtual link).
@Suite(.timeLimit(.minutes(1))) struct CentralFindTests {
    @Test func aUsersTextIsANameAnAddressOrATypedAddress() throws {
        let typed = DeviceQuery(parsing: " C0:FF:EE:00:00:01/p ")
        #expect(typed.address == (try BluetoothAddress("C0:FF:EE:00:00:01", type: .public)))
        #expect(typed.typedAddress?.type == .public)
        #expect(typed.name == nil)
        let random = DeviceQuery(parsing: "c0:ff:ee:00:00:02/R")
        #expect(random.typedAddress?.type == .random)
        let plain = DeviceQuery(parsing: "C0:FF:EE:00:00:03")
        #expect(plain.address != nil && plain.typedAddress == nil, "an address without its type is looked for in a scan")
        let name = DeviceQuery(parsing: " Robot 1 ")
        #expect(name.name == "Robot 1" && name.address == nil)
        #expect(DeviceQuery(parsing: "ZZ:FF/P").name == "ZZ:FF/P", "not an address: a name")
        #expect("\(name)" == "named Robot 1")
        #expect("\(DeviceQuery(namePrefix: "Punch", services: [BluetoothUUID(0x1234)]))" == "named \"Punch…\" with service 1234")
    }

    @Test func matchingNeedsEveryCriterion() throws {
        var advertisement = Advertisement(address: try BluetoothAddress("C0:FF:EE:00:00:01", type: .random), rssi: -60)
        advertisement.name = "Punch-7"
        advertisement.serviceUUIDs = [BluetoothUUID(0x1234)]
        #expect(DeviceQuery(parsing: "Punch-7").matches(advertisement))
        #expect(!DeviceQuery(parsing: "punch-7").matches(advertisement))
        #expect(DeviceQuery(name: "punch-7", ignoresNameCase: true).matches(advertisement))
        #expect(DeviceQuery(parsing: "c0:ff:ee:00:00:01/P").matches(advertisement), "addresses compare by their bits")
        #expect(DeviceQuery(namePrefix: "Punch", services: [BluetoothUUID(0x1234)]).matches(advertisement))
        #expect(!DeviceQuery(namePrefix: "Punch", services: [BluetoothUUID(0x180D)]).matches(advertisement))
        #expect(!DeviceQuery(minimumRSSI: -50).isStrongEnough(advertisement))
        #expect(DeviceQuery(minimumRSSI: -60).isStrongEnough(advertisement))
    }

    @Test func findsByNameAddressOrService() async throws {
        let (_, central, peripherals) = try await CentralScanTests.world()
        defer { Task { await CentralScanTests.close(central, peripherals) } }
        let byName = try await central.central.find(DeviceQuery(parsing: "HRM-2"), within: .seconds(20))
        #expect(byName.address == peripherals[1].address)
        // The name is in the scan response only: still found by its address, and named.
        let byAddress = try await central.central.find(DeviceQuery(parsing: peripherals[2].address.string), within: .seconds(20))
        #expect(byAddress.address == peripherals[2].address)
        let byService = try await central.central.find(DeviceQuery(services: [CentralScanTests.battery]), within: .seconds(20))
        #expect(byService.name == "HRM-2")
        let strongest = try await central.central.find(DeviceQuery(namePrefix: "HRM"), within: .seconds(20), round: .milliseconds(300))
        #expect(strongest.name?.hasPrefix("HRM") == true)
    }

    @Test func notFoundSaysWhatWasLookedForAndWhatWasSeen() async throws {
        let (_, central, peripherals) = try await CentralScanTests.world()
        defer { Task { await CentralScanTests.close(central, peripherals) } }
        let error = await #expect(throws: DeviceNotFound.self) {
            _ = try await central.central.find(DeviceQuery(parsing: "Nobody"), within: .milliseconds(500))
        }
        let notFound = try #require(error)
        #expect(notFound.query.name == "Nobody")
        #expect(notFound.seconds == 0.5)
        #expect(!notFound.seen.isEmpty && Set(notFound.seen).isSubset(of: ["HRM-1", "HRM-2", "Trainer", "\(peripherals[2].address)"]), "\(notFound.seen)")
        #expect("\(notFound)".hasPrefix("no device named Nobody seen within 0.5 s; seen: "), "\(notFound)")
        // A device that is there but too weak is named with its signal.
        let weak = await #expect(throws: DeviceNotFound.self) {
            _ = try await central.central.find(DeviceQuery(name: "HRM-1", minimumRSSI: 20), within: .milliseconds(500))
        }
        #expect(weak?.seen.contains { $0.hasPrefix("HRM-1 (") && $0.hasSuffix(" dBm)") } == true, "\(weak?.seen ?? [])")
    }

    @Test func findsOneDeviceForEachQueryNeverTwice() async throws {
        let (_, central, peripherals) = try await CentralScanTests.world()
        defer { Task { await CentralScanTests.close(central, peripherals) } }
        let heartRate = DeviceQuery(services: [CentralScanTests.heartRate])
        let all = try await central.central.find(
            each: [DeviceQuery(parsing: "HRM-1"), DeviceQuery(parsing: "HRM-2")], within: .seconds(20))
        #expect(all.found.map { $0?.address } == [peripherals[0].address, peripherals[1].address])
        // HRM-1 is the only heart-rate device and is taken by the first query: the second finds none.
        let twice = try await central.central.find(each: [heartRate, heartRate], within: .milliseconds(500))
        #expect(twice.found[0]?.address == peripherals[0].address)
        #expect(twice.found[1] == nil)
        #expect(!twice.seen.isEmpty)
        // A device the caller already has is not found again.
        let excluded = try await central.central.find(each: [heartRate], excluding: [peripherals[0].address], within: .milliseconds(500))
        #expect(excluded.found == [nil])
    }
}
