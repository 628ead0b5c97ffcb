import Synchronization

/// A kind of transport that code outside this module adds: a USB dongle driver, another
/// operating system's stack, a test double. Registered once with ``TransportRegistry``, it is
/// then opened by spec like the built-in ones (`NAME` or `NAME:ARGUMENT`, optionally
/// `+snoop:FILE`) everywhere a transport spec is taken: `Bluetooth.open(transport:)`, the
/// commands' `--transport`.
///
/// ```swift
/// struct LoopbackScheme: TransportScheme {
///     let name = "loop"
///     let syntax = "loop:NAME"
///     func open(argument: String?) async throws -> any HCITransport { … }
/// }
/// try TransportRegistry.register(LoopbackScheme())
/// let bluetooth = try await Bluetooth.open(transport: "loop:bench")
/// ```
public protocol TransportScheme: Sendable {
    /// The spec's scheme, before the first colon: lowercase letters, digits and `-`.
    var name: String { get }
    /// How a spec of this scheme is written, for help texts and errors (e.g. `usb:VID:PID`).
    var syntax: String { get }
    /// Checks the part after the colon (nil when the spec has none) when the spec is parsed, so
    /// a bad argument fails before anything opens; throw a message saying what was expected.
    /// The default accepts anything.
    func validate(argument: String?) throws
    /// Opens the transport: returns once packets can flow (the controller itself is reset and
    /// started by the host). Throw ``TransportError/openFailed(_:)`` saying what to try.
    func open(argument: String?) async throws -> any HCITransport
}

extension TransportScheme {
    /// The default: every argument is accepted.
    public func validate(argument: String?) throws {}
}

/// The transport schemes added from outside (see ``TransportScheme``): one registry per process.
public enum TransportRegistry {
    /// The schemes built into ``TransportSpec``; a registered scheme cannot take these names.
    public static let builtInNames: Set<String> = ["tcp-client", "tcp-server", "serial", "hci-socket", "virtual"]

    private static let schemes = Mutex<[String: any TransportScheme]>([:])

    /// Adds `scheme`. Throws ``TransportRegistryError`` when its name is malformed, is a
    /// built-in one, or is registered already (register once, at start-up).
    public static func register(_ scheme: any TransportScheme) throws(TransportRegistryError) {
        let name = scheme.name
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) else {
            throw .badName(name)
        }
        guard !builtInNames.contains(name) else { throw .builtIn(name) }
        try schemes.withLock { (schemes: inout [String: any TransportScheme]) throws(TransportRegistryError) in
            guard schemes[name] == nil else { throw .alreadyRegistered(name) }
            schemes[name] = scheme
        }
    }

    /// Removes the scheme called `name` (tests; a process normally keeps its schemes); false
    /// when there was none.
    @discardableResult
    public static func unregister(_ name: String) -> Bool {
        schemes.withLock { $0.removeValue(forKey: name) != nil }
    }

    /// The scheme called `name`, if registered.
    public static func scheme(named name: String) -> (any TransportScheme)? {
        schemes.withLock { $0[name] }
    }

    /// The registered schemes' syntaxes, by name.
    public static var syntaxes: [String] {
        schemes.withLock { $0.values.map(\.syntax).sorted() }
    }
}

/// Why ``TransportRegistry/register(_:)`` refused a scheme.
public enum TransportRegistryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name is empty or has characters other than lowercase letters, digits and `-`.
    case badName(String)
    /// The name is one of the built-in schemes.
    case builtIn(String)
    /// A scheme of this name is registered already.
    case alreadyRegistered(String)

    public var description: String {
        switch self {
        case let .badName(name): "transport scheme name \"\(name)\": expected lowercase letters, digits and -"
        case let .builtIn(name): "transport scheme \"\(name)\" is built in; choose another name"
        case let .alreadyRegistered(name): "transport scheme \"\(name)\" is registered already"
        }
    }
}
