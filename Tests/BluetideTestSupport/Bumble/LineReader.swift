import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file descriptor on its own thread (blocking `read`, never on the cooperative pool)
/// and yields complete lines, without the newline (and without a trailing `\r`).
enum LineReader {
    /// Starts the reader thread; the stream finishes at end of file or on a read error. Every
    /// chunk read is also written to `copy`, which is closed at the end.
    static func start(fileDescriptor: Int32, threadName: String, copy: FileHandle? = nil) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { raw in
                    read(fileDescriptor, raw.baseAddress, raw.count)
                }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                try? copy?.write(contentsOf: Data(buffer[0..<count]))
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    var line = Array(pending[..<newline])
                    pending.removeSubrange(...newline)
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    continuation.yield(String(decoding: line, as: UTF8.self))
                }
            }
            if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
            try? copy?.close()
            continuation.finish()
        }
        thread.name = threadName
        thread.start()
        return stream
    }
}
