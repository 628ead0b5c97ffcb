import BluetideBase
import BluetideHost
import BluetideTransport
import Foundation

/// Two `HostStack`s on a fresh private ``VirtualLink``, the central connected to the peripheral,
/// the ATT MTU exchanged and the peripheral's database discovered: the set-up `bench gatt` and
/// `bench stall` share.
struct VirtualBenchPair {
    let peripheral: HostStack
    let central: HostStack
    /// The central's connection to the peripheral.
    let link: HostConnection
    /// The ATT MTU both sides agreed on.
    let mtu: Int
    /// Every characteristic the central discovered on the peripheral.
    let characteristics: [GATTCharacteristic]

    /// Starts both stacks (the peripheral named `name` at `peripheralAddress` with `services`,
    /// offering `mtu`), connects, exchanges the MTU and discovers the database. `what` names the
    /// bench in errors. Closes both stacks when a step fails.
    static func connect(
        what: String, name: String, peripheralAddress: BluetoothAddress, centralAddress: BluetoothAddress,
        services: [GATTServiceDefinition], mtu: Int
    ) async throws -> VirtualBenchPair {
        let linkName = "\(what.replacingOccurrences(of: " ", with: "-"))-\(UUID().uuidString)"
        let peripheral = HostStack(
            transport: await VirtualTransport.attach(toLinkNamed: linkName),
            configuration: .init(randomAddress: peripheralAddress, deviceName: name, services: services, localMTU: mtu))
        let central = HostStack(
            transport: await VirtualTransport.attach(toLinkNamed: linkName),
            configuration: .init(randomAddress: centralAddress, localMTU: mtu))
        do {
            try await peripheral.start()
            try await central.start()
            try await peripheral.startAdvertising(AdvertisingData([.completeLocalName(name)]), intervalMilliseconds: 20)
            let link = try await central.connect(to: peripheralAddress, timeout: 5)
            try await peripheral.stopAdvertising()
            let negotiated = try await link.gatt.exchangeMTU(clientMTU: mtu)
            let characteristics = try await link.gatt.discoverDatabase().flatMap(\.characteristics).map(\.characteristic)
            return VirtualBenchPair(
                peripheral: peripheral, central: central, link: link, mtu: negotiated, characteristics: characteristics)
        } catch {
            await central.close()
            await peripheral.close()
            throw error
        }
    }

    /// The discovered characteristic `uuid`, if the peripheral has it.
    func characteristic(_ uuid: BluetoothUUID) -> GATTCharacteristic? {
        characteristics.first { $0.uuid == uuid }
    }

    /// Closes both stacks (in the background: a bench returns its figures without waiting).
    func closeLater() {
        let (central, peripheral) = (self.central, self.peripheral)
        Task {
            await central.close()
            await peripheral.close()
        }
    }
}
