/// A D-Bus message as Bluetide sees it: header fields and the body's values.
public struct DBusMessage: Sendable, Equatable {
    /// The message's type.
    public enum Kind: Int32, Sendable {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    public var kind: Kind
    public var path: String?
    public var interface: String?
    public var member: String?
    /// The unique name of the sender (`:1.42`); the bus fills it in.
    public var sender: String?
    public var destination: String?
    /// The error's name, for ``Kind/error``.
    public var errorName: String?
    /// The values of the body, in order.
    public var body: [DBusValue]

    public init(
        kind: Kind, path: String? = nil, interface: String? = nil, member: String? = nil, sender: String? = nil,
        destination: String? = nil, errorName: String? = nil, body: [DBusValue] = []
    ) {
        self.kind = kind
        self.path = path
        self.interface = interface
        self.member = member
        self.sender = sender
        self.destination = destination
        self.errorName = errorName
        self.body = body
    }
}

/// Which signals a subscription receives (a D-Bus match rule). Unset fields match anything.
///
/// The bus delivers only what a rule matches; the client filters again locally by interface,
/// member, path, path namespace and `arg0`, so two subscriptions on one connection each get
/// their own signals (the sender is checked by the bus only: it names a well-known name,
/// while messages carry the unique one).
public struct DBusMatchRule: Sendable, Hashable {
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: String?
    /// The path itself and every path below it.
    public var pathNamespace: String?
    /// The first argument, a string (e.g. the interface name of `PropertiesChanged`).
    public var arg0: String?

    public init(
        sender: String? = nil, interface: String? = nil, member: String? = nil, path: String? = nil,
        pathNamespace: String? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    /// `PropertiesChanged` of `interface` on objects at or below `pathNamespace`, from `sender`.
    public static func propertiesChanged(sender: String? = nil, interface: String? = nil, pathNamespace: String? = nil) -> DBusMatchRule {
        DBusMatchRule(
            sender: sender, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            pathNamespace: pathNamespace, arg0: interface)
    }

    /// The rule in the bus's syntax (`type='signal',interface='…'`); throws when a field holds
    /// something a rule cannot carry.
    func text() throws(DBusError) -> String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?, valid: (String) -> Bool) throws(DBusError) {
            guard let value else { return }
            guard valid(value), !value.contains("'"), !value.contains("\\") else {
                throw DBusError("match rule \(key)='\(value)' is not a valid \(key)")
            }
            parts.append("\(key)='\(value)'")
        }
        try add("sender", sender, valid: DBusNames.isDottedName)
        try add("interface", interface, valid: DBusNames.isDottedName)
        try add("member", member, valid: DBusNames.isMember)
        try add("path", path, valid: DBusNames.isObjectPath)
        try add("path_namespace", pathNamespace, valid: DBusNames.isObjectPath)
        try add("arg0", arg0, valid: { _ in true })
        return parts.joined(separator: ",")
    }

    /// Whether `message` (a signal) passes the rule's local checks.
    func matches(_ message: DBusMessage) -> Bool {
        guard message.kind == .signal else { return false }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace, let messagePath = message.path {
            let prefix = pathNamespace == "/" ? "/" : pathNamespace + "/"
            if messagePath != pathNamespace && !messagePath.hasPrefix(prefix) { return false }
        } else if pathNamespace != nil {
            return false
        }
        if let arg0 {
            guard case let .string(first)? = message.body.first, first == arg0 else { return false }
        }
        return true
    }
}

// MARK: Marshalling through libdbus

extension DBusLibrary {
    /// Reads a received message's header and body.
    func decode(_ message: Message) -> DBusMessage {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        var result = DBusMessage(
            kind: DBusMessage.Kind(rawValue: messageGetType(message)) ?? .signal,
            path: text(messageGetPath(message)), interface: text(messageGetInterface(message)),
            member: text(messageGetMember(message)), sender: text(messageGetSender(message)),
            destination: text(messageGetDestination(message)), errorName: text(messageGetErrorName(message)))
        withIter { iter in
            guard iterInit(message, iter) != 0 else { return }
            result.body = readAll(iter)
        }
        return result
    }

    private func withIter<T>(_ body: (Buffer) throws -> T) rethrows -> T {
        let iter = UnsafeMutableRawPointer.allocate(byteCount: Self.iterSize, alignment: 16)
        iter.initializeMemory(as: UInt8.self, repeating: 0, count: Self.iterSize)
        defer { iter.deallocate() }
        return try body(iter)
    }

    /// Every value from `iter` to the end of its container.
    private func readAll(_ iter: Buffer) -> [DBusValue] {
        var values: [DBusValue] = []
        while iterGetArgType(iter) != 0 {
            guard let value = read(iter) else { break }
            values.append(value)
            if iterNext(iter) == 0 { break }
        }
        return values
    }

