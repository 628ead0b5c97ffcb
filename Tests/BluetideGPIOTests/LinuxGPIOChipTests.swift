#if os(Linux)
import Foundation
import Testing
@testable import BluetideGPIO

@Suite struct LinuxGPIOChipTests {
    /// A fresh scratch directory standing in for /dev.
    func scratchDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "bluetide-gpio-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func missingChipGivesTheNoSuchChipErrorWithTheChipsThatExist() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["gpiochip10", "gpiochip1", "gpiochip0", "gpiochipX", "ttyS0"] {
            _ = FileManager.default.createFile(atPath: "\(dir)/\(name)", contents: Data())
        }
        #expect(LinuxGPIOChip.availableChips(in: dir) == ["\(dir)/gpiochip0", "\(dir)/gpiochip1", "\(dir)/gpiochip10"])
        let error = #expect(throws: GPIOError.self) { try LinuxGPIOChip(path: "\(dir)/gpiochip4", deviceDirectory: dir) }
        #expect(error == .noSuchChip(chip: "\(dir)/gpiochip4", available: ["\(dir)/gpiochip0", "\(dir)/gpiochip1", "\(dir)/gpiochip10"]))
        #expect(error?.description == "GPIO chip \(dir)/gpiochip4 does not exist: available chips: "
            + "\(dir)/gpiochip0, \(dir)/gpiochip1, \(dir)/gpiochip10")
    }

    /// This machine has no GPIO hardware: opening /dev/gpiochip0 must give the clear message.
    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/dev/gpiochip0")))
    func absentGPIOChip0OnThisMachine() {
        let error = #expect(throws: GPIOError.self) { try LinuxGPIOChip(path: "/dev/gpiochip0") }
        #expect(error == .noSuchChip(chip: "/dev/gpiochip0", available: LinuxGPIOChip.availableChips()))
        if LinuxGPIOChip.availableChips().isEmpty {
            #expect(error?.description == "GPIO chip /dev/gpiochip0 does not exist: no GPIO chips exist on this "
                + "machine (is this a Raspberry Pi? use --gpio sim to simulate)")
        }
    }

    @Test func aFileThatIsNotAChipIsNamed() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = FileManager.default.createFile(atPath: "\(dir)/gpiochip0", contents: Data(count: 100))
        #expect(throws: GPIOError.notAGPIOChip(chip: "\(dir)/gpiochip0")) { try LinuxGPIOChip(path: "\(dir)/gpiochip0") }
        #expect(throws: GPIOError.notAGPIOChip(chip: "/dev/null")) { try LinuxGPIOChip(path: "/dev/null") }
        #expect(GPIOError.notAGPIOChip(chip: "/dev/null").description
            == "/dev/null is not a GPIO character device (expected /dev/gpiochipN)")
    }

    /// The edge reader thread, fed through a pipe standing in for a request fd: it decodes whole
    /// 48-byte records, and releasing wakes it, ends the stream and refuses further use.
    @Test func edgeReaderDecodesRecordsAndEndsOnRelease() async throws {
        var fds: [Int32] = [-1, -1]
        #expect(fds.withUnsafeMutableBufferPointer { pipe($0.baseAddress) } == 0)
        let request = GPIORequest(consumer: "test", lines: [
            GPIORequestedLine(offset: 17, settings: .output()),
            GPIORequestedLine(offset: 5, settings: .input(bias: .pullUp, edges: .both, activeLow: true)),
        ])
        let wake = try #require(try? LinuxGPIOLineRequest.makeWakePipe().get())
        let lines = LinuxGPIOLineRequest(chip: "pipe", request: request, lineFD: fds[0], wakePipe: wake)
        let sent = [
            GPIOEdge(offset: 5, kind: .rising, timestampNanoseconds: 1_000, sequenceNumber: 1, lineSequenceNumber: 1),
            GPIOEdge(offset: 5, kind: .falling, timestampNanoseconds: 151_000, sequenceNumber: 2, lineSequenceNumber: 2),
        ]
        let bytes = sent.flatMap(GPIOUAPI.encodeLineEvent)
        #expect(bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) } == 96)
        var received: [GPIOEdge] = []
        for await edge in lines.edges {
            received.append(edge)
            if received.count == 2 { break }
        }
        #expect(received == sent)
        // A pipe is not a GPIO request fd: the ioctl's error is reported with the chip and operation.
        #expect(throws: GPIOError.self) { try lines.setValues([17: true]) }
        #expect(throws: GPIOError.notAnOutput(chip: "pipe", line: 5)) { try lines.setValues([5: true]) }
        #expect(throws: GPIOError.notRequested(chip: "pipe", line: 6)) { try lines.setValues([6: true]) }
        lines.release()
        var after: [GPIOEdge] = []
        for await edge in lines.edges { after.append(edge) }
        #expect(after.isEmpty)
        #expect(throws: GPIOError.released(chip: "pipe")) { try lines.setValues([17: true]) }
        close(fds[1])
    }

    @Test func requestWithoutEdgesEndsItsStreamOnRelease() async throws {
        var fds: [Int32] = [-1, -1]
        #expect(fds.withUnsafeMutableBufferPointer { pipe($0.baseAddress) } == 0)
        let request = GPIORequest(consumer: "leds", lines: [GPIORequestedLine(offset: 17, settings: .output())])
        let lines = LinuxGPIOLineRequest(chip: "pipe", request: request, lineFD: fds[0], wakePipe: nil)
        lines.release()
        var count = 0
        for await _ in lines.edges { count += 1 }
        #expect(count == 0)
        #expect(throws: GPIOError.released(chip: "pipe")) { try lines.values([]) }
        close(fds[1])
    }

    @Test func errorMessagesSayWhatToDo() {
        #expect(GPIOError.permissionDenied(chip: "/dev/gpiochip0").description
            == "permission denied opening GPIO chip /dev/gpiochip0: add your user to the gpio group "
            + "(sudo usermod -aG gpio $USER, then log in again) or run as root")
        #expect(GPIOError.lineBusy(chip: "/dev/gpiochip0", line: 17, lineName: "GPIO17", consumer: "pigpiod").description
            == "GPIO line 17 (GPIO17) on /dev/gpiochip0 is in use by \"pigpiod\": stop that program or driver "
            + "(or disable its device-tree overlay), or pick another line in the configuration")
        #expect(GPIOError.lineOutOfRange(chip: "/dev/gpiochip0", line: 60, lineCount: 54).description
            == "GPIO chip /dev/gpiochip0 has no line 60: valid lines are 0…53; check the line map in the configuration")
    }
}
#endif
