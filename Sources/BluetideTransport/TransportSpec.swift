/// A transport named by one string, in the convention Bumble users know:
/// `tcp-client:HOST:PORT`, `tcp-server:HOST:PORT` (`_` = this computer only, 127.0.0.1; `0.0.0.0` = every interface),
/// `serial:/dev/ttyACM0[,BAUD][,rtscts]`, `hci-socket:N`, `virtual` / `virtual:NAME`, each
/// optionally followed by `+snoop:FILE` to also write every packet to a btsnoop capture.
public struct TransportSpec: Sendable, Equatable, CustomStringConvertible {
    /// Where the HCI packets go.
    public enum Kind: Sendable, Equatable {
        /// Connect to a controller listening on TCP.
        case tcpClient(host: String, port: Int)
        /// Listen on TCP (nil host = this computer only, 127.0.0.1; port 0 = any free port) for one controller.
        case tcpServer(host: String?, port: Int)
        /// A UART: device path, baud rate (bits/s), RTS/CTS hardware flow control.
        case serial(path: String, baudRate: Int, rtsCts: Bool)
        /// The Linux HCI user channel of adapter `hciN`.
        case hciSocket(index: UInt16)
        /// An in-process controller on the named virtual link (nil = the default link).
        case virtual(name: String?)
        /// A scheme added from outside with ``TransportRegistry``, and the part after its colon.
        case registered(scheme: String, argument: String?)
    }

    /// Default UART speed (Bumble's and Zephyr `hci_uart`'s), bits/s.
    public static let defaultBaudRate = 1_000_000

    /// Every syntax accepted, for help texts and errors (with the registered schemes' ones,
    /// see ``TransportRegistry``).
    public static var syntaxSummary: String {
        let added = TransportRegistry.syntaxes.map { ", " + $0 }.joined()
        return "tcp-client:HOST:PORT, tcp-server:HOST:PORT (HOST _ = this computer only, 0.0.0.0 = every interface), serial:DEVICE[,BAUD][,rtscts], "
            + "hci-socket:N, virtual[:NAME]\(added); any of them optionally followed by +snoop:FILE"
    }

    /// Where the packets go.
    public var kind: Kind
    /// btsnoop file that records every packet both ways, if any.
    public var snoopPath: String?

    /// A spec for `kind`, recorded to `snoopPath` when given.
    public init(_ kind: Kind, snoopPath: String? = nil) {
        self.kind = kind
        self.snoopPath = snoopPath
    }

    /// Parses a spec string; throws ``TransportSpecError`` saying what was wrong, with an example.
    public init(parsing text: String) throws(TransportSpecError) {
        var main = Substring(text)
        var snoop: String?
        if let range = text.firstRange(of: "+snoop:") {
            main = text[..<range.lowerBound]
            let path = String(text[range.upperBound...])
            guard !path.isEmpty else {
                throw TransportSpecError(spec: text, problem: "+snoop: needs a file name", example: "tcp-client:127.0.0.1:9000+snoop:capture.btsnoop")
            }
            snoop = path
        } else if text.contains("+") && !text.hasPrefix("serial:") {
            throw TransportSpecError(spec: text, problem: "the only option after + is snoop:FILE", example: "virtual+snoop:capture.btsnoop")
        }
        let scheme: Substring
        let argument: Substring?
        if let colon = main.firstIndex(of: ":") {
            scheme = main[..<colon]
            argument = main[main.index(after: colon)...]
        } else {
            scheme = main
            argument = nil
        }
        switch scheme {
        case "tcp-client":
            let (host, port) = try Self.hostAndPort(argument, spec: text, scheme: "tcp-client", allowAny: false)
            guard let host else {
                throw TransportSpecError(spec: text, problem: "tcp-client needs a host to connect to, not _", example: "tcp-client:127.0.0.1:9000")
            }
            kind = .tcpClient(host: host, port: port)
        case "tcp-server":
            let (host, port) = try Self.hostAndPort(argument, spec: text, scheme: "tcp-server", allowAny: true)
            kind = .tcpServer(host: host, port: port)
        case "serial":
            kind = try Self.serial(argument, spec: text)
        case "hci-socket":
            guard let argument, !argument.isEmpty else {
                kind = .hciSocket(index: 0)
                break
            }
            guard let index = UInt16(argument), index < 0xFFFF else {
                throw TransportSpecError(spec: text, problem: "hci-socket needs the adapter number N of hciN (0-65534), found \"\(argument)\"", example: "hci-socket:0")
            }
            kind = .hciSocket(index: index)
        case "virtual":
            if let argument, argument.isEmpty {
                throw TransportSpecError(spec: text, problem: "virtual: needs a link name after the colon (or write just virtual)", example: "virtual:lab")
            }
            kind = .virtual(name: argument.map(String.init))
        case "":
            throw TransportSpecError(spec: text, problem: "empty transport name", example: "tcp-client:127.0.0.1:9000")
        default:
            if let registered = TransportRegistry.scheme(named: String(scheme)) {
                do {
                    try registered.validate(argument: argument.map(String.init))
                } catch {
                    throw TransportSpecError(spec: text, problem: "\(error)", example: registered.syntax)
                }
                kind = .registered(scheme: String(scheme), argument: argument.map(String.init))
                break
            }
            throw TransportSpecError(
                spec: text, problem: "unknown transport \"\(scheme)\"; expected one of \(Self.syntaxSummary)",
                example: "tcp-client:127.0.0.1:9000")
        }
        snoopPath = snoop
    }

