import ArgumentParser
import Bluetide
import BluetideSerial
import Foundation
import Synchronization
import BluetideSupport

/// `--log`, `--log-format` and `--permit`: what `uart` and `uart serve` share about the traffic.
struct UARTTrafficOptions: ParsableArguments {
    @Option(name: .long, help: "Write every chunk sent and received, with its time, direction and device, to FILE (appended).")
    var log: String?

    @Option(name: .long, help: "The --log format: text (escaped bytes), hex, or jsonl (JSON Lines, the --json record shape).")
    var logFormat: String = "text"

    @Option(name: .long, help: "Which way data may go: rw (both), ro (only receive: input is not sent), wo (only send: received bytes are not shown).")
    var permit: String = "rw"

    /// The direction rule `--permit` asks for.
    func permission() throws -> UARTPermission {
        guard let value = UARTPermission(rawValue: permit.lowercased()) else {
            throw CommandFailure("--permit \(permit): expected rw, ro or wo")
        }
        return value
    }

    /// Opens the `--log` file (appending) in the `--log-format`; nil without `--log`.
    func openLog(report: @escaping @Sendable (String) -> Void = { StandardStreams.error.line("bluetide: \($0)") }) throws -> UARTTrafficLog? {
        guard let format = UARTTrafficLog.Format(rawValue: logFormat.lowercased()) else {
            throw CommandFailure("--log-format \(logFormat): expected text, hex or jsonl")
        }
        guard let log else { return nil }
        let descriptor = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CommandFailure("--log \(log): cannot open it for writing: \(String(cString: strerror(errno))); check the directory exists and is writable")
        }
        return UARTTrafficLog(descriptor: descriptor, path: log, format: format, report: report)
    }
}

/// `--permit`: which way data may go (the library's rule).
typealias UARTPermission = SerialPermission

/// The two-way log of `--log`: one entry per chunk, in the order they were handed over (sent:
/// accepted by the link for writing; received: as notified or written by a central), each with
/// its wall-clock time (UTC), seconds since the command started, the direction and the device.
///
/// - `text`: `2026-11-27T20:31:02.123Z 1.234567 > HMSoft AT+NAME?\r\n`; `>` is sent, `<` received;
///   bytes are escaped so the line is one line and reversible: `\r`, `\n`, `\t`, `\\`, and `\xNN`
///   for every other byte outside printable ASCII.
/// - `hex`: the same with the bytes as lower-case hex pairs separated by spaces.
/// - `jsonl`: `sent` / `received` records of docs/json-output.md: `device`, `value.hex`, `text`, `time`.
///
/// A write that fails (a full disk) is reported once and logging stops; the session goes on.
final class UARTTrafficLog: Sendable {
    enum Format: String, Sendable { case text, hex, jsonl }
    enum Direction: String, Sendable { case sent, received }

    let path: String
    let format: Format
    private let descriptor: Int32
    private let report: @Sendable (String) -> Void
    private let start = ContinuousClock.now
    private let state = Mutex<(open: Bool, failed: Bool)>((true, false))

    init(descriptor: Int32, path: String, format: Format, report: @escaping @Sendable (String) -> Void) {
        self.descriptor = descriptor
        self.path = path
        self.format = format
        self.report = report
    }

    /// Logs one chunk. `device` is a name or an address as text; `address` gives the JSON
    /// record's `device` its address when known.
    func record(_ direction: Direction, device: String, address: BluetoothAddress? = nil, bytes: [UInt8], at wall: Date = Date()) {
        let elapsed = ContinuousClock.now - start
        let seconds = elapsed.inSeconds
        let line = Self.line(format, direction, device: device, address: address, bytes: bytes, monotonic: seconds, wall: wall)
        write(Array(line.utf8))
    }

    /// One log line (with its newline): pure, for tests.
    static func line(
        _ format: Format, _ direction: Direction, device: String, address: BluetoothAddress?, bytes: [UInt8], monotonic: Double, wall: Date
    ) -> String {
        switch format {
        case .jsonl:
            var fields: [String: JSONOutputValue] = [
                "value": JSONOutput.value(bytes), "text": .string(String(decoding: bytes, as: UTF8.self)),
                "time": JSONOutput.time(monotonic: monotonic, wall: wall),
            ]
            fields["device"] = address.map { JSONOutput.device($0, name: device == "\($0)" ? nil : device) } ?? JSONOutput.device(text: device)
            return JSONOutput.line(direction.rawValue, fields) + "\n"
        case .text, .hex:
            var utc = ""
            if case let .object(time) = JSONOutput.time(monotonic: monotonic, wall: wall), case let .string(text)? = time["utc"] { utc = text }
            let mono = String(format: "%.6f", monotonic)
            let body = format == .hex ? bytes.map { String(format: "%02x", $0) }.joined(separator: " ") : escape(bytes)
            return "\(utc) \(mono) \(direction == .sent ? ">" : "<") \(device) \(body)\n"
        }
    }

    /// The bytes as one line of text: printable ASCII as is, `\r` `\n` `\t` `\\`, else `\xNN`.
    static func escape(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            switch byte {
            case 0x0D: text += "\\r"
            case 0x0A: text += "\\n"
            case 0x09: text += "\\t"
            case 0x5C: text += "\\\\"
            case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
            default: text += String(format: "\\x%02x", byte)
            }
        }
        return text
    }

    private func write(_ bytes: [UInt8]) {
        state.withLock { s in
            guard s.open, !s.failed else { return }
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 {
                    s.failed = true
                    report("--log \(path): writing failed (\(String(cString: strerror(errno)))); the log stops here, the session goes on")
                    return
                }
                offset += count
            }
        }
    }

    /// Closes the file. Idempotent.
    func close() {
        state.withLock { s in
            guard s.open else { return }
            s.open = false
            Foundation.close(descriptor)
        }
    }
}
