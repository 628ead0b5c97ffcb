import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideGateway
import BluetideMQTT
import BluetideTestSupport
import Foundation

/// A gateway `gw1` on a virtual world with emulated devices, publishing to a real Mosquitto
/// broker: the set-up the broker tests share, always taken down again.
struct GatewayRig: Sendable {
    let broker: MosquittoBroker
    let world: VirtualWorld
    let bluetooth: Bluetooth
    let client: MQTTClient
    let gateway: Gateway
    let running: Task<Void, any Error>

    /// Starts the broker, the devices (`models` at `address`, heard at `rssi`), and a gateway
    /// watching them (configured further by `configure`), runs `body`, and finishes everything
    /// whether `body` returns or throws.
    static func run(
        devices: [(models: [any DeviceModel], address: BluetoothAddress, rssi: Int8?)], persistent: Bool = false,
        configure: (inout GatewayConfiguration) -> Void = { _ in }, _ body: (GatewayRig) async throws -> Void
    ) async throws {
        let broker = try await MosquittoBroker.start(persistent: persistent)
        let world = VirtualWorld()
        let rig: GatewayRig
        do {
            for device in devices { _ = try await world.emulate(device.models, address: device.address, rssi: device.rssi) }
            let bluetooth = try await world.openHost()
            var configuration = try GatewayConfiguration(id: "gw1", watch: devices.map { .address($0.address) })
            configuration.presenceInterval = .seconds(1)
            // The rig runs on the wall clock (the broker is another process): a trainer's
            // confirmation gets 30 s, not 5, so a machine busy with other work (a full run saw
            // no FE-C page 71 within 5 s) does not fail a command the emulated trainer takes.
            configuration.trainerConfirmTimeout = .seconds(30)
            configure(&configuration)
            var options = try MQTTOptions(url: broker.url, clientID: "bluetide-gw1")
            options.will = configuration.will
            let client = try MQTTClient(options)
            try await client.connect(timeout: .seconds(20))
            let gateway = Gateway(configuration: configuration, central: bluetooth.central, mqtt: client)
            rig = GatewayRig(broker: broker, world: world, bluetooth: bluetooth, client: client, gateway: gateway, running: Task { try await gateway.run() })
        } catch {
            await world.close()
            await broker.finish()
            throw error
        }
        do {
            try await body(rig)
        } catch {
            await rig.finish()
            throw error
        }
        await rig.finish()
    }

    func finish() async {
        running.cancel()
        _ = await running.result
        await client.close()
        await bluetooth.close()
        await world.close()
        await broker.finish()
    }
}
