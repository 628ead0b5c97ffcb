import BluetideHCI
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends packets to a btsnoop file as they happen (datalink 1002, H4). Each record is written
/// with one `write`, so a capture cut off by a crash is intact up to its last record.
public actor BTSnoopFileWriter {
    /// The capture file.
    public let path: String
    private var fd: Int32

    /// Creates (or truncates) `path` and writes the file header.
    public init(path: String) throws {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw TransportError.openFailed("snoop file \(path): cannot create it: \(POSIX.describe(POSIX.errorNumber))")
        }
        let code = POSIX.writeAll(fd, BTSnoop.fileHeader)
        guard code == 0 else {
            closeDescriptor(fd)
            throw TransportError.ioFailed("snoop file \(path): cannot write: \(POSIX.describe(code))")
        }
        self.fd = fd
    }

    /// Records `packet`, stamped `unixMicroseconds` (default: now).
    public func write(
        _ packet: HCIPacket, direction: SnoopDirection, unixMicroseconds: Int64? = nil
    ) throws {
        try write(batch: [packet], direction: direction, unixMicroseconds: unixMicroseconds)
    }

    /// Records `packets` in order, all stamped `unixMicroseconds` (default: now), with one
    /// `write` (each record stays whole even if the process dies mid-batch: the file is cut
    /// at a record boundary or holds the whole batch).
    public func write(
        batch packets: [HCIPacket], direction: SnoopDirection, unixMicroseconds: Int64? = nil
    ) throws {
        guard fd >= 0 else { throw TransportError.closed("snoop file \(path)") }
        guard !packets.isEmpty else { return }
        let timestamp = BTSnoop.timestamp(unixMicroseconds: unixMicroseconds ?? POSIX.unixMicroseconds())
        var bytes: [UInt8] = []
        bytes.reserveCapacity(packets.reduce(0) { $0 + BTSnoop.recordHeaderLength + $1.h4Count })
        for packet in packets {
            BTSnoop.appendRecord(packet, direction: direction, timestamp: timestamp, to: &bytes)
        }
        let code = POSIX.writeAll(fd, bytes)
        guard code == 0 else {
            throw TransportError.ioFailed("snoop file \(path): cannot write: \(POSIX.describe(code))")
        }
    }

    /// Closes the file; later writes throw.
    public func close() {
        guard fd >= 0 else { return }
        closeDescriptor(fd)
        fd = -1
    }

    deinit {
        if fd >= 0 { closeDescriptor(fd) }
    }
}

/// `close(2)`, named apart from the `close()` methods of the types here.
@inline(__always)
func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
