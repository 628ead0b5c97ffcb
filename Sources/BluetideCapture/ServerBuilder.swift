import BluetideBase
import BluetideHost

/// What the capture showed of one GATT server, gathered during the pass and turned into a
/// ``ClonedDevice`` at the end (when every discovery response and every use of a handle is known).
struct ServerBuilder {
    let key: String
    var address: BluetoothAddress?
    let side: String
    var roles: [String] = []
    var connections: [Int] = []
    var pdus = 0
    var mtu: Int?

    struct Service { let uuid: BluetoothUUID; let end: UInt16; let primary: Bool }
    struct Declaration { let handle: UInt16; let properties: UInt8; let uuid: BluetoothUUID }

    /// Services by declaration handle.
    var services: [UInt16: Service] = [:]
    /// Characteristic declarations by value handle.
    var declarations: [UInt16: Declaration] = [:]
    /// Attribute types learned from Find Information and Read By Type.
    var types: [UInt16: BluetoothUUID] = [:]
    /// Last value read or written per handle.
    var values: [UInt16: [UInt8]] = [:]
    var counts: [UInt16: CloneCounts] = [:]
    /// Client configuration writes (CCCD handle → last value).
    var configurations: [UInt16: [UInt8]] = [:]
    var firstSubscription: Double?
    /// When each CCCD was first turned on.
    var subscriptionTimes: [UInt16: Double] = [:]
    /// Every handle the client or server touched.
    var used: Set<UInt16> = []
    var timeline: [TimelineEvent] = []

    enum TimelineEvent {
        case write(t: Double, connection: Int, handle: UInt16, value: [UInt8], withResponse: Bool)
        case notify(t: Double, connection: Int, handle: UInt16, value: [UInt8], indication: Bool)
    }

    init(key: String, address: BluetoothAddress?, side: String) {
        self.key = key
        self.address = address
        self.side = side
    }

    mutating func noteConnection(_ number: Int, role: String?) {
        if !connections.contains(number) { connections.append(number) }
        if let role, !roles.contains(role) { roles.append(role) }
    }

    /// Whether a write of `value` to `handle` configures notifications (a CCCD): the handle is a
    /// known CCCD, or an unknown non-value handle written with 0000/0100/0200/0300.
    func isConfiguration(_ handle: UInt16, _ value: [UInt8]) -> Bool {
        if types[handle] == .clientCharacteristicConfiguration { return true }
        if declarations[handle] != nil || types[handle] != nil { return false }
        return value.count == 2 && value[1] == 0 && value[0] <= 3
    }

    /// Placeholder UUID for a characteristic (or service) known by its handle only:
    /// `B1DE0000-0000-4000-8000-00000000HHHH` (service: `…-8001-…`).
    static func placeholder(handle: UInt16, service: Bool = false) -> BluetoothUUID {
        BluetoothUUID(high: 0xB1DE_0000_0000_4000, low: (service ? 0x8001_0000_0000_0000 : 0x8000_0000_0000_0000) | UInt64(handle))
    }

    static func propertyNames(_ raw: UInt8) -> [String] {
        let names: [(UInt8, String)] = [
            (0x01, "broadcast"), (0x02, "read"), (0x04, "write-without-response"), (0x08, "write"), (0x10, "notify"),
            (0x20, "indicate"), (0x40, "signed-write"), (0x80, "extended-properties"),
        ]
        return names.filter { raw & $0.0 != 0 }.map(\.1)
    }

