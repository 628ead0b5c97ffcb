import BluetideBase
import BluetideProfiles
import Testing

@testable import BluetideDeviceModels

@Suite struct EmulatorRobustnessTests {
    /// Thousands of random writes (random lengths, random bytes, sometimes a valid-looking opcode
    /// or frame start) to every characteristic of every model, with ticks and a clock that
    /// sometimes stands still or steps back: models must answer, never trap.
    @Test func randomWritesNeverTrap() {
        var random = SeededGenerator(seed: 2024)
        for descriptor in EmulatorCatalog.all {
            var model = descriptor.make(random.next(), EmulatorOptions())
            let characteristics = model.allCharacteristics
            var now = 0.0
            for i in 0..<3000 {
                let c = characteristics[Int(random.next() % UInt64(characteristics.count))]
                var bytes = (0..<Int(random.next() % 40)).map { _ in UInt8.random(in: 0...255, using: &random) }
                if !bytes.isEmpty, random.chance(0.5) { bytes[0] = UInt8(random.next() % 0x20) }
                if bytes.count >= 13, random.chance(0.3) { bytes[0] = 0xA4; bytes[1] = 0x09 }
                if bytes.count >= 6, random.chance(0.2) { bytes[0] = 0xBC }
                let outcome = model.write(c.uuid, bytes, now: now)
                if !c.properties.contains(.write), !c.properties.contains(.writeWithoutResponse) {
                    #expect(outcome.attError != nil, "\(descriptor.name) \(c.uuid)")
                }
                for output in outcome.outputs { #expect(model.characteristic(output.characteristic) != nil) }
                if i % 10 == 0 {
                    now += random.chance(0.1) ? -0.5 : random.unit() * 3
                    _ = model.tick(now: now)
                    _ = model.read(c.uuid, now: now)
                }
            }
        }
    }
}
