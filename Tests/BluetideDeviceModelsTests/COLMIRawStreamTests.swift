import BluetideBase
import BluetideProfiles
import Foundation
import Testing

@testable import BluetideDeviceModels

/// The emulated ring's raw sensor stream (`A1`), on model time.
@Suite struct COLMIRawStreamTests {
    @Test func rawStreamCarriesAPulseAndGravityUntilStopped() throws {
        var model = COLMIRingModel(seed: 9, options: .augustTenAtNine)
        _ = model.write(COLMIUUID.write, COLMIRequest.rawSensorStart(mode: 0).packet.bytes, now: 0)
        var samples: [COLMIRawSensorSample] = []
        var t = 0.0
        while t < 10 {
            t += 0.25
            for output in model.tick(now: t) where output.characteristic == COLMIUUID.notify {
                if case let .rawSensor(s) = try COLMIResponse(bytes: output.bytes) { samples.append(s) }
            }
        }
        let ppg = samples.compactMap { if case let .ppg(raw, _, _, _) = $0 { Int(raw) } else { nil } }
        let spo2 = samples.compactMap { if case let .spo2(raw, _, _, _) = $0 { Int(raw) } else { nil } }
        let accel = samples.compactMap { s -> (Int, Int, Int)? in
            guard case let .accelerometer(a, b, c) = s else { return nil }
            return (Int(COLMIRawSensorSample.signed12(a)), Int(COLMIRawSensorSample.signed12(b)), Int(COLMIRawSensorSample.signed12(c)))
        }
        // 4 Hz PPG and accelerometer, 1 Hz SpO2 over 10 s.
        #expect(ppg.count == 40 && accel.count == 40 && spo2.count == 10, "\(ppg.count) \(accel.count) \(spo2.count)")
        // PPG: around 12000 counts, pulsing by hundreds; SpO2 channel lower and smaller.
        #expect(ppg.allSatisfy { (11_000...13_500).contains($0) } && ppg.max()! - ppg.min()! > 400, "\(ppg)")
        #expect(spo2.allSatisfy { (8_900...9_400).contains($0) }, "\(spo2)")
        // Accelerometer: about 1 g (512 counts) at rest, some samples negative on an axis.
        for (x, y, z) in accel {
            let g = (Double(x * x + y * y + z * z)).squareRoot() / 512
            #expect((0.85...1.15).contains(g), "\(x) \(y) \(z)")
        }
        #expect(accel.contains { $0.1 < 0 })
        // Stopped: nothing more.
        _ = model.write(COLMIUUID.write, COLMIRequest.rawSensorStop.packet.bytes, now: t)
        let after = model.tick(now: t + 2).filter { $0.bytes.first == COLMIOpcode.rawSensor }
        #expect(after.isEmpty)
    }

    @Test func pulseShapeRepeatsAtTheHeartRate() {
        let bpm = 60.0
        for t in stride(from: 0.0, to: 3, by: 0.1) {
            #expect(abs(COLMIRingModel.pulseShape(t, bpm: bpm) - COLMIRingModel.pulseShape(t + 1, bpm: bpm)) < 1e-9)
        }
        #expect(COLMIRingModel.pulseShape(0.15, bpm: bpm) > 0.99 && COLMIRingModel.pulseShape(0.8, bpm: bpm) < 0.05)
    }
}