    private func basic<T>(_ iter: Buffer, as type: T.Type) -> T {
        var storage: (UInt64, UInt64) = (0, 0)
        return withUnsafeMutableBytes(of: &storage) { raw in
            iterGetBasic(iter, raw.baseAddress)
            return raw.load(as: T.self)
        }
    }

    private func signature(of iter: Buffer) -> String {
        guard let pointer = iterGetSignature(iter) else { return "" }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// The value at `iter` (nil for a type this client does not know).
    private func read(_ iter: Buffer) -> DBusValue? {
        let type = UInt8(truncatingIfNeeded: iterGetArgType(iter))
        switch type {
        case UInt8(ascii: "y"): return .byte(basic(iter, as: UInt8.self))
        case UInt8(ascii: "b"): return .boolean(basic(iter, as: UInt32.self) != 0)
        case UInt8(ascii: "n"): return .int16(basic(iter, as: Int16.self))
        case UInt8(ascii: "q"): return .uint16(basic(iter, as: UInt16.self))
        case UInt8(ascii: "i"): return .int32(basic(iter, as: Int32.self))
        case UInt8(ascii: "u"): return .uint32(basic(iter, as: UInt32.self))
        case UInt8(ascii: "x"): return .int64(basic(iter, as: Int64.self))
        case UInt8(ascii: "t"): return .uint64(basic(iter, as: UInt64.self))
        case UInt8(ascii: "d"): return .double(basic(iter, as: Double.self))
        case UInt8(ascii: "h"): return .unixFD(basic(iter, as: Int32.self))
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            let text = basic(iter, as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? ""
            return type == UInt8(ascii: "s") ? .string(text) : type == UInt8(ascii: "o") ? .objectPath(text) : .signature(text)
        case UInt8(ascii: "v"):
            return withIter { sub in
                iterRecurse(iter, sub)
                return read(sub).map(DBusValue.variant)
            }
        case UInt8(ascii: "r"):
            return withIter { sub in
                iterRecurse(iter, sub)
                return .structure(readAll(sub))
            }
        case UInt8(ascii: "a"):
            let whole = signature(of: iter)
            return withIter { sub in
                iterRecurse(iter, sub)
                if whole.hasPrefix("a{") && whole.hasSuffix("}") && whole.count >= 5 {
                    let inner = whole.dropFirst(2).dropLast()
                    let key = String(inner.prefix(1)), value = String(inner.dropFirst())
                    var entries: [DBusDictionaryEntry] = []
                    while iterGetArgType(sub) == Int32(UInt8(ascii: "e")) {
                        let pair = withIter { entry -> [DBusValue] in
                            iterRecurse(sub, entry)
                            return readAll(entry)
                        }
                        if pair.count == 2 { entries.append(DBusDictionaryEntry(key: pair[0], value: pair[1])) }
                        if iterNext(sub) == 0 { break }
                    }
                    return .dictionary(key: key, value: value, entries)
                }
                return .array(element: String(whole.dropFirst()), readAll(sub))
            }
        default:
            return nil
        }
    }

    /// Appends `values` to `message`'s body; throws (leaving the message to be discarded) when
    /// a value does not agree with its declared types or a name is invalid.
    func append(_ values: [DBusValue], to message: Message) throws(DBusError) {
        // Checked whole first: libdbus aborts the process on a value that disagrees with its
        // type, and a container left half-filled cannot be closed.
        for value in values { if let problem = value.problem { throw problem } }
        let ok = withIter { iter -> DBusError? in
            iterInitAppend(message, iter)
            for value in values {
                if let problem = append(value, to: iter) { return problem }
            }
            return nil
        }
        if let ok { throw ok }
    }

    private func appendBasic<T>(_ value: T, type: Character, to iter: Buffer) -> DBusError? {
        var value = value
        let done = withUnsafeBytes(of: &value) { iterAppendBasic(iter, Int32(type.asciiValue!), $0.baseAddress) }
        return done != 0 ? nil : DBusError("could not add a value to a D-Bus message (out of memory)")
    }

    private func appendText(_ text: String, type: Character, to iter: Buffer) -> DBusError? {
        text.withCString { pointer in appendBasic(pointer, type: type, to: iter) }
    }

    /// Appends one value; nil when it went in, else why not.
    private func append(_ value: DBusValue, to iter: Buffer) -> DBusError? {
        switch value {
        case let .byte(v): return appendBasic(v, type: "y", to: iter)
        case let .boolean(v): return appendBasic(UInt32(v ? 1 : 0), type: "b", to: iter)
        case let .int16(v): return appendBasic(v, type: "n", to: iter)
        case let .uint16(v): return appendBasic(v, type: "q", to: iter)
        case let .int32(v): return appendBasic(v, type: "i", to: iter)
        case let .uint32(v): return appendBasic(v, type: "u", to: iter)
        case let .int64(v): return appendBasic(v, type: "x", to: iter)
        case let .uint64(v): return appendBasic(v, type: "t", to: iter)
        case let .double(v): return appendBasic(v, type: "d", to: iter)
        case let .unixFD(v): return appendBasic(v, type: "h", to: iter)
        case let .string(v): return appendText(v, type: "s", to: iter)
        case let .objectPath(v): return appendText(v, type: "o", to: iter)
        case let .signature(v):
            return appendText(v, type: "g", to: iter)
        case let .array(element, items):
            guard DBusNames.isSingleType(element) else { return DBusError("array element type \"\(element)\" is not a D-Bus type") }
            if let bad = items.first(where: { $0.signature != element }) {
                return DBusError("an array of \(element) holds a value of type \(bad.signature)")
            }
            return container("a", element, to: iter) { sub in
                for item in items { if let problem = append(item, to: sub) { return problem } }
                return nil
            }
        case let .dictionary(key, valueType, entries):
            guard key.count == 1, "ybnqiuxtdsogh".contains(key), DBusNames.isSingleType(valueType) else {
                return DBusError("dictionary type {\(key)\(valueType)} is not a D-Bus dictionary type")
            }
            if let bad = entries.first(where: { $0.key.signature != key || $0.value.signature != valueType }) {
                return DBusError("a dictionary of {\(key)\(valueType)} holds an entry of {\(bad.key.signature)\(bad.value.signature)}")
            }
            return container("a", "{\(key)\(valueType)}", to: iter) { sub in
                for entry in entries {
                    let problem = container("e", nil, to: sub) { pair in
                        append(entry.key, to: pair) ?? append(entry.value, to: pair)
                    }
                    if let problem { return problem }
                }
                return nil
            }
        case let .structure(fields):
            guard !fields.isEmpty else { return DBusError("a D-Bus structure needs at least one field") }
            return container("r", nil, to: iter) { sub in
                for field in fields { if let problem = append(field, to: sub) { return problem } }
                return nil
            }
        case let .variant(inner):
            return container("v", inner.signature, to: iter) { sub in append(inner, to: sub) }
        }
    }

    private func container(_ type: Character, _ contained: String?, to iter: Buffer, _ body: (Buffer) -> DBusError?) -> DBusError? {
        withIter { sub in
            let opened: UInt32 = if let contained {
                contained.withCString { iterOpenContainer(iter, Int32(type.asciiValue!), $0, sub) }
            } else {
                iterOpenContainer(iter, Int32(type.asciiValue!), nil, sub)
            }
            guard opened != 0 else { return DBusError("could not add a value to a D-Bus message (out of memory)") }
            let problem = body(sub)
            // Closed even after a failure: libdbus wants every opened container closed.
            let closed = iterCloseContainer(iter, sub)
            return problem ?? (closed != 0 ? nil : DBusError("could not add a value to a D-Bus message (out of memory)"))
        }
    }
}

extension DBusValue {
    /// Why libdbus would refuse this value (a NUL in a string, a bad object path or signature,
    /// an element that disagrees with its array's type); nil when it is good.
    var problem: DBusError? {
        switch self {
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .unixFD: return nil
        case let .string(v):
            return v.utf8.contains(0) ? DBusError("a D-Bus string cannot hold a NUL character") : nil
        case let .objectPath(v):
            return DBusNames.isObjectPath(v) ? nil : DBusError("\"\(v)\" is not a D-Bus object path (/a/b_c: letters, digits and _)")
        case let .signature(v):
            var rest = Substring(v)
            while !rest.isEmpty {
                guard let end = (1...rest.count).first(where: { DBusNames.isSingleType(String(rest.prefix($0))) }) else {
                    return DBusError("\"\(v)\" is not a D-Bus signature")
                }
                rest = rest.dropFirst(end)
            }
            return nil
        case let .array(element, items):
            guard DBusNames.isSingleType(element) else { return DBusError("array element type \"\(element)\" is not a D-Bus type") }
            if let bad = items.first(where: { $0.signature != element }) {
                return DBusError("an array of \(element) holds a value of type \(bad.signature)")
            }
            return items.lazy.compactMap(\.problem).first
        case let .dictionary(key, value, entries):
            guard key.count == 1, "ybnqiuxtdsogh".contains(key), DBusNames.isSingleType(value) else {
                return DBusError("dictionary type {\(key)\(value)} is not a D-Bus dictionary type")
            }
            if let bad = entries.first(where: { $0.key.signature != key || $0.value.signature != value }) {
                return DBusError("a dictionary of {\(key)\(value)} holds an entry of {\(bad.key.signature)\(bad.value.signature)}")
            }
            return entries.lazy.compactMap { $0.key.problem ?? $0.value.problem }.first
        case let .structure(fields):
            guard !fields.isEmpty else { return DBusError("a D-Bus structure needs at least one field") }
            return fields.lazy.compactMap(\.problem).first
        case let .variant(inner):
            return inner.problem
        }
    }
}
