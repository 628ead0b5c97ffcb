#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The Linux HCI user channel (`hci-socket:N`): exclusive raw H4 access to adapter `hciN`,
/// with no kernel host stack in the way. Needs CAP_NET_ADMIN and an adapter that is down and not
/// held by bluetoothd. Each `write` carries one whole packet and each `read` returns one (a batch is
/// one `write` per packet, and the reader takes every waiting packet per wake-up).
public enum HCISocketTransport {
    /// AF_BLUETOOTH (the socket family).
    static let addressFamily: Int32 = 31
    /// BTPROTO_HCI (the protocol within the family).
    static let protocolHCI: Int32 = 1
    /// HCI_CHANNEL_USER (exclusive raw access).
    static let channelUser: UInt16 = 1

    /// `struct sockaddr_hci` (6 bytes, host byte order), missing from the C library headers.
    struct SocketAddress {
        var family: UInt16
        var device: UInt16
        var channel: UInt16
    }

    /// Opens the user channel of `hci<index>`; throws ``TransportError/openFailed(_:)`` saying why
    /// and what to do (adapter up or held by bluetoothd, missing capability, no such adapter).
    public static func open(index: UInt16) throws -> FileDescriptorTransport {
        let name = "hci-socket:\(index)"
        #if os(Linux)
        let fd = socket(addressFamily, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), protocolHCI)
        guard fd >= 0 else {
            throw TransportError.openFailed(socketFailureMessage(errno: POSIX.errorNumber, index: index))
        }
        var address = SocketAddress(family: UInt16(addressFamily), device: index, channel: channelUser)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<SocketAddress>.size))
            }
        }
        guard result == 0 else {
            let code = POSIX.errorNumber
            closeDescriptor(fd)
            throw TransportError.openFailed(bindFailureMessage(errno: code, index: index))
        }
        return try FileDescriptorTransport(fd: fd, name: name, packetPerWrite: true)
        #else
        throw TransportError.unavailable("\(name): the HCI user channel exists on Linux only; use serial: or tcp-client: here")
        #endif
    }

    /// The message for a failed `socket(AF_BLUETOOTH, ...)`.
    static func socketFailureMessage(errno code: Int32, index: UInt16) -> String {
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            return "hci-socket:\(index): this kernel offers no Bluetooth sockets (AF_BLUETOOTH): load the bluetooth "
                + "module (sudo modprobe bluetooth), or in a container without it use tcp-client: or serial:"
        case EPERM, EACCES:
            return "hci-socket:\(index): not allowed to open a Bluetooth socket: it needs CAP_NET_ADMIN "
                + "(run as root, or: sudo setcap cap_net_admin+ep <program>)"
        default:
            return "hci-socket:\(index): cannot open a Bluetooth HCI socket: \(POSIX.describe(code))"
        }
    }

    /// The message for a failed `bind` to the user channel, per the kernel's `hci_sock_bind` checks.
    static func bindFailureMessage(errno code: Int32, index: UInt16) -> String {
        let spec = "hci-socket:\(index)"
        switch code {
        case EBUSY, EALREADY:
            return "\(spec): hci\(index) is up or held by bluetoothd. Take it down with: sudo hciconfig hci\(index) down "
                + "(or sudo btmgmt --index \(index) power off), or stop bluetoothd: sudo systemctl stop bluetooth"
        case EPERM, EACCES:
            return "\(spec): the HCI user channel needs CAP_NET_ADMIN: run as root, or grant it once with "
                + "sudo setcap cap_net_admin+ep <program>"
        case ENODEV:
            return "\(spec): there is no adapter hci\(index) (list them with: ls /sys/class/bluetooth or hciconfig -a)"
        case EUSERS:
            return "\(spec): another program already holds the user channel of hci\(index)"
        #if os(Linux)
        case ERFKILL:
            return "\(spec): hci\(index) is blocked by rfkill: rfkill unblock bluetooth"
        #endif
        default:
            return "\(spec): cannot bind to the user channel of hci\(index): \(POSIX.describe(code))"
        }
    }
}
