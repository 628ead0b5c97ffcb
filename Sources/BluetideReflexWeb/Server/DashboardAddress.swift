import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `--host` that would serve the dashboard to the network without `--lan` (and so without
/// the coach's password): which field, what was expected, what came.
public struct DashboardHostError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The option, `--host`.
    public let field = "--host"
    /// What came.
    public var given: String
    /// What was expected.
    public let expected = "a loopback address (127.x, localhost, ::1), or --lan"

    public init(given: String) { self.given = given }

    public var description: String {
        "--host \(given) would open the dashboard to the network: add --lan, which asks every phone for the coach's password"
    }
}

/// Where the coach's dashboard listens, which host names it answers to, and the addresses to
/// type in a browser (for `serve`).
public enum DashboardAddress {
    /// The address to listen on: `given`, or 127.0.0.1 (this computer only), or with `lan` 0.0.0.0.
    /// - Throws: ``DashboardHostError`` for an address other than loopback without `lan`.
    public static func listenHost(given: String?, lan: Bool) throws(DashboardHostError) -> String {
        let host = given ?? (lan ? "0.0.0.0" : "127.0.0.1")
        if !isLoopback(host), !lan { throw DashboardHostError(given: host) }
        return host
    }

    /// True for the addresses only this computer reaches: 127.x, localhost, ::1.
    public static func isLoopback(_ host: String) -> Bool {
        host == "127.0.0.1" || host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The host names the dashboard answers to besides its IP addresses and localhost (against
    /// DNS rebinding): `host` when it is a name, and with `lan` `machineName` (this computer's
    /// name by default) and that name under `.local`, as phones type it.
    public static func hostNames(host: String, lan: Bool, machineName: String? = DashboardAddress.machineName()) -> Set<String> {
        var names: Set<String> = []
        if host.contains(where: \.isLetter), !host.contains(":") { names.insert(host.lowercased()) }
        if lan, let name = machineName?.lowercased(), !name.isEmpty {
            names.insert(name)
            if let short = name.split(separator: ".").first { names.insert("\(short).local") }
        }
        return names
    }

    /// This computer's host name (`gethostname`), nil when it has none.
    public static func machineName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return nil }
        return String(cString: buffer)
    }

    /// The addresses to type in a browser: the host itself, or for 0.0.0.0 (and ::) localhost,
    /// then every IPv4 address in `interfaces` (this machine's by default) marked for phones.
    public static func urls(host: String, port: Int, interfaces: @autoclosure () -> [String] = DashboardAddress.interfaceAddresses()) -> [String] {
        guard host == "0.0.0.0" || host == "::" else { return ["http://\(host.contains(":") ? "[\(host)]" : host):\(port)"] }
        return ["http://localhost:\(port)"] + interfaces().map { "http://\($0):\(port)   (from a phone on the same network)" }
    }

    /// The IPv4 addresses of the machine's interfaces, loopback left out, each once.
    public static func interfaceAddresses() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0, let start = first else { return [] }
        defer { freeifaddrs(first) }
        var found: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = start
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                var raw = ipv4.pointee.sin_addr
                _ = inet_ntop(AF_INET, &raw, &text, socklen_t(INET_ADDRSTRLEN))
            }
            let string = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !string.hasPrefix("127."), !string.isEmpty, !found.contains(string) { found.append(string) }
        }
        return found
    }
}
