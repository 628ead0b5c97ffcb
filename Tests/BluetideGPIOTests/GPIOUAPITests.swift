import BluetideBase
import Testing
@testable import BluetideGPIO
import BluetideSupport

/// Builds a struct image from its non-zero bytes (offset → byte), as dumped by a C program
/// that filled the kernel's own structs from `<linux/gpio.h>`.
func sparse(_ size: Int, _ nonZero: [Int: UInt8]) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: size)
    for (offset, byte) in nonZero { bytes[offset] = byte }
    return bytes
}

@Suite struct GPIOUAPITests {
    @Test func ioctlNumbersMatchTheKernelHeader() {
        #expect(GPIOUAPI.getChipInfo == 0x8044_B401)
        #expect(GPIOUAPI.getLineInfo == 0xC100_B405)
        #expect(GPIOUAPI.getLine == 0xC250_B407)
        #expect(GPIOUAPI.lineSetConfig == 0xC110_B40D)
        #expect(GPIOUAPI.lineGetValues == 0xC010_B40E)
        #expect(GPIOUAPI.lineSetValues == 0xC010_B40F)
    }

    /// The spec's example: a button on line 17, pull-up, both edges, 10 ms debounce.
    /// Expected bytes dumped from a C `struct gpio_v2_line_request` filled the same way.
    @Test func buttonRequestBytesMatchTheCStruct() throws {
        let request = GPIORequest(consumer: "button", lines: [
            GPIORequestedLine(offset: 17, settings: .input(bias: .pullUp, edges: .both, debounceMicroseconds: 10_000)),
        ])
        let encoded = try GPIOUAPI.lineRequest(for: request, chip: "gpiochip0")
        let expected = sparse(592, [
            0: 0x11, 256: 0x62, 257: 0x75, 258: 0x74, 259: 0x74, 260: 0x6F, 261: 0x6E,
            288: 0x34, 289: 0x01, 296: 0x01, 320: 0x03, 328: 0x10, 329: 0x27, 336: 0x01, 560: 0x01,
            588: 0xFF, 589: 0xFF, 590: 0xFF, 591: 0xFF,
        ])
        #expect(encoded.bytes == expected)
        #expect(try GPIOUAPI.LineRequest.decode(expected) == encoded)
    }

