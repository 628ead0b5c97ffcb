import ArgumentParser
import BluetideRide

/// The devices of a ride and how they are found: what `ride` and `ride bridge` share.
struct RideDeviceOptions: ParsableArguments {
    @Option(name: .long, help: "The trainer (FTMS or Tacx FE-C): advertised name or address.")
    var trainer: String?
    @Option(name: .long, help: "A power meter (Cycling Power): name or address.")
    var power: String?
    @Option(name: .long, help: "A cadence sensor (CSC): name or address.")
    var cadence: String?
    @Option(name: .long, help: "A speed sensor (CSC): name or address.")
    var speed: String?
    @Option(name: .long, help: "A heart-rate strap: name or address.")
    var hr: String?

    @OptionGroup var wheel: WheelOptions
    @Option(name: .customLong("timeout"), help: "Seconds to look for the devices (--scan, its old name, still works).")
    var timeout: Double = 5
    /// `--scan`, the old name of `--timeout` (hidden, deprecated).
    @Option(name: .customLong("scan"), help: .hidden)
    var deprecatedScan: Double?

    /// Seconds to look for the devices: `--timeout`, or the deprecated `--scan`.
    var scan: Double { deprecatedScan ?? timeout }

    /// The device requests the options make: the named devices, or every kind found by service.
    func requests() -> [RideDeviceRequest] {
        var out: [RideDeviceRequest] = []
        if let trainer { out.append(.init(.trainer, device: trainer)) }
        if let power { out.append(.init(.power, device: power)) }
        if let cadence { out.append(.init(.speedCadence, device: cadence)) }
        if let speed, speed != cadence { out.append(.init(.speedCadence, device: speed)) }
        if let hr { out.append(.init(.heartRate, device: hr)) }
        if out.isEmpty {
            out = RideDeviceRequest.Kind.allCases.map { RideDeviceRequest($0, optional: true) }
        }
        return out
    }

    /// Refuses a wheel or scan time out of range, naming the option.
    func validated() throws {
        try wheel.validated()
        guard (0.5...120).contains(scan) else { throw CommandFailure("--timeout \(scan): expected 0.5…120 seconds") }
    }
}
