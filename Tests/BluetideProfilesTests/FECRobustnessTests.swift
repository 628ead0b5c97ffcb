import BluetideBase
import Testing

@testable import BluetideProfiles

@Suite struct FECRobustnessTests {
    static let pageNumbers: [UInt8] = [16, 17, 25, 26, 48, 49, 50, 51, 54, 55, 70, 71, 80, 81, 1, 2, 252]

    @Test func randomPagesDecodeAndReencodeStably() throws {
        var random = TrainerTestRandom(seed: 5)
        for i in 0..<20_000 {
            let number = i % 4 == 0 ? UInt8.random(in: 0...255, using: &random) : Self.pageNumbers[i % Self.pageNumbers.count]
            let bytes = [number] + random.bytes(7)
            let page = try FECPage(exactly: bytes)
            #expect(page.pageNumber == number)
            #expect(try FECPage(exactly: page.bytes) == page, "\(bytes.spacedHex)")
            _ = page.description
        }
    }

    @Test func randomFramesOnlyDecodeOrThrow() {
        var random = TrainerTestRandom(seed: 6)
        var decoded = 0
        var checksumErrors = 0
        for i in 0..<10_000 {
            var input: [UInt8]
            switch i % 4 {
            case 0:
                input = random.bytes(Int.random(in: 0...20, using: &random))
            case 1:
                // Valid frame, random page, random convention, then maybe truncated.
                let page = [Self.pageNumbers[i % Self.pageNumbers.count]] + random.bytes(7)
                let convention: ANTChecksumConvention = Bool.random(using: &random) ? .xor : .sum
                input = FECFrame(messageID: .acknowledgedData, page: .raw(page), checksumConvention: convention).bytes
                if Bool.random(using: &random) { input = Array(input.prefix(Int.random(in: 0...13, using: &random))) }
            case 2:
                // Valid header with a random page and a random checksum byte.
                input = [0xA4, 0x09, 0x4E, 0x05] + random.bytes(9)
            default:
                input = trainerHex("A4 09 4E 05 19 2A 5A 10 27 FA 40 30 32")
                input[Int.random(in: 0..<13, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            do {
                let frame = try FECFrame(bytes: input)
                decoded += 1
                // When both conventions give the same byte, XOR is reported, so compare bytes and page.
                let again = try FECFrame(exactly: frame.bytes)
                #expect(again.bytes == frame.bytes && again.page == frame.page)
            } catch {
                if error.field == "ANT message.checksum", case .invalidValue = error.kind { checksumErrors += 1 }
            }
        }
        #expect(decoded > 1000 && checksumErrors > 1000)
    }

    @Test func accumulatorStaysFiniteOnRandomPages() throws {
        var random = TrainerTestRandom(seed: 8)
        var acc = FECAccumulator()
        var time = 0.0
        for i in 0..<20_000 {
            let number: UInt8 = [16, 25, 26, 17][i % 4]
            let page = try FECPage(exactly: [number] + random.bytes(7))
            // Mostly forward time with occasional long gaps and steps backwards.
            time += [0.25, 0.25, 0.25, 90, -5][Int.random(in: 0..<5, using: &random)]
            let derived = acc.add(page, at: time)
            #expect(derived.elapsedSeconds.isFinite && derived.elapsedSeconds >= 0)
            #expect(derived.distanceMeters.isFinite && derived.distanceMeters >= 0)
            if let average = derived.averagePowerWatts { #expect(average >= 0 && average <= 4094) }
            for value in [derived.torqueNewtonMeters, derived.torquePowerWatts, derived.wheelSpeedKmh] {
                if let value { #expect(value.isFinite) }
            }
        }
        _ = acc.add(.generalData(FECGeneralData(elapsedTimeQuarterSeconds: 0, distanceTraveledMeters: 0, speedMillimetersPerSecond: 0, state: .inUse)), at: .nan)
        _ = acc.add(.generalData(FECGeneralData(elapsedTimeQuarterSeconds: 0, distanceTraveledMeters: 0, speedMillimetersPerSecond: 0, state: .inUse)), at: .infinity)
        #expect(acc.elapsedSeconds.isFinite)
    }
}
