import Bluetide
import BluetideBase
import BluetideDeviceModels
import BluetideEmulation
import BluetideGateway
import BluetideMQTT
import BluetideSupport
import Foundation
import Synchronization
import Testing

/// A stand-in for the gateway's MQTT client: no broker, so nothing waits on the wall clock. It
/// records each message with the instant of `clock` it was published at; nothing arrives.
final class RecordingMQTT: GatewayMQTT {
    let messages: AsyncStream<MQTTMessage>
    let events: AsyncStream<MQTTEvent>
    private let clock: ManualClock
    private let log = Mutex<[(at: Duration, message: MQTTMessage)]>([])

    init(clock: ManualClock) {
        self.clock = clock
        messages = AsyncStream { _ in }
        events = AsyncStream { _ in }
    }

    var droppedCount: Int { 0 }

    func publish(_ message: MQTTMessage) -> Int32 {
        let at = clock.now.offset
        return log.withLock { log in
            log.append((at, message))
            return Int32(truncatingIfNeeded: log.count)
        }
    }

    func subscribe(_ filter: String, qos: MQTTQoS, timeout: Duration) async throws {}

    /// Everything published so far, in order, with the manual clock's time of each.
    var published: [(at: Duration, message: MQTTMessage)] { log.withLock { $0 } }
}

/// The gateway runs on its central's clock: in a world on a ``ManualClock`` its settle time,
/// presence throttle, battery interval and retry delay pass in virtual time, and the
/// `monotonic` seconds of its records are virtual seconds.
@Suite(.timeLimit(.minutes(2))) struct GatewayVirtualTimeTests {
    static let strap = BluetoothAddress.randomStatic(0xF1DE_0000_0B01)

    @Test func settlePresenceBatteryRetryAndStampsFollowTheCentralsManualClock() async throws {
        let manual = ManualClock()
        let world = VirtualWorld(clock: BluetideClock(manual))
        let mqtt = RecordingMQTT(clock: manual)
        let wall = ContinuousClock.now
        // Virtual times, from the gateway's creation: the link is cut at 80 s, the gateway stops at 140 s.
        let origin: Duration, lost: Duration
        do {
            (origin, lost) = try await manual.advancing(step: .milliseconds(50), maximumSpeed: 10, burst: .milliseconds(200)) { () -> (Duration, Duration) in
                // A battery that never drains here: every battery record is one of the gateway's reads.
                var options = EmulatorOptions()
                options.batterySecondsPerPercent = 1_000_000
                let device = try await world.emulate(
                    [HeartRateModel(seed: 1, options: options)], address: Self.strap, rssi: -50, commandTimeout: .seconds(120))
                var host = Bluetooth.Configuration()
                host.commandTimeout = .seconds(120)
                let bluetooth = try await world.openHost(configuration: host)
                var configuration = try GatewayConfiguration(id: "gw1", watch: [.address(Self.strap)])
                configuration.settleTime = .seconds(10)
                configuration.presenceInterval = .seconds(5)
                configuration.batteryInterval = .seconds(30)
                configuration.retryDelay = .seconds(15)
                let origin = manual.now.offset
                let gateway = Gateway(configuration: configuration, central: bluetooth.central, mqtt: mqtt)
                let running = Task { try await gateway.run() }
                try await manual.sleep(until: .init(offset: origin + .seconds(80)))
                let lost = manual.now.offset - origin
                try await world.loseLink(of: device)
                try await manual.sleep(until: .init(offset: origin + .seconds(140)))
                running.cancel()
                _ = try await running.value
                await bluetooth.close()
                return (origin, lost)
            }
            await world.close()
        } catch {
            await world.close()
            throw error
        }
        let id = GatewayTopics.deviceID(Self.strap)
        let records = mqtt.published.map { (at: $0.at - origin, message: $0.message) }
        func times(_ topic: String, _ text: String? = nil) -> [Duration] {
            records.filter { $0.message.topic == topic && (text == nil || $0.message.text == text) }.map(\.at)
        }

        // `advancing` cannot see a job of the gateway while it runs on another thread, so the
        // clock may move on (here at most 10× real time, after a 0.2 s burst: a job held off the
        // CPU for 180 ms still fits the lag below) between the gateway reading it and the
        // stand-in reading it: what is seen comes at, or up to `lag` after, what the gateway
        // decided. So no wait is seen ending early; the upper bounds leave room for that lag
        // and are still far below what the wall clock would give in a run of a few seconds
        // (on the wall clock the gateway would not even have connected).
        let lag = Duration.seconds(2)

        // Presence: at most one per 5 s of virtual time (read before publishing), from the start.
        let presence = times("bluetide/gateway/gw1/presence/\(id)")
        #expect((presence.first ?? .seconds(99)) < .seconds(5), "\(presence)")
        #expect(presence.count >= 20 && presence.count <= 29, "\(presence)")
        #expect(zip(presence, presence.dropFirst()).allSatisfy { $1 - $0 >= .seconds(5) - lag }, "\(presence)")

        // Connected once the 10 s settle time passed, and again 15 s after the link was lost.
        let online = times("bluetide/\(id)/availability", "online")
        let offline = times("bluetide/\(id)/availability", "offline")
        #expect(online.count == 2, "\(online)")
        #expect(offline.count == 2, "\(offline)")  // the lost link, and the shutdown
        guard online.count == 2, offline.count == 2 else { return }
        #expect(online[0] >= .seconds(10) && online[0] < .seconds(20), "\(online)")
        #expect(offline[0] >= lost && offline[0] < lost + .seconds(5), "lost at \(lost): \(offline)")
        #expect(online[1] >= offline[0] + .seconds(15) && online[1] < offline[0] + .seconds(25), "\(offline[0]) → \(online)")
        #expect(offline[1] >= .seconds(140))

        // Battery read on connecting, then every 30 s of virtual time while connected.
        let battery = times("bluetide/\(id)/battery")
        let first = battery.filter { $0 < offline[0] }, second = battery.filter { $0 >= online[1] }
        #expect(first.count >= 2 && second.count >= 1, "\(battery)")
        #expect(first.first.map { $0 - online[0] < .seconds(5) } ?? false, "\(online[0]) → \(battery)")
        #expect(second.first.map { $0 - online[1] < .seconds(5) } ?? false, "\(online[1]) → \(battery)")
        for reads in [first, second] {
            #expect(zip(reads, reads.dropFirst()).allSatisfy { $1 - $0 >= .seconds(30) && $1 - $0 < .seconds(36) }, "\(reads)")
        }

        // `monotonic`: virtual seconds since the gateway was made; `utc` stays the calendar time.
        var stamped = 0
        for record in records {
            guard let json = GatewayJSON.parse(record.message.text), let monotonic = json["time", "monotonic"]?.double else { continue }
            stamped += 1
            let seen = record.at.inSeconds
            #expect(monotonic <= seen + 1e-9 && monotonic > seen - lag.inSeconds, "\(monotonic) s stamped, seen at \(record.at) on \(record.message.topic)")
            if case let .string(utc)? = json["time", "utc"] { #expect(utc.hasSuffix("Z") && utc.count == 24, "\(utc)") } else {
                Issue.record("no utc in \(record.message.text)")
            }
        }
        #expect(stamped > 100)
        #expect((records.last?.at ?? .zero) >= .seconds(140))
        // Less wall time than the 140 virtual seconds (about 14 s at 10×; a hang guard's margin,
        // not a timing check).
        #expect(ContinuousClock.now - wall < .seconds(120))
    }
}
