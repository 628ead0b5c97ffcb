import BluetideBase
import BluetideProfiles
import Testing
@testable import BluetideRecording

@Suite("Value log decoder")
struct ValueLogDecoderTests {
    /// fitness.md §1.4 vectors A and B (a real capture): 2 wheel revolutions in 1.10352 s.
    static let packetA = hex("03 A2 5E 01 00 6D 0E 4B 63 96 7F")
    static let packetB = hex("03 A4 5E 01 00 D7 12 4B 63 96 7F")

    static func csc(_ t: Double, _ bytes: [UInt8], device: String = "C6:C5:C4:C3:C2:C1") -> ValueRecord {
        ValueRecord(
            timestamp: t, device: DeviceIdentity(address: device), service: BluetoothUUID(0x1816),
            characteristic: .cscMeasurement, operation: .notify, value: bytes)
    }

    func speed(_ packet: DecodedPacket?) -> Double? {
        (packet?.derived as? CyclingMotion)?.speedKilometresPerHour
    }

    @Test func replayedCSCGivesTheSameSpeedAsLiveDecoding() async throws {
        // Live: the catalog's CSC decoder fed as the packets arrive.
        let profile = try #require(ProfileCatalog.named("csc"))
        var live = profile.makeDecoder(ProfileOptions(wheelCircumference: 2.105))
        _ = try live.decode(Self.packetA, at: 20.0)
        let liveSpeed = try #require(speed(try live.decode(Self.packetB, at: 21.1)))
        #expect(abs(liveSpeed - 13.73) < 0.005)

        // Recorded, written, read back and replayed at double speed.
        let bytes = try logBytes([Self.csc(20.0, Self.packetA), Self.csc(21.1, Self.packetB)])
        let log = try ValueLogReader.read(bytes: bytes)
        let replay = ValueReplay(log: log, pace: .speed(2), clock: InstantTestClock())
        var decoded: [DecodedValueRecord] = []
        for await item in replay.decoded(with: ValueLogDecoder(options: ProfileOptions(wheelCircumference: 2.105))) {
            decoded.append(item)
        }
        #expect(decoded.count == 2)
        #expect(decoded.map(\.profile) == ["csc", "csc"])
        let replayedSpeed = try #require(speed(decoded.last?.packet))
        #expect(replayedSpeed == liveSpeed)
        #expect(decoded.last?.summary.contains("13.73 km/h") == true)
    }

    @Test func eachDeviceKeepsItsOwnDecoderState() throws {
        var decoder = ValueLogDecoder()
        // Interleaved devices: each device's pair must be measured on its own.
        let first = decoder.decode(Self.csc(0, Self.packetA, device: "AA:AA:AA:AA:AA:AA"))
        _ = decoder.decode(Self.csc(0.5, hex("01 00 00 00 00 00 00"), device: "BB:BB:BB:BB:BB:BB"))
        let second = decoder.decode(Self.csc(1.1, Self.packetB, device: "aa:aa:aa:aa:aa:aa"))
        #expect(speed(first.packet) == nil)
        let measured = try #require(speed(second.packet))
        #expect(abs(measured - 13.73) < 0.005)
    }

    @Test func resetForgetsState() {
        var decoder = ValueLogDecoder()
        _ = decoder.decode(Self.csc(0, Self.packetA))
        decoder.reset()
        #expect(speed(decoder.decode(Self.csc(1.1, Self.packetB)).packet) == nil)
    }

    @Test func profileChoiceForcedThenRecordedThenByCharacteristic() throws {
        var heartRate = record(0, characteristic: 0x2A37, value: "00 48")
        var decoder = ValueLogDecoder()
        #expect(decoder.decode(heartRate).profile == "heart-rate")
        #expect(decoder.decode(heartRate).summary.contains("72 bpm"))

        // A custom characteristic with no catalog entry: raw hex, unless the record names a profile.
        var custom = heartRate
        custom.characteristic = try BluetoothUUID("12345678-1234-5678-1234-56789ABCDEF0")
        let unknown = decoder.decode(custom)
        #expect(unknown.profile == nil)
        #expect(unknown.packet == nil)
        #expect(unknown.summary == "00 48")
        custom.profile = "heart-rate"
        #expect(decoder.decode(custom).profile == "heart-rate")

        var forced = try ValueLogDecoder(profileNamed: "battery")
        heartRate.value = [0x64]
        #expect(forced.decode(heartRate).profile == "battery")
        #expect(throws: ValueLogDecoder.UnknownProfileError.self) { try ValueLogDecoder(profileNamed: "nope") }
    }

    @Test func undecodableValueIsReportedNotThrown() {
        var decoder = ValueLogDecoder()
        let result = decoder.decode(Self.csc(0, hex("03 A2")))
        guard case let .failed(error) = result.outcome else {
            Issue.record("expected a decoding failure, got \(result.summary)")
            return
        }
        #expect(error.field.contains("wheel"))
        #expect(result.summary.hasPrefix("undecodable: "))
    }
}
