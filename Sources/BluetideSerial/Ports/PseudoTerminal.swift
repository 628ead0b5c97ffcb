#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A pseudo-terminal that serial programs (minicom, screen, pyserial) open as a serial port:
/// the master side stays here, the slave side's path (`/dev/pts/N`) is linked from a name of
/// the user's choice (e.g. `/tmp/ttyBLE`).
///
/// The terminal is in raw mode (no echo, no line editing, no CR/LF translation), so bytes pass
/// unchanged. This process keeps a descriptor of the slave side open as well, so the master
/// never sees a hang-up when a program closes the port: programs may open and close it as
/// often as they like, and it outlives BLE reconnects.
public final class PseudoTerminal: Sendable {
    /// The master descriptor (what this process reads and writes).
    public let master: Int32
    /// The slave side's path, e.g. `/dev/pts/3`.
    public let slavePath: String
    /// The symlink made to the slave side, if any.
    public let linkPath: String?
    private let heldSlave: Int32

    /// Opens a pseudo-terminal in raw mode and links `linkPath` to it (replacing an existing
    /// symlink there, never a regular file).
    public init(linkPath: String? = nil) throws(PortError) {
        let calls = try PTYCalls.load()
        // Close-on-exec (the master and the held slave): a program started meanwhile must not
        // inherit the pty and hold it open after ``close()``.
        let master = calls.openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw PortError.system("posix_openpt", errno) }
        guard calls.grantpt(master) == 0, calls.unlockpt(master) == 0, let name = calls.ptsname(master) else {
            let code = errno
            Glibc.close(master)
            throw PortError.system("grantpt/unlockpt", code)
        }
        let slavePath = String(cString: name)
        let slave = Glibc.open(slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else {
            let code = errno
            Glibc.close(master)
            throw PortError.system("open \(slavePath)", code)
        }
        var mode = termios()
        tcgetattr(slave, &mode)
        cfmakeraw(&mode)
        tcsetattr(slave, TCSANOW, &mode)
        if let linkPath {
            var info = stat()
            if lstat(linkPath, &info) == 0 {
                guard (info.st_mode & S_IFMT) == S_IFLNK else {
                    Glibc.close(slave); Glibc.close(master)
                    throw PortError.invalid("--pty \(linkPath): a file that is not a symlink is there; choose another path")
                }
                unlink(linkPath)
            }
            guard symlink(slavePath, linkPath) == 0 else {
                let code = errno
                Glibc.close(slave); Glibc.close(master)
                throw PortError.invalid("--pty \(linkPath): cannot make the symlink: \(String(cString: strerror(code)))")
            }
        }
        self.master = master
        self.slavePath = slavePath
        self.linkPath = linkPath
        self.heldSlave = slave
    }

    /// A port reading and writing the master side (closing it leaves the terminal open).
    public func port() throws(PortError) -> FileDescriptorPort {
        try FileDescriptorPort(input: master, output: master)
    }

    /// Removes the symlink (if it still points here) and closes both sides.
    public func close() {
        if let linkPath, let target = try? FileManager.default.destinationOfSymbolicLink(atPath: linkPath), target == slavePath {
            unlink(linkPath)
        }
        Glibc.close(heldSlave)
        Glibc.close(master)
    }
}

/// The C library's pseudo-terminal calls. Swift's Glibc module leaves them out (glibc declares
/// them only under _XOPEN_SOURCE), so they are looked up by name in the C library already loaded.
private struct PTYCalls {
    let openpt: @convention(c) (Int32) -> Int32
    let grantpt: @convention(c) (Int32) -> Int32
    let unlockpt: @convention(c) (Int32) -> Int32
    let ptsname: @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?

    static func load() throws(PortError) -> PTYCalls {
        let library = dlopen(nil, RTLD_NOW)
        guard let openpt = dlsym(library, "posix_openpt"), let grant = dlsym(library, "grantpt"),
              let unlock = dlsym(library, "unlockpt"), let name = dlsym(library, "ptsname") else {
            throw PortError.invalid("this system's C library has no posix_openpt/grantpt/unlockpt/ptsname")
        }
        return PTYCalls(
            openpt: unsafeBitCast(openpt, to: (@convention(c) (Int32) -> Int32).self),
            grantpt: unsafeBitCast(grant, to: (@convention(c) (Int32) -> Int32).self),
            unlockpt: unsafeBitCast(unlock, to: (@convention(c) (Int32) -> Int32).self),
            ptsname: unsafeBitCast(name, to: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self))
    }
}
