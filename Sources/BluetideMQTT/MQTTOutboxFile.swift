import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The on-disk copy of the client's outbox (``MQTTOptions/outboxFile``): the QoS 1 messages kept
/// while the broker is away, so they survive a restart of the process and are sent, in order,
/// by the next one.
///
/// An append-only journal: each record is `[length: UInt32 LE][flags: UInt8][topic length:
/// UInt16 LE][topic][payload]` (flags: bit 0 retain). A record cut short by a crash ends the
/// journal when it is read. It is rewritten (to a new file, then renamed) when it holds twice
/// the outbox's bound, so it stays bounded, and emptied once every message it held has been
/// acknowledged by the broker. Written with `write(2)`, without `fsync`: it survives the
/// process (a crash, `kill -9`, a restart), not a power cut.
///
/// A write that fails (a full disk, an I/O error) stops the journal: the failure is returned
/// once and the in-memory outbox goes on alone. Owned by the client core, under its lock.
struct MQTTOutboxFile {
    let path: String
    private var descriptor: Int32
    /// Records in the file now.
    private(set) var records: Int
    /// Set once a write failed; nothing is written afterwards.
    private(set) var failure: String?

    /// Opens (creating) the journal at `path` and reads the messages it holds, oldest first.
    static func open(path: String) throws(MQTTError) -> (MQTTOutboxFile, [MQTTMessage]) {
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            throw MQTTError("outbox file \(path): not a regular file; expected a file path, e.g. /var/lib/bluetide/outbox")
        }
        let messages = try read(path: path)
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw MQTTError("outbox file \(path): cannot be opened for writing: \(String(cString: strerror(errno))); pick a writable path")
        }
        return (MQTTOutboxFile(path: path, descriptor: fd, records: messages.count, failure: nil), messages)
    }

    /// The messages in the journal at `path` (none when it does not exist); a record cut short ends it.
    static func read(path: String) throws(MQTTError) -> [MQTTMessage] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MQTTError("outbox file \(path): cannot be read; check its permissions")
        }
        let bytes = [UInt8](data)
        var messages: [MQTTMessage] = []
        var offset = 0
        while offset + 4 <= bytes.count {
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
            let start = offset + 4
            guard length >= 3, start + length <= bytes.count else { break }
            let flags = bytes[start]
            let topicLength = Int(bytes[start + 1]) | Int(bytes[start + 2]) << 8
            guard 3 + topicLength <= length else { break }
            let topic = String(decoding: bytes[(start + 3)..<(start + 3 + topicLength)], as: UTF8.self)
            let payload = Array(bytes[(start + 3 + topicLength)..<(start + length)])
            messages.append(MQTTMessage(topic: topic, payload: payload, qos: .atLeastOnce, retain: flags & 1 != 0))
            offset = start + length
        }
        return messages
    }

    static func encode(_ message: MQTTMessage) -> [UInt8] {
        let topic = Array(message.topic.utf8.prefix(65_535))
        let length = 3 + topic.count + message.payload.count
        var bytes: [UInt8] = [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24 & 0xFF)]
        bytes.append(message.retain ? 1 : 0)
        bytes += [UInt8(topic.count & 0xFF), UInt8(topic.count >> 8)]
        bytes += topic
        bytes += message.payload
        return bytes
    }

    /// Appends `message`; returns the failure the first time a write fails (nil otherwise).
    mutating func append(_ message: MQTTMessage) -> String? {
        guard failure == nil else { return nil }
        if let problem = write(Self.encode(message), to: descriptor) { return fail(problem) }
        records += 1
        return nil
    }

    /// Replaces the journal with `messages` (a new file renamed over the old one).
    mutating func rewrite(_ messages: some Collection<MQTTMessage>) -> String? {
        guard failure == nil else { return nil }
        let temporary = path + ".new"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return fail("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        var bytes: [UInt8] = []
        for message in messages { bytes += Self.encode(message) }
        if let problem = write(bytes, to: fd) {
            Glibc.close(fd)
            unlink(temporary)
            return fail(problem)
        }
        Glibc.close(fd)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            return fail("cannot replace \(path): \(String(cString: strerror(errno)))")
        }
        Glibc.close(descriptor)
        descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { return fail("cannot reopen \(path): \(String(cString: strerror(errno)))") }
        records = messages.count
        return nil
    }

    /// Empties the journal (every message it held was acknowledged).
    mutating func clear() -> String? {
        guard records > 0 || failure != nil, descriptor >= 0 else { return nil }
        guard ftruncate(descriptor, 0) == 0 else {
            return failure == nil ? fail("cannot empty \(path): \(String(cString: strerror(errno)))") : nil
        }
        records = 0
        return nil
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    private mutating func fail(_ problem: String) -> String {
        failure = problem
        return "outbox file \(path): \(problem); queued messages are kept in memory only from now on"
    }

    private func write(_ bytes: [UInt8], to fd: Int32) -> String? {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            written += result
        }
        return nil
    }
}
