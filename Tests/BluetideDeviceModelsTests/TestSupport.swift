import BluetideBase
import BluetideProfiles
import Testing

@testable import BluetideDeviceModels

/// Drives a model on a fake time axis: ticks every `step` seconds from `from` to `to` and
/// collects the outputs with the time they appeared.
func drive<M: DeviceModel>(
    _ model: inout M, from: Double = 0, to: Double, step: Double
) -> [(time: Double, output: EmulatedOutput)] {
    var out: [(time: Double, output: EmulatedOutput)] = []
    var i = 0
    while true {
        let t = from + Double(i) * step
        if t > to + 1e-9 { break }
        for o in model.tick(now: t) { out.append((t, o)) }
        i += 1
    }
    return out
}

/// Outputs for one characteristic.
func values(_ outputs: [(time: Double, output: EmulatedOutput)], _ uuid: BluetoothUUID) -> [(time: Double, bytes: [UInt8])] {
    outputs.filter { $0.output.characteristic == uuid }.map { (time: $0.time, bytes: $0.output.bytes) }
}
