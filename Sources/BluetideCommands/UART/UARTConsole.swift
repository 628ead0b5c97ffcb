import BluetideSerial
import Foundation
import Synchronization
import BluetideSupport

/// The user's side of `bluetide uart`: where input comes from, where data and status lines go,
/// and whether it is an interactive terminal. Standard input/output when run; pipes in tests.
final class UARTConsole: Sendable {
    /// Input (keys or piped bytes).
    let input: FileDescriptorPort
    /// Output of received data.
    let output: FileDescriptorPort
    /// Descriptor status lines go to.
    let statusDescriptor: Int32
    /// Whether input and output are a terminal (raw-mode session rather than a pipe).
    let isInteractive: Bool
    private let statusLock = Mutex(())
    /// Whether the last data written ended mid-line (a status line then starts on a new one).
    private let lineOpen = Mutex(false)

    init(input: FileDescriptorPort, output: FileDescriptorPort, statusDescriptor: Int32, isInteractive: Bool) {
        self.input = input
        self.output = output
        self.statusDescriptor = statusDescriptor
        self.isInteractive = isInteractive
    }

    /// Standard input, output and error.
    static func standard() throws -> UARTConsole {
        do {
            let port = try FileDescriptorPort(input: STDIN_FILENO, output: STDOUT_FILENO)
            return UARTConsole(
                input: port, output: port, statusDescriptor: STDERR_FILENO,
                isInteractive: isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1)
        } catch {
            throw CommandFailure("cannot use standard input/output: \(error)")
        }
    }

    /// Writes a status line to the status descriptor (stderr), whole.
    func status(_ line: String, skipEmpty: Bool = false) {
        if skipEmpty, line.isEmpty { return }
        var bytes = Array((line + (isInteractive ? "\r\n" : "\n")).utf8)
        if isInteractive, lineOpen.withLock({ open in defer { open = false }; return open }) { bytes.insert(contentsOf: [0x0D, 0x0A], at: 0) }
        statusLock.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeBytes { Foundation.write(statusDescriptor, $0.baseAddress! + offset, bytes.count - offset) }
                if count <= 0 { if errno == EINTR { continue }; return }
                offset += count
            }
        }
    }

    /// Writes received data to the output, remembering whether it ended mid-line.
    func writeData(_ bytes: [UInt8]) async {
        guard let last = bytes.last else { return }
        lineOpen.withLock { $0 = last != 0x0A }
        try? await output.write(bytes)
    }

    /// Writes a data line (a device list row) to the output.
    func printLine(_ line: String) async {
        try? await output.write(Array((line + "\n").utf8))
    }

    /// Asks a question on the status stream and reads a line (cooked input, before raw mode).
    func prompt(_ question: String) async throws -> String {
        let bytes = Array(question.utf8)
        _ = bytes.withUnsafeBytes { Foundation.write(statusDescriptor, $0.baseAddress, $0.count) }
        var line: [UInt8] = []
        while let chunk = await input.read(maximum: 1) {
            if chunk == [0x0A] || chunk == [0x0D] { break }
            line += chunk
        }
        return String(decoding: line, as: UTF8.self)
    }
}

/// Status events as lines on stderr: "HMSoft: link lost: …", or with --json records of
/// docs/json-output.md (`connected`, `disconnected`, `reconnecting`, `reconnected`, `gave-up`,
/// `rssi`, `closed`, `message`), each with the `device` and `time`.
struct UARTStatusReporter: Sendable {
    let io: UARTConsole
    let json: Bool
    /// When the command started: records' `time.monotonic` counts from here.
    let start = ContinuousClock.now

    func report(_ event: SerialStatus, link: SerialLink) {
        if json {
            var fields: [String: JSONOutputValue] = ["device": Self.device(link)]
            switch event {
            case let .connected(profile, chunkSize):
                fields["profile"] = .string(profile.kind.rawValue)
                fields["chunkBytes"] = .integer(Int64(chunkSize))
            case let .disconnected(reason), let .gaveUp(reason): fields["reason"] = .string(reason)
            case let .reconnecting(attempt, of):
                fields["attempt"] = .integer(Int64(attempt))
                fields["of"] = .integer(Int64(of))
            case let .rssi(dBm): fields["rssiDbm"] = .integer(Int64(dBm))
            case .reconnected, .closed: break
            }
            io.status(line(event.name, fields))
        } else {
            io.status("\(link.name): \(event)")
        }
    }

    /// A one-off message (not a link event).
    func message(_ text: String, link: SerialLink? = nil) {
        if json {
            var fields: [String: JSONOutputValue] = ["text": .string(text)]
            if let link { fields["device"] = Self.device(link) }
            io.status(line("message", fields))
        } else {
            io.status(link.map { "\($0.name): \(text)" } ?? text)
        }
    }

    /// One record: `fields`, the `type` and the `time`.
    func line(_ type: String, _ fields: [String: JSONOutputValue]) -> String {
        let elapsed = ContinuousClock.now - start
        var fields = fields
        fields["time"] = JSONOutput.time(
            monotonic: elapsed.inSeconds)
        return JSONOutput.line(type, fields)
    }

    /// A link's device as records name it.
    static func device(_ link: SerialLink) -> JSONOutputValue { JSONOutput.device(link.address, name: link.name) }
}