    /// The reflex trainer's default map: six LED outputs then six active-low pulled-up sensors
    /// with both edges and 20 ms debounce. Expected bytes dumped from the C struct.
    @Test func reflexRequestBytesMatchTheCStruct() throws {
        let request = GPIOConfiguration.reflexDefault.lineRequest(consumer: "reflex")
        let encoded = try GPIOUAPI.lineRequest(for: request, chip: "gpiochip0")
        let expected = sparse(592, [
            0: 0x11, 4: 0x1B, 8: 0x16, 12: 0x17, 16: 0x18, 20: 0x19, 24: 0x05, 28: 0x06, 32: 0x0D,
            36: 0x13, 40: 0x1A, 44: 0x10, 256: 0x72, 257: 0x65, 258: 0x66, 259: 0x6C, 260: 0x65, 261: 0x78,
            288: 0x08, 296: 0x03, 320: 0x01, 328: 0x36, 329: 0x01, 336: 0xC0, 337: 0x0F, 344: 0x02,
            360: 0x3F, 368: 0x03, 376: 0x20, 377: 0x4E, 384: 0xC0, 385: 0x0F, 560: 0x0C,
            588: 0xFF, 589: 0xFF, 590: 0xFF, 591: 0xFF,
        ])
        #expect(encoded.bytes == expected)
        #expect(encoded.config.attributes == [
            .init(.flags([.input, .activeLow, .biasPullUp, .edgeRising, .edgeFalling]), mask: 0xFC0),
            .init(.outputValues(0), mask: 0x3F),
            .init(.debounce(microseconds: 20_000), mask: 0xFC0),
        ])
    }

    @Test func initialOutputValuesAndSeveralDebouncePeriods() throws {
        let request = GPIORequest(consumer: "x", lines: [
            GPIORequestedLine(offset: 4, settings: .output(initial: true)),
            GPIORequestedLine(offset: 5, settings: .output(initial: false)),
            GPIORequestedLine(offset: 6, settings: .output(initial: true)),
            GPIORequestedLine(offset: 7, settings: .input(debounceMicroseconds: 1_000)),
            GPIORequestedLine(offset: 8, settings: .input(debounceMicroseconds: 2_000)),
        ])
        let encoded = try GPIOUAPI.lineRequest(for: request, chip: "c")
        #expect(encoded.config.flags == [.output])
        #expect(encoded.config.attributes == [
            .init(.flags([.input]), mask: 0b11000),
            .init(.outputValues(0b101), mask: 0b111),
            .init(.debounce(microseconds: 1_000), mask: 0b01000),
            .init(.debounce(microseconds: 2_000), mask: 0b10000),
        ])
        var r = ByteReader(encoded.config.bytes)
        #expect(try GPIOUAPI.LineConfig.decode(from: &r) == encoded.config)
        #expect(encoded.config.bytes.count == 272)
    }

    @Test func invalidRequestsAreRefusedWithReasons() {
        func reason(_ lines: [GPIORequestedLine]) -> String? {
            do {
                _ = try GPIOUAPI.lineRequest(for: GPIORequest(consumer: "t", lines: lines), chip: "gpiochip9")
                return nil
            } catch { return error.description }
        }
        #expect(reason([]) == "invalid GPIO request on gpiochip9: no lines requested")
        #expect(reason([.init(offset: 3, settings: .output()), .init(offset: 3, settings: .input())])
            == "invalid GPIO request on gpiochip9: line 3 is requested twice")
        #expect(reason([.init(offset: 1, settings: GPIOLineSettings(direction: .output(initial: false), edges: .both))])
            == "invalid GPIO request on gpiochip9: line 1 is an output: edge detection needs an input")
        #expect(reason([.init(offset: 1, settings: GPIOLineSettings(direction: .input, drive: .openDrain))])
            == "invalid GPIO request on gpiochip9: line 1 is an input: drive mode open-drain needs an output")
        let many = (0..<65).map { GPIORequestedLine(offset: UInt32($0), settings: .input()) }
        #expect(reason(many) == "invalid GPIO request on gpiochip9: 65 lines requested, at most 64 fit in one request")
        let debounces = (0..<11).map { GPIORequestedLine(offset: UInt32($0), settings: .input(debounceMicroseconds: UInt32($0 + 1))) }
        #expect(reason(debounces)?.hasPrefix("invalid GPIO request on gpiochip9: the lines need 11 configuration attributes") == true)
    }

    @Test func consumerLabelIsCutToThirtyOneBytes() throws {
        let request = GPIORequest(consumer: String(repeating: "é", count: 20), lines: [.init(offset: 0, settings: .input())])
        let bytes = try GPIOUAPI.lineRequest(for: request, chip: "c").bytes
        // 15 two-byte characters fit in 31 bytes; bytes 286 and 287 stay NUL.
        #expect(Array(bytes[256..<286]) == Array(String(repeating: "é", count: 15).utf8))
        #expect(bytes[286] == 0 && bytes[287] == 0)
    }

    @Test func eventRecordDecodesAndRoundTrips() throws {
        let record = sparse(48, [0: 0xEF, 1: 0xCD, 2: 0xAB, 3: 0x89, 4: 0x67, 5: 0x45, 6: 0x23, 7: 0x01,
                                 8: 0x02, 12: 0x05, 16: 0x07, 20: 0x03])
        let edges = try GPIOUAPI.decodeLineEvents(record)
        let expected = GPIOEdge(offset: 5, kind: .falling, timestampNanoseconds: 0x0123_4567_89AB_CDEF,
                                sequenceNumber: 7, lineSequenceNumber: 3)
        #expect(edges == [expected])
        #expect(GPIOUAPI.encodeLineEvent(expected) == record)
        var rising = record
        rising[8] = 0x01
        #expect(try GPIOUAPI.decodeLineEvents(rising + record).map(\.kind) == [.rising, .falling])
    }

    @Test func eventRecordTruncationAndBadIDNameTheField() {
        let record = GPIOUAPI.encodeLineEvent(GPIOEdge(offset: 1, kind: .rising, timestampNanoseconds: 9, sequenceNumber: 1, lineSequenceNumber: 1))
        let boundaries: [(Int, String)] = [(0, "timestamp_ns"), (8, "id"), (12, "offset"), (16, "seqno"), (20, "line_seqno"), (24, "padding")]
        for (cut, field) in boundaries {
            for extra in 0..<4 where cut + extra > 0 {
                do {
                    _ = try GPIOUAPI.decodeLineEvents(Array(record.prefix(cut + extra)))
                    Issue.record("no error when cut at \(cut + extra)")
                } catch {
                    #expect(error.field == "gpio_v2_line_event.\(field)", "cut at \(cut + extra)")
                }
            }
        }
        #expect(throws: DecodingError.truncated("gpio_v2_line_event.padding", needed: 24, present: 23, at: 24)) {
            try GPIOUAPI.decodeLineEvents(Array(record.prefix(47)))
        }
        var bad = record
        bad[8] = 3
        #expect(throws: DecodingError.invalid("gpio_v2_line_event.id", expected: "1 (rising) or 2 (falling)", found: "3", at: 8)) {
            try GPIOUAPI.decodeLineEvents(bad)
        }
    }

    @Test func chipInfoAndLineInfoDecode() throws {
        var w = ByteWriter()
        w.writeCString("gpiochip0", size: 32); w.writeCString("pinctrl-bcm2711", size: 32); w.write(UInt32(58))
        #expect(w.bytes.count == 68)
        #expect(try GPIOUAPI.decodeChipInfo(w.bytes) == GPIOChipInfo(name: "gpiochip0", label: "pinctrl-bcm2711", lines: 58))

        let query = GPIOUAPI.encodeLineInfoQuery(offset: 17)
        #expect(query == sparse(256, [64: 17]))
        var info = ByteWriter()
        info.writeCString("GPIO17", size: 32); info.writeCString("pigpiod", size: 32)
        info.write(UInt32(17)); info.write(UInt32(0)); info.write(UInt64(0b1001)); info.pad(256 - 80)
        #expect(try GPIOUAPI.decodeLineInfo(info.bytes) == GPIOLineInfo(
            offset: 17, name: "GPIO17", consumer: "pigpiod", isUsed: true, isOutput: true, activeLow: false, flags: 9))
        #expect(throws: DecodingError.self) { try GPIOUAPI.decodeLineInfo(Array(info.bytes.prefix(255))) }
    }

    @Test func lineValuesRoundTrip() throws {
        let values = GPIOUAPI.LineValues(bits: 0b1010, mask: 0xFFF)
        #expect(values.bytes == [0x0A, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0x0F, 0, 0, 0, 0, 0, 0])
        #expect(try GPIOUAPI.LineValues.decode(values.bytes) == values)
    }

    /// Random and truncated inputs give values or a DecodingError, never a trap.
    @Test func decodersNeverTrap() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<3_000 {
            let count = Int(rng.next() % 700)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            _ = try? GPIOUAPI.decodeLineEvents(bytes)
            _ = try? GPIOUAPI.LineRequest.decode(bytes)
            _ = try? GPIOUAPI.decodeLineInfo(bytes)
            _ = try? GPIOUAPI.decodeChipInfo(bytes)
            var r = ByteReader(bytes)
            _ = try? GPIOUAPI.LineConfig.decode(from: &r)
        }
    }
}
