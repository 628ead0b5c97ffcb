#if os(Linux)
import BluetideBase
import Glibc

/// A GPIO chip through the Linux character device (`/dev/gpiochipN`, uAPI v2, Linux ≥ 5.10).
///
/// Opening checks the device with `GPIO_GET_CHIPINFO_IOCTL`; line info and requests use the
/// v2 ioctls with the struct layouts of ``GPIOUAPI``. Not the deprecated sysfs interface.
/// The chip fd is closed when the last reference goes; requests keep their own fds.
public final class LinuxGPIOChip: GPIOChip {
    /// Device path, e.g. `/dev/gpiochip0`.
    public let path: String
    /// Name, label and line count read when the chip was opened.
    public let chipInfo: GPIOChipInfo
    private let fd: Int32

    /// Human-readable identity for messages: the device path.
    public var chipDescription: String { path }

    /// Opens a chip. Errors: ``GPIOError/noSuchChip(chip:available:)`` listing the chips found in
    /// `/dev`, ``GPIOError/permissionDenied(chip:)``, ``GPIOError/notAGPIOChip(chip:)``.
    /// `deviceDirectory` is where other chips are looked for in the "no such chip" message.
    public init(path: String, deviceDirectory: String = "/dev") throws(GPIOError) {
        self.path = path
        let fd: Int32
        switch LinuxSystemCalls.openReadWrite(path) {
        case .success(let opened): fd = opened
        case .failure(let error):
            switch error.code {
            case ENOENT, ENODEV, ENXIO, ENOTDIR:
                throw .noSuchChip(chip: path, available: LinuxSystemCalls.gpioChips(in: deviceDirectory))
            case EACCES, EPERM:
                throw .permissionDenied(chip: path)
            case EISDIR:
                throw .notAGPIOChip(chip: path)
            default:
                throw .systemCall(chip: path, operation: "open", errno: error.code, message: LinuxSystemCalls.message(error.code))
            }
        }
        var buffer = [UInt8](repeating: 0, count: GPIOUAPI.chipInfoSize)
        if let code = LinuxSystemCalls.ioctl(fd, GPIOUAPI.getChipInfo, &buffer) {
            close(fd)
            if code == ENOTTY || code == EINVAL { throw .notAGPIOChip(chip: path) }
            throw .systemCall(chip: path, operation: "GPIO_GET_CHIPINFO_IOCTL", errno: code, message: LinuxSystemCalls.message(code))
        }
        do {
            chipInfo = try GPIOUAPI.decodeChipInfo(buffer)
        } catch {
            close(fd)
            throw .notAGPIOChip(chip: path)
        }
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// The `gpiochipN` devices in a directory (default `/dev`), sorted by N.
    public static func availableChips(in directory: String = "/dev") -> [String] {
        LinuxSystemCalls.gpioChips(in: directory)
    }

    /// Name, label and number of lines.
    public func info() throws(GPIOError) -> GPIOChipInfo {
        chipInfo
    }

    /// Name and state of one line, via `GPIO_V2_GET_LINEINFO_IOCTL`.
    public func lineInfo(_ offset: UInt32) throws(GPIOError) -> GPIOLineInfo {
        guard offset < chipInfo.lines else {
            throw .lineOutOfRange(chip: path, line: offset, lineCount: chipInfo.lines)
        }
        var buffer = GPIOUAPI.encodeLineInfoQuery(offset: offset)
        if let code = LinuxSystemCalls.ioctl(fd, GPIOUAPI.getLineInfo, &buffer) {
            throw .systemCall(chip: path, operation: "GPIO_V2_GET_LINEINFO_IOCTL for line \(offset)", errno: code,
                              message: LinuxSystemCalls.message(code))
        }
        do {
            return try GPIOUAPI.decodeLineInfo(buffer)
        } catch {
            throw .systemCall(chip: path, operation: "decoding line info for line \(offset)", errno: 0, message: error.description)
        }
    }

    /// Requests lines via `GPIO_V2_GET_LINE_IOCTL`. A line held by someone else gives
    /// ``GPIOError/lineBusy(chip:line:lineName:consumer:)`` naming the holder from its line info.
    public func request(_ request: GPIORequest) throws(GPIOError) -> any GPIOLineRequest {
        try requestLines(request)
    }

    /// Same as ``request(_:)`` with the concrete type.
    public func requestLines(_ request: GPIORequest) throws(GPIOError) -> LinuxGPIOLineRequest {
        for line in request.lines where line.offset >= chipInfo.lines {
            throw .lineOutOfRange(chip: path, line: line.offset, lineCount: chipInfo.lines)
        }
        let record = try GPIOUAPI.lineRequest(for: request, chip: path)
        var buffer = record.bytes
        if let code = LinuxSystemCalls.ioctl(fd, GPIOUAPI.getLine, &buffer) {
            switch code {
            case EBUSY:
                for line in request.lines {
                    if let info = try? lineInfo(line.offset), info.isUsed {
                        throw .lineBusy(chip: path, line: line.offset, lineName: info.name, consumer: info.consumer)
                    }
                }
                throw .lineBusy(chip: path, line: request.lines[0].offset, lineName: "", consumer: "")
            case EACCES, EPERM:
                throw .permissionDenied(chip: path)
            case EINVAL:
                throw .invalidRequest(chip: path, reason: "the kernel refused the line configuration (EINVAL): "
                    + "check that the chip supports the bias, drive and debounce settings (Linux ≥ 5.10 needed)")
            default:
                throw .systemCall(chip: path, operation: "GPIO_V2_GET_LINE_IOCTL", errno: code, message: LinuxSystemCalls.message(code))
            }
        }
        var reader = ByteReader(buffer)
        let lineFD: Int32
        do {
            try reader.skip(GPIOUAPI.LineRequest.fdOffset, "gpio_v2_line_request")
            lineFD = try reader.read(Int32.self, "gpio_v2_line_request.fd")
        } catch {
            throw .systemCall(chip: path, operation: "GPIO_V2_GET_LINE_IOCTL", errno: 0, message: error.description)
        }
        guard lineFD >= 0 else {
            throw .systemCall(chip: path, operation: "GPIO_V2_GET_LINE_IOCTL", errno: 0, message: "the kernel returned no line fd")
        }
        var wakePipe: (read: Int32, write: Int32)?
        if request.lines.contains(where: { $0.settings.edges != .none }) {
            switch LinuxGPIOLineRequest.makeWakePipe() {
            case .success(let pipe): wakePipe = pipe
            case .failure(let error):
                close(lineFD)
                throw .systemCall(chip: path, operation: "pipe (edge reader wake-up)", errno: error.code,
                                  message: LinuxSystemCalls.message(error.code))
            }
        }
        return LinuxGPIOLineRequest(chip: path, request: request, lineFD: lineFD, wakePipe: wakePipe)
    }
}
#endif
