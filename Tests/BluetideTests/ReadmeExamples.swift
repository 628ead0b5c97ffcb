// The two examples of README.md ("Using the API"), compiled here so they cannot rot.
// Kept identical to README.md: change both together. ReadmeExampleTests.swift runs them in
// the virtual world and against Bumble.

import Bluetide

// MARK: - Central

/// Finds the heart-rate strap advertising `name` on `transport`, reads where it is worn and
/// its battery, prints `count` measurements and disconnects.
public func watchHeartRate(transport: String, name: String, count: Int) async throws
    -> (location: BodySensorLocation, battery: BatteryLevel, measurements: [HeartRateMeasurement]) {
    let bluetooth = try await Bluetooth.open(transport: transport)   // e.g. "hci-socket:0"
    let found = try await bluetooth.central.scan(filter: ScanFilter(name: .exact(name)), timeout: .seconds(15))
    guard let strap = await found.first(where: { _ in true }) else { throw BluetideError.timedOut(operation: "scan for \(name)", seconds: 15) }
    let connection = try await bluetooth.central.connect(to: strap, policy: .resilient)  // re-made after link loss
    let location = try await connection.read(.bodySensorLocation, as: BodySensorLocation.self)
    let battery = try await connection.read(.batteryLevel, as: BatteryLevel.self)
    print("\(name) at \(strap.rssi) dBm, worn on the \(location), battery \(battery.percent) %")
    var measurements: [HeartRateMeasurement] = []
    for try await heartRate in try await connection.notifications(of: .heartRateMeasurement, as: HeartRateMeasurement.self) {
        print(heartRate.beatsPerMinute, "bpm", heartRate.rrIntervalSeconds)
        measurements.append(heartRate)
        if measurements.count == count { break }
    }
    await connection.disconnect()
    await bluetooth.close()
    return (location, battery, measurements)
}

// MARK: - Peripheral

/// A heart-rate strap's Heart Rate service: measurements, where it is worn, a control point.
public final class HeartRateService: GATTService {
    public static let uuid = BluetoothUUID.heartRate
    @Characteristic(.heartRateMeasurement, [.notify]) public var measurement = HeartRateMeasurement(beatsPerMinute: 0)
    @Characteristic(.bodySensorLocation, [.read]) public var location = BodySensorLocation.chest
    @Characteristic(.heartRateControlPoint, [.write],   // only 01 (reset energy expended) is known
                    validate: { $0 == .resetEnergyExpended ? nil : ATTErrorCode(0x80) })
    public var controlPoint = HeartRateControlPoint.resetEnergyExpended
}

/// The Battery service.
public final class BatteryService: GATTService {
    public static let uuid = BluetoothUUID.battery
    @Characteristic(.batteryLevel, [.read, .notify]) public var level = BatteryLevel(percent: 87)
}

/// Serves a heart-rate strap named `name` on `transport`: notifies `beats` to the first central
/// that subscribes, and returns once that central has disconnected.
public func serveHeartRateStrap(transport: String, name: String, beats: [UInt16]) async throws {
    let bluetooth = try await Bluetooth.open(transport: transport)
    let heartRate = HeartRateService()
    try await bluetooth.peripheral.add(services: [heartRate, BatteryService()])
    try await bluetooth.peripheral.startAdvertising(name: name, serviceUUIDs: [.heartRate, .battery])
    for await change in heartRate.$measurement.subscriptions where change.isSubscribed {
        for bpm in beats { heartRate.measurement = HeartRateMeasurement(beatsPerMinute: bpm) }
        _ = await change.central?.waitForDisconnection()
        break
    }
    await bluetooth.close()
}
