#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// H4 over a UART (`serial:/dev/ttyACM0[,BAUD][,rtscts]`): Zephyr `hci_uart`, an nRF52 DK, an
/// HCI module. Opens the device raw (8 data bits, no parity, 1 stop bit, no echo, no line
/// editing), at the given speed, with RTS/CTS hardware flow control when asked.
public enum SerialTransport {
    /// Opens and configures `path`; throws ``TransportError/openFailed(_:)`` naming the device,
    /// the reason and the fix (permissions, missing device, not a terminal).
    public static func open(path: String, baudRate: Int, rtsCts: Bool) throws -> FileDescriptorTransport {
        let name = "serial:\(path),\(baudRate)" + (rtsCts ? ",rtscts" : "")
        guard let speed = speedValue(baudRate) else {
            throw TransportError.openFailed(
                "\(name): unsupported baud rate \(baudRate); supported: \(SerialBaudRate.supported.map(String.init).joined(separator: ", "))")
        }
        let fd = openDescriptor(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            throw TransportError.openFailed(openFailureMessage(errno: POSIX.errorNumber, path: path, name: name))
        }
        guard isatty(fd) == 1 else {
            closeDescriptor(fd)
            throw TransportError.openFailed("\(name): \(path) is not a serial (terminal) device")
        }
        var options = termios()
        guard tcgetattr(fd, &options) == 0 else {
            let code = POSIX.errorNumber
            closeDescriptor(fd)
            throw TransportError.openFailed("\(name): cannot read the terminal settings: \(POSIX.describe(code))")
        }
        cfmakeraw(&options)
        options.c_cflag &= ~tcflag_t(CSIZE | PARENB | CSTOPB)
        options.c_cflag &= ~hardwareFlowControl
        options.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
        if rtsCts { options.c_cflag |= hardwareFlowControl }
        withUnsafeMutableBytes(of: &options.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        cfsetispeed(&options, speed)
        cfsetospeed(&options, speed)
        guard tcsetattr(fd, TCSANOW, &options) == 0 else {
            let code = POSIX.errorNumber
            closeDescriptor(fd)
            throw TransportError.openFailed("\(name): cannot set \(baudRate) baud 8N1 raw: \(POSIX.describe(code))")
        }
        // Drop whatever the device sent before we were listening.
        tcflush(fd, TCIOFLUSH)
        return try FileDescriptorTransport(fd: fd, name: name)
    }

    /// The message for a failed `open(2)` of a serial device.
    static func openFailureMessage(errno code: Int32, path: String, name: String) -> String {
        switch code {
        case ENOENT:
            return "\(name): no device \(path). Is the board plugged in? List candidates with: ls /dev/ttyACM* /dev/ttyUSB*"
        case EACCES, EPERM:
            return "\(name): permission denied on \(path). Add yourself to its group (usually dialout: "
                + "sudo usermod -aG dialout $USER, then log in again) or run as root"
        case EBUSY:
            return "\(name): \(path) is in use by another program (find it with: fuser \(path))"
        default:
            return "\(name): cannot open \(path): \(POSIX.describe(code))"
        }
    }

    /// CRTSCTS: not every C library header exposes it to Swift, so it is spelled out.
    private static var hardwareFlowControl: tcflag_t {
        #if os(Linux)
        return 0o20000000000
        #else
        return 0x0003_0000  // CCTS_OFLOW | CRTS_IFLOW
        #endif
    }

    /// The termios speed value for `baudRate`, or nil when it is not a standard rate.
    private static func speedValue(_ baudRate: Int) -> speed_t? {
        guard SerialBaudRate.supported.contains(baudRate) else { return nil }
        #if os(Linux)
        switch baudRate {
        case 9600: return speed_t(B9600)
        case 19200: return speed_t(B19200)
        case 38400: return speed_t(B38400)
        case 57600: return speed_t(B57600)
        case 115_200: return speed_t(B115200)
        case 230_400: return speed_t(B230400)
        case 460_800: return speed_t(B460800)
        case 500_000: return speed_t(B500000)
        case 576_000: return speed_t(B576000)
        case 921_600: return speed_t(B921600)
        case 1_000_000: return speed_t(B1000000)
        case 1_152_000: return speed_t(B1152000)
        case 1_500_000: return speed_t(B1500000)
        case 2_000_000: return speed_t(B2000000)
        case 2_500_000: return speed_t(B2500000)
        case 3_000_000: return speed_t(B3000000)
        default: return nil
        }
        #else
        return speed_t(baudRate)  // Darwin takes the rate itself
        #endif
    }
}

/// `open(2)`, named apart from the `open` functions of the types here.
func openDescriptor(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags)
}
