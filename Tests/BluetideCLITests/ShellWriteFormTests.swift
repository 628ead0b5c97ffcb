import BluetideBase
@testable import BluetideHost
import BluetideProfiles
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands

/// The shell's typed writes: `write CHAR FORM ARGS…` encoded by the characteristic's profile,
/// pinned by the specifications' byte layouts, with errors that name the argument, what was
/// expected and what came; then driven end to end on an emulated FTMS trainer.
@Suite(.timeLimit(.minutes(2))) struct ShellWriteFormTests {
    static func bytes(_ characteristic: BluetoothUUID, in service: BluetoothUUID? = nil, _ text: String) throws -> [UInt8] {
        try ShellValue.bytes(text, forms: WriteFormCatalog.forms(for: characteristic, in: service), characteristic: characteristic.shortString)
    }

    static func message(_ characteristic: BluetoothUUID, in service: BluetoothUUID? = nil, _ text: String) -> String? {
        do {
            _ = try bytes(characteristic, in: service, text)
            return nil
        } catch let error as ShellRequest.SyntaxError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func heartRateControlPointReset() throws {
        // HRS 3.3.1: 0x01 = Reset Energy Expended.
        #expect(try Self.bytes(.heartRateControlPoint, "reset") == [0x01])
        #expect(try Self.bytes(.heartRateControlPoint, "RESET") == [0x01])
        // Hex still works, and wins over nothing: 01 is not a form name.
        #expect(try Self.bytes(.heartRateControlPoint, "01") == [0x01])
    }

    @Test func fitnessMachineControlPointRequestsInUnits() throws {
        let point = BluetoothUUID.fitnessMachineControlPoint
        // FTMS 4.16.1: opcode, then the parameter little-endian at the field's resolution.
        let vectors: [(String, [UInt8])] = [
            ("request-control", [0x00]),
            ("reset", [0x01]),
            ("target-speed 25.5", [0x02, 0xF6, 0x09]),  // 2550 × 0.01 km/h
            ("target-inclination -1.5", [0x03, 0xF1, 0xFF]),  // −15 × 0.1 %
            ("target-resistance 12.3", [0x04, 0x7B]),  // 123 × 0.1
            ("target-power 200", [0x05, 0xC8, 0x00]),
            ("target-power -5", [0x05, 0xFB, 0xFF]),  // sint16
            ("target-heart-rate 140", [0x06, 0x8C]),
            ("start", [0x07]),
            ("stop", [0x08, 0x01]),
            ("pause", [0x08, 0x02]),
            ("target-energy 500", [0x09, 0xF4, 0x01]),
            ("target-distance 70000", [0x0C, 0x70, 0x11, 0x01]),  // uint24
            ("target-time 3600", [0x0D, 0x10, 0x0E]),
            // wind 0 mm/s, grade 250 × 0.01 %, Crr 40 × 0.0001, Cw 51 × 0.01 kg/m (defaults).
            ("simulation 2.5", [0x11, 0x00, 0x00, 0xFA, 0x00, 0x28, 0x33]),
            ("simulation -4 -1.5 0.005 0.6", [0x11, 0x24, 0xFA, 0x70, 0xFE, 0x32, 0x3C]),
            ("wheel-circumference 2105", [0x12, 0x3A, 0x52]),  // 21050 × 0.1 mm
            ("spin-down start", [0x13, 0x01]),
            ("spin-down ignore", [0x13, 0x02]),
            ("target-cadence 90", [0x14, 0xB4, 0x00]),  // 180 × 0.5 rpm
        ]
        for (text, expected) in vectors {
            #expect(try Self.bytes(point, text) == expected, "\(text)")
            // What was written reads back as the same request through the profile's decoder.
            #expect(try FitnessMachineControlPointRequest(bytes: expected).bytes == expected, "\(text)")
        }
    }

    @Test func cyclingControlPoints() throws {
        // CSCS 3.4 and CPS 3.5: opcode, then the parameter.
        #expect(try Self.bytes(.scControlPoint, "set-cumulative 70000") == [0x01, 0x70, 0x11, 0x01, 0x00])
        #expect(try Self.bytes(.scControlPoint, "calibrate") == [0x02])
        #expect(try Self.bytes(.scControlPoint, "location rear-hub") == [0x03, 0x0D])
        #expect(try Self.bytes(.scControlPoint, "location other") == [0x03, 0x00])
        #expect(try Self.bytes(.scControlPoint, "locations") == [0x04])
        #expect(try Self.bytes(.cyclingPowerControlPoint, "location left-crank") == [0x02, 0x05])
        #expect(try Self.bytes(.cyclingPowerControlPoint, "crank-length 172.5") == [0x04, 0x59, 0x01])  // 345 × 0.5 mm
        #expect(try Self.bytes(.cyclingPowerControlPoint, "get-crank-length") == [0x05])
        #expect(try Self.bytes(.cyclingPowerControlPoint, "chain-weight 250") == [0x08, 0xFA, 0x00])
        #expect(try Self.bytes(.cyclingPowerControlPoint, "offset-compensation") == [0x0C])
        #expect(try Self.bytes(.cyclingPowerControlPoint, "mask 3") == [0x0D, 0x03, 0x00])
        #expect(try Self.bytes(.cyclingPowerControlPoint, "enhanced-offset-compensation") == [0x10])
        #expect(WriteFormCatalog.sensorLocations.count == 17)
        #expect(WriteFormCatalog.sensorLocations[13] == "rear-hub")
    }

    @Test func tacxFECPagesInAnAcknowledgedFrame() throws {
        // ANT message: A4, length 9, 0x4F acknowledged, channel 5, the 8-byte page, XOR checksum.
        #expect(try Self.bytes(.tacxFECWrite, in: .tacxFECService, "target-power 200")
            == [0xA4, 0x09, 0x4F, 0x05, 0x31, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x20, 0x03, 0x0A])  // 800 × 0.25 W
        #expect(try Self.bytes(.tacxFECWrite, in: .tacxFECService, "grade 0")
            == [0xA4, 0x09, 0x4F, 0x05, 0x33, 0xFF, 0xFF, 0xFF, 0xFF, 0x20, 0x4E, 0xFF, 0x45])  // (0 + 200 %) × 100
        #expect(try Self.bytes(.tacxFECWrite, in: .tacxFECService, "resistance 40")
            == [0xA4, 0x09, 0x4F, 0x05, 0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x50, 0x87])  // 80 × 0.5 %
    }

    @Test func punchAndRingRequestsOnlyInTheirService() throws {
        #expect(try Self.bytes(PunchUUID.control, in: PunchUUID.service, "countdown 3") == [0x03, 0x03])
        #expect(try Self.bytes(PunchUUID.control, in: PunchUUID.service, "start") == [0x01])
        let battery = try Self.bytes(COLMIUUID.write, in: COLMIUUID.service, "battery")
        #expect(battery == [0x03] + Array(repeating: 0, count: 14) + [0x03])  // opcode 3, checksum = byte sum
        let time = try Self.bytes(COLMIUUID.write, in: COLMIUUID.service, "set-time")
        #expect(time.count == 16 && time[0] == 0x01)
        // The ring's write UUID is Nordic UART RX too: there, "battery" is not a request.
        let nordicUART = try BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(WriteFormCatalog.forms(for: COLMIUUID.write, in: nordicUART).isEmpty)
        #expect(try Self.bytes(COLMIUUID.write, in: nordicUART, "\"battery\"") == Array("battery".utf8))
        #expect(Self.message(COLMIUUID.write, in: nordicUART, "battery")?.contains("its profile has no typed forms") == true)
    }

    @Test func errorsNameTheArgumentWhatWasExpectedAndWhatCame() throws {
        let point = BluetoothUUID.fitnessMachineControlPoint
        #expect(Self.message(point, "target-power lots")
            == "target-power: WATTS expected a whole number from -32768 to 32767 W, got \"lots\"; usage: write CHAR target-power WATTS")
        #expect(Self.message(point, "target-power")
            == "target-power: missing WATTS (a whole number from -32768 to 32767 W); usage: write CHAR target-power WATTS")
        #expect(Self.message(point, "target-power 200 300")
            == "target-power: unexpected \"300\" after the arguments; usage: write CHAR target-power WATTS")
        #expect(Self.message(point, "target-heart-rate 300")?.contains("BPM expected a whole number from 0 to 255 bpm, got \"300\"") == true)
        #expect(Self.message(point, "spin-down sideways")?.contains("ACTION expected one of start, ignore, got \"sideways\"") == true)
        #expect(Self.message(.scControlPoint, "location moon")?.contains("PLACE expected one of other, top-of-shoe,") == true)
        #expect(Self.message(point, "simulation 2 nan")?.contains("WIND_M/S expected a number from -32.768 to 32.767 m/s") == true)
        #expect(Self.message(point, "target-power 200.5")?.contains("WATTS expected a whole number") == true)
        #expect(Self.message(.scControlPoint, "set-cumulative 4294967296")?.contains("REVOLUTIONS expected a whole number from 0 to 4294967295") == true)
        // An unknown word lists the forms, then the generic values.
        let unknown = Self.message(.heartRateControlPoint, "nonsense")
        #expect(unknown?.hasPrefix("nonsense is not a value for 2A39: expected reset (its profile's forms), or hex (01FF)") == true, "\(unknown ?? "")")
        #expect(Self.message(point, "warp 9")?.contains("expected one of request-control, reset, start, stop, pause, target-power WATTS,") == true)
        // A typed number out of range keeps its own message.
        #expect(Self.message(point, "u8:300") == "u8:300: u8 takes a whole number from 0 to 255")
        // No forms: the generic values only.
        #expect(Self.message(.batteryLevel, "full")
            == "full is not a value for 2A19: write hex (01FF), \"text\" or a typed number (u8:1, u16:500, s16:-2) (its profile has no typed forms)")
        #expect(try Self.bytes(.batteryLevel, "01 ff 02") == [0x01, 0xFF, 0x02])
    }

    /// A form name that were hex would make `write CHAR add` ambiguous: none is.
    @Test func noFormNameIsHexAndNamesAreUniquePerCharacteristic() {
        for characteristic in WriteFormCatalog.characteristics {
            let names = [nil, PunchUUID.service, COLMIUUID.service, .tacxFECService]
                .flatMap { WriteFormCatalog.forms(for: characteristic, in: $0) }.map(\.name)
            #expect(!names.isEmpty)
            for name in names {
                #expect((try? Hex.parse(name)) == nil, "\(name) parses as hex")
                #expect(name == name.lowercased() && !name.contains(" "))
            }
        }
        #expect(Set(WriteFormCatalog.fitnessMachine.map(\.name)).count == WriteFormCatalog.fitnessMachine.count)
        #expect(Set(WriteFormCatalog.cyclingPower.map(\.name)).count == WriteFormCatalog.cyclingPower.count)
    }

    @Test func linesWithSeveralValueWordsAndFormsParse() throws {
        #expect(try ShellRequest.parse("write 2AD9 target-power 200")
            == .write(characteristic: "2AD9", value: "target-power 200", withResponse: true))
        #expect(try ShellRequest.parse("write 2AD9 simulation 2.5 -w")
            == .write(characteristic: "2AD9", value: "simulation 2.5", withResponse: false))
        #expect(try ShellRequest.parse("forms fitness-machine-control-point") == .forms(characteristic: "fitness-machine-control-point"))
        #expect(throws: ShellRequest.SyntaxError.self) { try ShellRequest.parse("forms") }
    }

    /// On an emulated FTMS trainer, one connection: subscribe to the control point, take
    /// control, set a power and a grade; each request is echoed decoded and answered "success".
    @Test func aScriptDrivesAnFTMSTrainerWithTypedWrites() async throws {
        let command = try ShellCommand.parse(["Bluetide FTMS", "--emulate", "ftms-bike"])
        let collector = LineCollector()
        let (input, sink) = AsyncStream<[UInt8]>.makeStream()
        sink.yield(Array("""
            forms 2AD9
            subscribe 2AD9
            write 2AD9 request-control
            wait 1
            write fitness-machine-control-point target-power 200
            wait 1
            write 2AD9 simulation 2.5
            wait 1

            """.utf8))
        sink.finish()
        try await inVirtualTime { try await command.execute(input: input, interactive: false, output: collector.output, clock: $0) }
        let lines = collector.lines
        #expect(lines.contains("  target-power WATTS                            ERG mode: hold this power"), "\(lines)")
        #expect(lines.contains("wrote 3 bytes to 2AD9 Fitness Machine Control Point: → set target power 200 W  [05 C8 00]"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("wrote 7 bytes to 2AD9 Fitness Machine Control Point: → set indoor bike simulation") && $0.contains("grade 2.50 %") }, "\(lines)")
        for request in ["request control", "set target power", "set indoor bike simulation"] {
            #expect(lines.contains { $0.hasPrefix("← 2AD9 ") && $0.contains("response to \(request): success") }, "\(request): \(lines)")
        }
    }

    @Test func tabCompletesTheFormsOfTheCharacteristicTyped() {
        func characteristic(_ uuid: BluetoothUUID, _ handle: UInt16, _ properties: GATTCharacteristicProperties) -> GATTRemoteCharacteristic {
            GATTRemoteCharacteristic(
                characteristic: GATTCharacteristic(uuid: uuid, declarationHandle: handle, valueHandle: handle + 1, endHandle: handle + 2, properties: properties),
                descriptors: [])
        }
        let completions = ShellCompletions()
        completions.update(with: [
            GATTRemoteService(
                service: GATTServiceRange(uuid: .fitnessMachine, startHandle: 1, endHandle: 9),
                characteristics: [characteristic(.indoorBikeData, 2, [.notify]), characteristic(.fitnessMachineControlPoint, 5, [.write, .indicate])]),
        ])
        for spelling in ["2AD9", "fitness-machine-control-point", "2ad9"] {
            let offered = completions.candidates(previousWords: ["write", spelling], word: "")
            #expect(offered.contains("target-power") && offered.contains("simulation"), "\(spelling): \(offered)")
        }
        #expect(completions.candidates(previousWords: ["write", "2AD9", "spin-down"], word: "") == ["start", "ignore"])
        #expect(completions.candidates(previousWords: ["write", "2AD9", "target-power"], word: "").isEmpty)
        #expect(completions.candidates(previousWords: ["write", "2AD2"], word: "").isEmpty)
        #expect(completions.candidates(previousWords: ["forms"], word: "").contains("2AD9"))
        #expect(completions.candidates(previousWords: ["read", "2AD9"], word: "").isEmpty)
    }
}