    /// The device, and notes on what was inferred.
    func build(advertising seen: CaptureAnalyzer.SeenAdvertising?, localAddress: BluetoothAddress?, replyWindow: Double) -> (ClonedDevice, [String]) {
        var notes: [String] = []
        let label = side == "local" ? (localAddress?.string ?? "local") : (address?.string ?? String(key.dropFirst("remote ".count)))

        // Characteristics: declared ones, then handles used that no declaration explains.
        struct Draft {
            var uuid: BluetoothUUID
            var declaration: UInt16?
            var valueHandle: UInt16
            var properties: UInt8
            var inferred: Bool
        }
        var drafts: [UInt16: Draft] = [:]
        for (valueHandle, declaration) in declarations {
            drafts[valueHandle] = Draft(uuid: declaration.uuid, declaration: declaration.handle, valueHandle: valueHandle,
                                        properties: declaration.properties, inferred: false)
        }
        let serviceStarts = Set(services.keys)
        let declarationHandles = Set(declarations.values.map(\.handle))
        // CCCDs written: the value handle is the one before (the usual layout) unless discovery says otherwise.
        var cccdOwner: [UInt16: UInt16] = [:]
        for handle in configurations.keys {
            let owner = drafts.keys.filter { $0 < handle }.max()
            if let owner, types[handle] == .clientCharacteristicConfiguration || handle == owner &+ 1 {
                cccdOwner[handle] = owner
            } else if handle > 1 {
                cccdOwner[handle] = handle - 1
            }
        }
        var inferredHandles: [UInt16] = []
        let cccdTargets = Set(cccdOwner.values)
        for handle in used.union(cccdTargets).sorted() where drafts[handle] == nil && configurations[handle] == nil {
            if serviceStarts.contains(handle) || declarationHandles.contains(handle) { continue }
            if let type = types[handle], Self.isDescriptorType(type) { continue }
            // A descriptor of a declared characteristic (between its value and the next declaration).
            if let owner = drafts.values.filter({ !$0.inferred && $0.valueHandle < handle }).max(by: { $0.valueHandle < $1.valueHandle }),
               !Self.hasBoundary(after: owner.valueHandle, before: handle, declarations: declarationHandles, services: serviceStarts),
               types[handle] != nil, counts[handle]?.notifications ?? 0 == 0 {
                continue
            }
            var properties: UInt8 = 0
            let c = counts[handle] ?? CloneCounts()
            if c.reads > 0 { properties |= 0x02 }
            if c.writesWithoutResponse > 0 { properties |= 0x04 }
            if c.writes > 0 { properties |= 0x08 }
            if c.notifications > 0 { properties |= 0x10 }
            if c.indications > 0 { properties |= 0x20 }
            for (cccd, owner) in cccdOwner where owner == handle {
                let value = configurations[cccd] ?? []
                properties |= (value.first ?? 0) & 0x02 != 0 ? 0x20 : 0x10
            }
            if properties == 0 { properties = 0x02 }
            drafts[handle] = Draft(uuid: types[handle] ?? Self.placeholder(handle: handle), declaration: nil, valueHandle: handle,
                                   properties: properties, inferred: true)
            inferredHandles.append(handle)
        }
        if !inferredHandles.isEmpty {
            notes.append("\(label): \(inferredHandles.count) characteristic(s) inferred from handles used without discovery (\(inferredHandles.map { "0x" + String($0, radix: 16) }.joined(separator: ", "))); their properties come from the operations seen")
        }

        // Services: discovered ranges, plus one inferred service for characteristics outside them.
        var serviceList = services.sorted { $0.key < $1.key }.map { (start: $0.key, service: $0.value, inferred: false) }
        let orphaned = drafts.values.filter { draft in
            !serviceList.contains { draft.valueHandle > $0.start && draft.valueHandle <= $0.service.end }
        }.map(\.valueHandle).sorted()
        if let first = orphaned.first, let last = orphaned.last {
            let start = first > 1 ? first - 1 : first
            let end = last < 0xFFFF ? last + 1 : last
            serviceList.append((start: start, service: Service(uuid: Self.placeholder(handle: start, service: true), end: end, primary: true), inferred: true))
            serviceList.sort { $0.start < $1.start }
            notes.append("\(label): characteristics at \(orphaned.map { "0x" + String($0, radix: 16) }.joined(separator: ", ")) lie outside every discovered service; they are put in an inferred service")
        }

        var builtServices: [CloneService] = []
        for (start, service, inferred) in serviceList {
            let members = drafts.values.filter { $0.valueHandle > start && $0.valueHandle <= service.end }
                .sorted { $0.valueHandle < $1.valueHandle }
            var characteristics: [CloneCharacteristic] = []
            for (index, draft) in members.enumerated() {
                let next = index + 1 < members.count ? (members[index + 1].declaration ?? members[index + 1].valueHandle) : service.end &+ 1
                var descriptors: [CloneDescriptor] = []
                var handle = draft.valueHandle &+ 1
                while handle < next && handle > draft.valueHandle {
                    let implied: BluetoothUUID? = cccdOwner[handle] == draft.valueHandle ? BluetoothUUID.clientCharacteristicConfiguration : nil
                    if let type = types[handle] ?? implied {
                        let value = configurations[handle] ?? values[handle]
                        descriptors.append(CloneDescriptor(handle: Int(handle), uuid: type, name: type.name, value: value?.hexString))
                    }
                    handle &+= 1
                }
                characteristics.append(CloneCharacteristic(
                    uuid: draft.uuid, name: draft.uuid.name, declarationHandle: draft.declaration.map { Int($0) },
                    valueHandle: Int(draft.valueHandle), properties: Self.propertyNames(draft.properties), inferred: draft.inferred,
                    value: values[draft.valueHandle]?.hexString, descriptors: descriptors,
                    counts: counts[draft.valueHandle] ?? CloneCounts()))
            }
            builtServices.append(CloneService(
                uuid: service.uuid, name: service.uuid.name, startHandle: Int(start), endHandle: Int(service.end),
                primary: service.primary, inferred: inferred, characteristics: characteristics))
        }

        let (exchanges, timed) = pairReplies(replyWindow: replyWindow)

        var name: String?
        if let nameHandle = drafts.values.first(where: { $0.uuid == .deviceName })?.valueHandle, let bytes = values[nameHandle] {
            name = String(decoding: bytes, as: UTF8.self)
        }
        var advertising: CloneAdvertising?
        if let seen, seen.data != nil || seen.scanResponse != nil {
            let data = AdvertisingData(lenient: seen.data ?? [])
            let merged = data.merged(withScanResponse: AdvertisingData(lenient: seen.scanResponse ?? []))
            advertising = CloneAdvertising(
                data: (seen.data ?? []).hexString, scanResponse: seen.scanResponse?.hexString, localName: merged.localName,
                serviceUUIDs: merged.serviceUUIDs, extended: seen.extended)
            if name == nil { name = merged.localName }
        }
        let role = roles.count == 1 ? roles[0] : roles.isEmpty ? "unknown" : roles.joined(separator: "/")
        let device = ClonedDevice(
            address: label, addressType: (side == "local" ? localAddress : address).map { $0.type == .random ? "random" : "public" },
            name: name, side: side, role: role, advertising: advertising, connections: connections, mtu: mtu,
            services: builtServices, exchanges: exchanges, notifications: timed,
            playbackOrigin: Self.origin(timed: timed, subscriptions: subscriptionTimes, owners: cccdOwner) ?? firstSubscription ?? timed.first?.t)
        return (device, notes)
    }

