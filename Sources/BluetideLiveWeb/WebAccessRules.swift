import Foundation

/// The access rules the pages that act share (the ride page's controls, the coach's dashboard):
/// which `Host` a request may name (the guard against DNS rebinding), the random tokens they
/// hand out and how a token sent back is compared. No I/O.
public enum WebAccessRules {
    /// Whether a request naming `host` (its `Host` header or HTTP/2 authority; a port is
    /// ignored) may be answered: an IPv4 address, an IPv6 one in brackets, `localhost` or a name
    /// under it, or one of `names` (lower case, without a trailing dot). A page of another site
    /// whose name was made to point at this computer names its own host and is refused. Without
    /// a `Host` (browsers always send one) it may.
    public static func allowsHost(_ host: String?, names: Set<String> = []) -> Bool {
        guard var name = host?.trimmingCharacters(in: .whitespaces) else { return true }
        if name.hasPrefix("[") {
            // [v6] or [v6]:port
            guard let close = name.firstIndex(of: "]") else { return false }
            let rest = name[name.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return false }
            return name[name.index(after: name.startIndex)..<close].allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        if let colon = name.lastIndex(of: ":") {
            guard name[name.index(after: colon)...].allSatisfy(\.isNumber) else { return false }
            name = String(name[..<colon])
        }
        name = normalised(name)
        if name.isEmpty { return false }
        if isIPv4(name) { return true }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        return names.contains(name)
    }

    /// A host name as compared: lower case, without trailing dots.
    public static func normalised(_ name: String) -> String {
        var name = name.lowercased()
        while name.hasSuffix(".") { name.removeLast() }
        return name
    }

    /// Whether `text` is a dotted IPv4 address (four parts of 0…255).
    public static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isNumber) && (Int(part) ?? 256) <= 255
        }
    }

    /// A fresh random token: 32 bytes from the system's generator, as 64 lower-case hex digits.
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        for _ in 0..<32 {
            let byte = UInt8.random(in: 0...255, using: &generator)
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `sent` equals `expected`, compared in time that does not depend on where they differ.
    public static func tokenMatches(_ sent: String?, _ expected: String) -> Bool {
        guard let sent else { return false }
        let a = Array(sent.utf8), b = Array(expected.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
