import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideGateway
import BluetideMQTT
import BluetideTestSupport
import Foundation
import Testing

/// Two gateways on one virtual radio and one broker: each device is connected by the gateway that
/// hears it best, and the other takes it over when that one dies.
@Suite(.needsMosquitto, .needsLibmosquitto, .timeLimit(.minutes(2)))
struct GatewayFleetTests {
    static let strap = BluetoothAddress.randomStatic(0xF1DE_0000_0B01)

    struct Member {
        let bluetooth: Bluetooth
        let client: MQTTClient
        let gateway: Gateway
        let running: Task<Void, any Error>
        /// The gateway's log, in order (events to await instead of polling its state).
        let log: TimedMailbox<String>

        /// Waits for a log line containing `text`, at most 30 s.
        func waitForLog(containing text: String) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero, let line = try await log.next(timeout: left) else {
                    throw MosquittoBrokerError("no log line containing \"\(text)\" within 30 s")
                }
                if line.contains(text) { return }
            }
        }
    }

    func member(_ id: String, world: VirtualWorld, broker: MosquittoBroker, hears device: EmulatedPeripheral, at rssi: Int8) async throws -> Member {
        let bluetooth = try await world.openHost()
        try await world.setRSSI(rssi, between: bluetooth, and: device.bluetooth)
        var configuration = try GatewayConfiguration(id: id, watch: [.address(Self.strap)])
        configuration.presenceInterval = .seconds(1)
        configuration.retryDelay = .milliseconds(500)
        // Long enough that both gateways have started (an MQTT connect and a host each) and heard
        // each other's presence before either claims, however slowly a loaded machine starts them:
        // a full run once saw `far` claim first when `near` took over the default 2 s to start.
        configuration.settleTime = .seconds(6)
        var options = try MQTTOptions(url: broker.url, clientID: "bluetide-\(id)")
        options.will = configuration.will
        options.keepAliveSeconds = 5
        let client = try MQTTClient(options)
        try await client.connect(timeout: .seconds(20))
        let (events, input) = AsyncStream.makeStream(of: String.self)
        let log = TimedMailbox<String>()
        Task {
            for await event in events { await log.deliver(event) }
            await log.finish()
        }
        let gateway = Gateway(configuration: configuration, central: bluetooth.central, mqtt: client) { input.yield($0.description) }
        return Member(bluetooth: bluetooth, client: client, gateway: gateway, running: Task { try await gateway.run() }, log: log)
    }

    @Test func theGatewayThatHearsBestConnectsAndTheOtherTakesOverWhenItDies() async throws {
        let broker = try await MosquittoBroker.start()
        let world = VirtualWorld()
        let strap = try await world.emulate([HeartRateModel(seed: 4)], address: Self.strap)
        let sub = try await MosquittoClients.subscribe(broker, topics: ["bluetide/f1de00000b01/#"])
        // The weaker gateway starts first: it still leaves the device to the stronger one.
        let far = try await member("far", world: world, broker: broker, hears: strap, at: -80)
        let near = try await member("near", world: world, broker: broker, hears: strap, at: -50)
        func cleanUp() async {
            for member in [near, far] {
                member.running.cancel()
                _ = await member.running.result
                await member.client.close()
            }
            await sub.stop()
            await world.close()
            await broker.finish()
        }
        do {
            let (claim, _) = try await next(sub) { topic, text in topic == "bluetide/f1de00000b01/claim" && !text.isEmpty }
            #expect(claim?["gateway"] == "near")
            _ = try await next(sub) { topic, text in topic == "bluetide/f1de00000b01/heart-rate" && text.contains("\"gateway\":\"near\"") }
            #expect(await far.gateway.connectedDevices.isEmpty)
            #expect(await near.gateway.connectedDevices == ["f1de00000b01"])

            // `near` dies: no DISCONNECT to the broker (its will says offline), its radio gone.
            let died = ContinuousClock.now
            near.client.drop()
            near.running.cancel()
            await near.bluetooth.close()
            let (takeover, _) = try await next(sub) { topic, text in topic == "bluetide/f1de00000b01/claim" && text.contains("\"gateway\":\"far\"") }
            #expect(takeover?["gateway"] == "far")
            _ = try await next(sub) { topic, text in topic == "bluetide/f1de00000b01/heart-rate" && text.contains("\"gateway\":\"far\"") }
            let took = died.duration(to: .now)
            #expect(took < .seconds(10), "values flowed again through the other gateway after \(took)")
            #expect(await far.gateway.connectedDevices == ["f1de00000b01"])
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
    }

    @Test func aGatewayLetsGoOfADeviceABetterLiveGatewayClaimsAndTakesItBackWhenThatOneGoesOffline() async throws {
        let broker = try await MosquittoBroker.start()
        let world = VirtualWorld()
        let strap = try await world.emulate([HeartRateModel(seed: 6)], address: Self.strap)
        let sub = try await MosquittoClients.subscribe(broker, topics: ["bluetide/f1de00000b01/claim"])
        let near = try await member("near", world: world, broker: broker, hears: strap, at: -50)
        func cleanUp() async {
            near.running.cancel()
            _ = await near.running.result
            await near.client.close()
            await sub.stop()
            await world.close()
            await broker.finish()
        }
        do {
            _ = try await next(sub) { _, text in text.contains("\"gateway\":\"near\"") }
            // A gateway `phantom` hears the strap at -30 dBm and claims it (as if both had
            // connected in the same instant): `near` lets go.
            try await MosquittoClients.publish(broker, topic: "bluetide/gateway/phantom/availability", message: "online", retain: true)
            try await MosquittoClients.publish(broker, topic: "bluetide/gateway/phantom/presence/f1de00000b01", message: #"{"type":"presence","rssiDbm":-30}"#)
            try await MosquittoClients.publish(broker, topic: "bluetide/f1de00000b01/claim", message: #"{"type":"claim","gateway":"phantom"}"#, retain: true)
            try await near.waitForLog(containing: "gateway phantom hears it better")
            #expect(await near.gateway.connectedDevices.isEmpty)
            // `phantom` goes offline: its claim is void and `near` connects again.
            try await MosquittoClients.publish(broker, topic: "bluetide/gateway/phantom/availability", message: "offline", retain: true)
            _ = try await next(sub) { _, text in text.contains("\"gateway\":\"near\"") }
            // The claim is published once the connection is in place.
            #expect(await near.gateway.connectedDevices == ["f1de00000b01"])
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
    }

    /// The next `TOPIC|RETAIN|PAYLOAD` line of `sub` matching `match`, with its payload parsed.
    func next(_ sub: BumbleProcess, seconds: Int = 30, _ match: (String, String) -> Bool) async throws -> (GatewayJSON?, String) {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, let line = try await sub.lines.next(timeout: left) else {
                throw MosquittoBrokerError("no matching message within \(seconds) s")
            }
            let parts = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3 else { continue }
            if match(parts[0], parts[2]) { return (GatewayJSON.parse(parts[2]), parts[2]) }
        }
    }
}