    /// When the first subscription to a characteristic with timed notifications was made.
    private static func origin(timed: [CloneNotification], subscriptions: [UInt16: Double], owners: [UInt16: UInt16]) -> Double? {
        let handles = Set(timed.map(\.handle))
        return subscriptions.filter { owners[$0.key].map { handles.contains(Int($0)) } ?? false }.values.min()
    }

    private static func isDescriptorType(_ type: BluetoothUUID) -> Bool {
        guard let short = type.uuid16 else { return false }
        return (0x2900...0x29FF).contains(short) || (0x2800...0x2803).contains(short)
    }

    private static func hasBoundary(after value: UInt16, before handle: UInt16, declarations: Set<UInt16>, services: Set<UInt16>) -> Bool {
        guard handle > value &+ 1 else { return false }
        return ((value &+ 1)..<handle).contains { declarations.contains($0) || services.contains($0) }
    }

    /// Splits notifications into answers to writes and timed ones.
    ///
    /// A characteristic notified at least twice on a connection before that connection's first
    /// write is a stream (a measurement): its notifications stay timed. Of the others, a
    /// notification answers the write before it on its connection when it comes before the
    /// next write and within `replyWindow` seconds of the write or of the previous answer; a
    /// characteristic is a reply channel when at least half its notifications answer writes,
    /// and its answering notifications become the write's replies.
    func pairReplies(replyWindow: Double) -> ([CloneExchange], [CloneNotification]) {
        // Streams: notified twice or more before the first write of their connection.
        var wrote: Set<Int> = []
        var early: [Int: Int] = [:]
        for event in timeline {
            switch event {
            case let .write(_, connection, _, _, _): wrote.insert(connection)
            case let .notify(_, connection, handle, _, _):
                if !wrote.contains(connection) { early[Int(handle), default: 0] += 1 }
            }
        }
        let streams = Set(early.filter { $0.value >= 2 }.keys)

        struct Open { var index: Int; var last: Double }
        var exchanges: [CloneExchange] = []
        var candidates: [(exchange: Int, notification: CloneNotification, t: Double)] = []
        var timed: [CloneNotification] = []
        var open: [Int: Open] = [:]  // by connection
        var total: [Int: Int] = [:]
        var answering: [Int: Int] = [:]
        for event in timeline {
            switch event {
            case let .write(t, connection, handle, value, withResponse):
                exchanges.append(CloneExchange(t: t, connection: connection, handle: Int(handle), value: value.hexString, withResponse: withResponse, replies: []))
                open[connection] = Open(index: exchanges.count - 1, last: t)
            case let .notify(t, connection, handle, value, indication):
                let notification = CloneNotification(t: t, connection: connection, handle: Int(handle), value: value.hexString, indication: indication)
                if streams.contains(Int(handle)) {
                    timed.append(notification)
                    continue
                }
                total[Int(handle), default: 0] += 1
                if var current = open[connection], t - current.last <= replyWindow {
                    current.last = t
                    open[connection] = current
                    candidates.append((current.index, notification, t))
                    answering[Int(handle), default: 0] += 1
                } else {
                    open[connection] = nil
                    timed.append(notification)
                }
            }
        }
        for candidate in candidates {
            let handle = candidate.notification.handle
            if 2 * answering[handle, default: 0] >= total[handle, default: 0] {
                let write = exchanges[candidate.exchange]
                exchanges[candidate.exchange].replies.append(CloneReply(
                    delay: max(0, candidate.t - write.t), handle: handle, value: candidate.notification.value,
                    indication: candidate.notification.indication))
            } else {
                timed.append(candidate.notification)
            }
        }
        timed.sort { $0.t < $1.t }
        return (exchanges, timed)
    }
}
