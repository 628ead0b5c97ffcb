import BluetideTransport

/// The parts of a transport spec that names the in-process virtual radio (`virtual`,
/// `virtual:NAME`, either with `+snoop:FILE`): what an app that starts emulated devices beside
/// its own host needs to know of a spec it was given.
public struct VirtualLinkSpec: Sendable, Equatable {
    /// The named link (`virtual:NAME`); nil for a plain `virtual`, a fresh private link.
    public var linkName: String?
    /// The btsnoop file the spec asks for, when it does.
    public var snoopPath: String?

    /// The virtual link `spec` names; nil when `spec` names another kind of transport
    /// (`tcp-client:…`, `hci-socket:0`, a registered scheme).
    /// - Throws: the spec parser's error (what was expected, what came) when `spec` does not parse.
    public static func parse(_ spec: String) throws -> VirtualLinkSpec? {
        let parsed = try TransportSpec(parsing: spec)
        guard case let .virtual(name) = parsed.kind else { return nil }
        return VirtualLinkSpec(linkName: name, snoopPath: parsed.snoopPath)
    }

    /// Whether `spec` names the in-process virtual radio (where emulated devices can live):
    /// false for another transport and for a spec that does not parse (its user hears of that
    /// when the transport opens).
    public static func namesVirtualRadio(_ spec: String) -> Bool {
        ((try? parse(spec)) ?? nil) != nil
    }
}