    /// The spec in its string form (parses back to an equal value).
    public var description: String {
        var text: String
        switch kind {
        case let .tcpClient(host, port): text = "tcp-client:\(Self.bracketed(host)):\(port)"
        case let .tcpServer(host, port): text = "tcp-server:\(host.map(Self.bracketed) ?? "_"):\(port)"
        case let .serial(path, baudRate, rtsCts): text = "serial:\(path),\(baudRate)" + (rtsCts ? ",rtscts" : "")
        case let .hciSocket(index): text = "hci-socket:\(index)"
        case let .virtual(name): text = "virtual" + (name.map { ":" + $0 } ?? "")
        case let .registered(scheme, argument): text = scheme + (argument.map { ":" + $0 } ?? "")
        }
        if let snoopPath { text += "+snoop:" + snoopPath }
        return text
    }

    private static func bracketed(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }

    /// `HOST:PORT`, HOST may be `[v6::addr]`; `_` (when allowed) gives nil.
    private static func hostAndPort(
        _ argument: Substring?, spec: String, scheme: String, allowAny: Bool
    ) throws(TransportSpecError) -> (String?, Int) {
        let example = allowAny ? "\(scheme):_:9000" : "\(scheme):127.0.0.1:9000"
        guard let argument, let colon = argument.lastIndex(of: ":") else {
            throw TransportSpecError(spec: spec, problem: "\(scheme) needs HOST:PORT", example: example)
        }
        var host = argument[..<colon]
        let portText = argument[argument.index(after: colon)...]
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count >= 2 {
            host = host.dropFirst().dropLast()
        }
        guard !host.isEmpty else {
            throw TransportSpecError(spec: spec, problem: "\(scheme) needs a host before the port" + (allowAny ? " (_ for this computer only, 0.0.0.0 for every interface)" : ""), example: example)
        }
        let lowest = allowAny ? 0 : 1
        guard let port = Int(portText), port >= lowest, port <= 65535 else {
            throw TransportSpecError(spec: spec, problem: "\(scheme) port must be a number from \(lowest) to 65535, found \"\(portText)\"", example: example)
        }
        if host == "_" {
            guard allowAny else {
                throw TransportSpecError(spec: spec, problem: "\(scheme) needs a host to connect to, not _", example: example)
            }
            return (nil, port)
        }
        return (String(host), port)
    }

    /// `DEVICE[,BAUD][,rtscts]`.
    private static func serial(_ argument: Substring?, spec: String) throws(TransportSpecError) -> Kind {
        let example = "serial:/dev/ttyACM0,1000000,rtscts"
        guard let argument else {
            throw TransportSpecError(spec: spec, problem: "serial needs a device path", example: example)
        }
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false)
        guard let path = parts.first, !path.isEmpty else {
            throw TransportSpecError(spec: spec, problem: "serial needs a device path", example: example)
        }
        var baud = defaultBaudRate
        var rtsCts = false
        var sawBaud = false
        for option in parts.dropFirst() {
            if option == "rtscts" {
                rtsCts = true
            } else if let value = Int(option), !sawBaud {
                guard SerialBaudRate.supported.contains(value) else {
                    throw TransportSpecError(
                        spec: spec,
                        problem: "unsupported baud rate \(value); supported: \(SerialBaudRate.supported.map(String.init).joined(separator: ", "))",
                        example: example)
                }
                baud = value
                sawBaud = true
            } else {
                throw TransportSpecError(spec: spec, problem: "unknown serial option \"\(option)\" (expected a baud rate or rtscts)", example: example)
            }
        }
        return .serial(path: String(path), baudRate: baud, rtsCts: rtsCts)
    }
}

/// A transport spec that could not be parsed: the spec, what was wrong, and a correct example.
public struct TransportSpecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text as given.
    public let spec: String
    /// What was wrong with it.
    public let problem: String
    /// A valid spec of the intended kind.
    public let example: String
    public var description: String {
        "bad transport \"\(spec)\": \(problem) (example: \(example))"
    }
}

/// UART speeds the serial transport can set (bits/s), the standard termios rates up to 3 Mbaud.
public enum SerialBaudRate {
    /// The accepted rates, ascending.
    public static let supported: [Int] = [
        9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 500_000, 576_000, 921_600,
        1_000_000, 1_152_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000,
    ]
}
