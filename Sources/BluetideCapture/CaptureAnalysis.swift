import BluetideBase
import BluetideHCI
import BluetideHost
import BluetideRecording
import BluetideTransport

/// What a capture shows, reconstructed: the device file's content, plus the value records of
/// every connection (for one value log each).
///
/// Pure: packets in, a model out (no I/O, no clock). Follows the HCI traffic the way a host
/// would: LE connection events give each link's roles and peer; ACL fragments are reassembled
/// per connection and direction into L2CAP PDUs; the ATT channel (fixed CID 4) is followed in
/// both directions, each GATT server on its own (a phone may serve GATT too). Discovery
/// responses build the database; reads, writes, notifications and indications build the
/// behaviour; handles used without discovery are inferred. Anything unreadable becomes a warning.
public struct CaptureAnalysis: Sendable {
    /// The device file's content.
    public var document: CloneDocument
    /// Value records of each connection (key: the connection number), in order; `t` counts
    /// from the connection's start.
    public var valueRecords: [Int: [ValueRecord]]

    /// Seconds within which a notification still answers a write (from the write, or from the
    /// previous answer): 2 s by default.
    public static let defaultReplyWindow = 2.0

    /// Analyses `file`; `captureName` labels the source (usually the file name).
    public static func analyze(_ file: CaptureFile, captureName: String, replyWindow: Double = defaultReplyWindow) -> CaptureAnalysis {
        var analyzer = CaptureAnalyzer(replyWindow: replyWindow)
        analyzer.warnings = file.warnings.map(\.message)
        if file.cutACLRecords > 0 {
            analyzer.warnings.insert(
                "\(file.cutACLRecords) ACL record(s) were captured cut short (a snap length; Android's filtered snoop log keeps only the start of each packet): their ATT payloads are unreadable and missing from the clone; capture again with the full snoop log", at: 0)
        }
        for packet in file.packets { analyzer.feed(packet) }
        return analyzer.finish(captureName: captureName, format: file.format.description, records: file.recordCount, packets: file.packets.count)
    }
}

/// The state of one pass over a capture (see ``CaptureAnalysis``).
struct CaptureAnalyzer {
    let replyWindow: Double
    var warnings: [String] = []
    private var firstTime: Int64?
    private var lastTime: Int64 = 0
    private var links: [LinkKey: Link] = [:]
    private var allLinks: [Link] = []
    private var reassemblers: [ReassemblerKey: ACLReassembler] = [:]
    private var servers: [String: ServerBuilder] = [:]
    private var serverOrder: [String] = []
    private var advertising: [UInt64: SeenAdvertising] = [:]
    private var localAdvertising = SeenAdvertising()
    private var localAddress: BluetoothAddress?
    private var valueEvents: [ValueEvent] = []
    /// Cap on repeated warnings of one kind, so a damaged capture does not bury the report.
    private var warningCounts: [String: Int] = [:]

    init(replyWindow: Double) { self.replyWindow = replyWindow }

    struct LinkKey: Hashable { let controller: UInt16; let handle: UInt16 }
    struct ReassemblerKey: Hashable { let controller: UInt16; let received: Bool }

    /// One LE connection as followed.
    struct Link {
        var number: Int
        var key: LinkKey
        var localRole: HCIRole?
        var peer: BluetoothAddress?
        var start: Double
        var end: Double?
        var encrypted = false
        var attPDUs = 0
        var unreadable = 0
        /// ATT with the peer as server (our requests) and with us as server (the peer's requests).
        var remoteServer = ATTFollower()
        var localServer = ATTFollower()
    }

    /// One client→server ATT conversation: the request waiting for its response, queued writes.
    struct ATTFollower {
        var pending: ATTPDU?
        var clientMTU: Int?
        var prepared: [(handle: UInt16, offset: UInt16, value: [UInt8])] = []
    }

    struct SeenAdvertising {
        var data: [UInt8]?
        var scanResponse: [UInt8]?
        var extended = false
        var partial: [UInt8] = []
    }

    /// A value that crossed ATT, resolved to a characteristic at the end.
    struct ValueEvent {
        let connection: Int
        let server: String
        let t: Double
        let handle: UInt16
        let operation: ValueOperation
        let value: [UInt8]
    }

    // MARK: Feeding

    mutating func feed(_ captured: CapturedPacket) {
        if firstTime == nil { firstTime = captured.unixMicroseconds }
        lastTime = max(lastTime, captured.unixMicroseconds)
        let t = seconds(captured.unixMicroseconds)
        switch captured.packet {
        case let .event(code, parameters):
            event(code: code, parameters: parameters, controller: captured.controller, t: t, record: captured.index)
        case let .command(opcode, parameters):
            command(opcode: opcode, parameters: parameters)
        case let .acl(handle, boundary, _, data):
            acl(handle: handle, boundary: boundary, data: data, captured: captured, t: t)
        case .sco, .iso:
            break
        }
    }

    private func seconds(_ micros: Int64) -> Double {
        Double(micros &- (firstTime ?? micros)) / 1_000_000
    }

    private mutating func warn(_ kind: String, record: Int?, _ message: String) {
        let count = warningCounts[kind, default: 0]
        warningCounts[kind] = count + 1
        if count < 20 {
            warnings.append(record.map { "record \($0): \(message)" } ?? message)
        } else if count == 20 {
            warnings.append("further warnings like \"\(kind)\" are left out")
        }
    }

    private mutating func event(code: UInt8, parameters: [UInt8], controller: UInt16, t: Double, record: Int) {
        let event: HCIEvent
        do { event = try HCIEvent(code: code, parameters: parameters) } catch {
            warn("malformed event", record: record, "\(HCIEvent.name(code: code)) event could not be decoded (\(error)); skipped")
            return
        }
        switch event {
        case let .leMeta(meta):
            switch meta {
            case let .connectionComplete(e) where e.status == .success:
                connected(LinkKey(controller: controller, handle: e.handle & 0x0FFF), role: e.role, peer: e.peerAddress, t: t)
            case let .enhancedConnectionComplete(e) where e.status == .success:
                connected(LinkKey(controller: controller, handle: e.handle & 0x0FFF), role: e.role, peer: e.peerAddress, t: t)
            case let .advertisingReport(report):
                for r in report.reports {
                    var seen = advertising[r.address.value] ?? SeenAdvertising()
                    if r.eventType == .scanResponse { seen.scanResponse = r.data } else { seen.data = r.data }
                    advertising[r.address.value] = seen
                }
            case let .extendedAdvertisingReport(report):
                for r in report.reports {
                    var seen = advertising[r.address.value] ?? SeenAdvertising()
                    seen.partial += r.data
                    // Data status 1: more fragments follow; 2: truncated (kept as is).
                    if r.eventType.dataStatus != 1 {
                        if r.eventType.contains(.scanResponse) { seen.scanResponse = seen.partial } else { seen.data = seen.partial }
                        seen.extended = seen.extended || !r.eventType.contains(.legacy)
                        seen.partial = []
                    }
                    advertising[r.address.value] = seen
                }
            default:
                break
            }
        case let .disconnectionComplete(e) where e.status == .success:
            let key = LinkKey(controller: controller, handle: e.handle & 0x0FFF)
            if var link = links.removeValue(forKey: key) {
                link.end = t
                store(link)
            }
            for received in [false, true] { reassemblers[ReassemblerKey(controller: controller, received: received)]?.disconnected(key.handle) }
        case let .encryptionChange(e) where e.status == .success:
            let key = LinkKey(controller: controller, handle: e.handle & 0x0FFF)
            if e.encryptionEnabled != 0 { links[key]?.encrypted = true }
        case let .commandComplete(e):
            // Read BD_ADDR (0x1009): the capturing controller's public address.
            if e.opcode.rawValue == 0x1009, e.returnParameters.count >= 7, e.returnParameters[0] == 0 {
                localAddress = try? BluetoothAddress(littleEndian: Array(e.returnParameters[1..<7]), type: .public)
            }
        default:
            break
        }
    }

    private mutating func command(opcode: HCIOpcode, parameters: [UInt8]) {
        switch opcode.rawValue {
        case 0x2005 where parameters.count >= 6:  // LE Set Random Address
            localAddress = try? BluetoothAddress(littleEndian: Array(parameters[0..<6]), type: .random)
        case 0x2008 where parameters.count >= 1:  // LE Set Advertising Data
            localAdvertising.data = Array(parameters.dropFirst().prefix(Int(parameters[0])))
        case 0x2009 where parameters.count >= 1:  // LE Set Scan Response Data
            localAdvertising.scanResponse = Array(parameters.dropFirst().prefix(Int(parameters[0])))
        case 0x2037 where parameters.count >= 4:  // LE Set Extended Advertising Data
            localAdvertising.data = Array(parameters.dropFirst(4).prefix(Int(parameters[3])))
            localAdvertising.extended = true
        case 0x2038 where parameters.count >= 4:  // LE Set Extended Scan Response Data
            localAdvertising.scanResponse = Array(parameters.dropFirst(4).prefix(Int(parameters[3])))
            localAdvertising.extended = true
        default:
            break
        }
    }

    private mutating func connected(_ key: LinkKey, role: HCIRole, peer: BluetoothAddress, t: Double) {
        if let stale = links.removeValue(forKey: key) { store(stale) }
        links[key] = Link(number: allLinks.count + links.count + 1, key: key, localRole: role, peer: peer, start: t)
    }

    private mutating func store(_ link: Link) {
        allLinks.append(link)
    }

    private mutating func acl(handle: UInt16, boundary: ACLBoundary, data: [UInt8], captured: CapturedPacket, t: Double) {
        let key = LinkKey(controller: captured.controller, handle: handle & 0x0FFF)
        if links[key] == nil {
            warn("connection without start", record: captured.index,
                 "ACL data on connection handle 0x\(String(key.handle, radix: 16)) whose start is not in the capture: roles and peer address unknown")
            links[key] = Link(number: allLinks.count + links.count + 1, key: key, start: t)
        }
        let received = captured.direction == .received
        let rkey = ReassemblerKey(controller: captured.controller, received: received)
        var reassembler = reassemblers[rkey] ?? ACLReassembler()
        let output = reassembler.receive(handle: handle, boundary: boundary, data: data)
        reassemblers[rkey] = reassembler
        for error in output.errors {
            links[key]?.unreadable += 1
            warn("reassembly", record: captured.index, "\(error)")
        }
        guard let reassembled = output.pdu else { return }
        let frame: L2CAPFrame
        do { frame = try L2CAPFrame(bytes: reassembled.bytes) } catch {
            links[key]?.unreadable += 1
            warn("l2cap", record: captured.index, "L2CAP PDU could not be read (\(error)); skipped")
            return
        }
        guard frame.channelID == .att else { return }
        let pdu: ATTPDU
        do { pdu = try ATTPDU(bytes: frame.payload) } catch {
            links[key]?.unreadable += 1
            warn("att", record: captured.index, "ATT PDU \(frame.payload.prefix(8).spacedHex) could not be decoded (\(error)); skipped")
            return
        }
        guard var link = links[key] else { return }
        link.attPDUs += 1
        // Even opcodes (low 6 bits) come from the client, odd ones from the server.
        let fromClient = pdu.opcode.rawValue & 0x3F & 1 == 0
        // The local side sent it: as client, the peer is the server.
        let remoteIsServer = fromClient != received
        let serverKey = remoteIsServer ? remoteServerKey(link) : localServerKey()
        if servers[serverKey] == nil {
            servers[serverKey] = ServerBuilder(
                key: serverKey, address: remoteIsServer ? link.peer : localAddress, side: remoteIsServer ? "remote" : "local")
            serverOrder.append(serverKey)
        }
        var server = servers[serverKey]!
        server.noteConnection(link.number, role: remoteIsServer ? link.localRole.map(Self.peerRole) : link.localRole.map(Self.roleName))
        let number = link.number
        if remoteIsServer {
            follow(pdu, fromClient: fromClient, follower: &link.remoteServer, server: &server, link: number, t: t)
        } else {
            follow(pdu, fromClient: fromClient, follower: &link.localServer, server: &server, link: number, t: t)
        }
        servers[serverKey] = server
        links[key] = link
    }

    private static func roleName(_ role: HCIRole) -> String {
        role == .central ? "central" : role == .peripheral ? "peripheral" : "unknown"
    }

    private static func peerRole(_ localRole: HCIRole) -> String {
        localRole == .central ? "peripheral" : localRole == .peripheral ? "central" : "unknown"
    }

    private func remoteServerKey(_ link: Link) -> String {
        link.peer.map { "remote \($0.string)" } ?? "remote connection-\(link.number)"
    }

    private func localServerKey() -> String { "local" }

    // MARK: ATT

    private mutating func follow(_ pdu: ATTPDU, fromClient: Bool, follower: inout ATTFollower, server: inout ServerBuilder, link: Int, t: Double) {
        server.pdus += 1
        if fromClient {
            switch pdu {
            case let .exchangeMTURequest(mtu):
                follower.clientMTU = Int(mtu)
            case let .writeRequest(handle, value):
                write(handle, value, operation: .write, server: &server, link: link, t: t)
            case let .writeCommand(handle, value), let .signedWriteCommand(handle, value, _):
                write(handle, value, operation: .writeWithoutResponse, server: &server, link: link, t: t)
            case let .prepareWriteRequest(handle, offset, value):
                follower.prepared.append((handle, offset, value))
            case let .executeWriteRequest(flags):
                if flags == ATTPDU.executeWriteCommit {
                    var assembled: [(UInt16, [UInt8])] = []
                    for part in follower.prepared {
                        if let index = assembled.lastIndex(where: { $0.0 == part.handle }) {
                            var value = assembled[index].1
                            let offset = min(Int(part.offset), value.count)
                            value = Array(value.prefix(offset)) + part.value
                            assembled[index].1 = value
                        } else {
                            assembled.append((part.handle, part.value))
                        }
                    }
                    for (handle, value) in assembled { write(handle, value, operation: .write, server: &server, link: link, t: t) }
                }
                follower.prepared = []
            default:
                break
            }
            if pdu.opcode.rawValue & 0x40 == 0, pdu.opcode != .handleValueConfirmation { follower.pending = pdu }
            return
        }
        let request = follower.pending
        switch pdu {
        case let .handleValueNotification(handle, value):
            notified(handle, value, operation: .notify, server: &server, link: link, t: t)
            return
        case let .handleValueIndication(handle, value):
            notified(handle, value, operation: .indicate, server: &server, link: link, t: t)
            return
        case let .multipleHandleValueNotification(entries):
            for entry in entries { notified(entry.handle, entry.value, operation: .notify, server: &server, link: link, t: t) }
            return
        default:
            break
        }
        follower.pending = nil
        switch (request, pdu) {
        case let (.exchangeMTURequest(client)?, .exchangeMTUResponse(serverMTU)):
            server.mtu = max(server.mtu ?? 23, Int(min(client, serverMTU)))
        case let (.readByGroupTypeRequest(_, _, type)?, .readByGroupTypeResponse(groups)):
            guard type == .primaryService || type == .secondaryService else { break }
            for group in groups {
                guard let uuid = try? BluetoothUUID(littleEndian: group.value) else { continue }
                server.services[group.handle] = ServerBuilder.Service(uuid: uuid, end: group.endGroupHandle, primary: type == .primaryService)
            }
        case let (.findByTypeValueRequest(_, _, type, value)?, .findByTypeValueResponse(ranges)):
            guard type == 0x2800 || type == 0x2801, let uuid = try? BluetoothUUID(littleEndian: value) else { break }
            for range in ranges {
                server.services[range.start] = ServerBuilder.Service(uuid: uuid, end: range.end, primary: type == 0x2800)
            }
        case let (.readByTypeRequest(_, _, type)?, .readByTypeResponse(entries)):
            if type == .characteristicDeclaration {
                for entry in entries where entry.value.count == 5 || entry.value.count == 19 {
                    let valueHandle = UInt16(entry.value[1]) | UInt16(entry.value[2]) << 8
                    guard let uuid = try? BluetoothUUID(littleEndian: Array(entry.value[3...])) else { continue }
                    server.declarations[valueHandle] = ServerBuilder.Declaration(handle: entry.handle, properties: entry.value[0], uuid: uuid)
                }
            } else if type != .include {
                for entry in entries {
                    server.types[entry.handle] = type
                    read(entry.handle, entry.value, server: &server, link: link, t: t)
                }
            }
        case let (.findInformationRequest?, .findInformationResponse(entries)):
            for entry in entries { server.types[entry.handle] = entry.uuid }
        case let (.readRequest(handle)?, .readResponse(value)):
            read(handle, value, server: &server, link: link, t: t)
        case let (.readBlobRequest(handle, offset)?, .readBlobResponse(value)):
            let before = server.values[handle] ?? []
            server.values[handle] = Array(before.prefix(Int(offset))) + value
        case let (.readMultipleVariableRequest(handles)?, .readMultipleVariableResponse(tuples)):
            for (handle, tuple) in zip(handles, tuples) { read(handle, tuple.value, server: &server, link: link, t: t) }
        default:
            break
        }
    }

    private mutating func read(_ handle: UInt16, _ value: [UInt8], server: inout ServerBuilder, link: Int, t: Double) {
        server.values[handle] = value
        server.counts[handle, default: CloneCounts()].reads += 1
        server.used.insert(handle)
        valueEvents.append(ValueEvent(connection: link, server: server.key, t: t, handle: handle, operation: .read, value: value))
    }

    private mutating func write(_ handle: UInt16, _ value: [UInt8], operation: ValueOperation, server: inout ServerBuilder, link: Int, t: Double) {
        server.used.insert(handle)
        if server.isConfiguration(handle, value) {
            server.configurations[handle] = value
            if value.contains(where: { $0 != 0 }) {
                if server.firstSubscription == nil { server.firstSubscription = t }
                if server.subscriptionTimes[handle] == nil { server.subscriptionTimes[handle] = t }
            }
            return
        }
        if operation == .write { server.counts[handle, default: CloneCounts()].writes += 1 } else {
            server.counts[handle, default: CloneCounts()].writesWithoutResponse += 1
        }
        server.values[handle] = value
        server.timeline.append(.write(t: t, connection: link, handle: handle, value: value, withResponse: operation == .write))
        valueEvents.append(ValueEvent(connection: link, server: server.key, t: t, handle: handle, operation: operation, value: value))
    }

    private mutating func notified(_ handle: UInt16, _ value: [UInt8], operation: ValueOperation, server: inout ServerBuilder, link: Int, t: Double) {
        server.used.insert(handle)
        if operation == .indicate { server.counts[handle, default: CloneCounts()].indications += 1 } else {
            server.counts[handle, default: CloneCounts()].notifications += 1
        }
        server.timeline.append(.notify(t: t, connection: link, handle: handle, value: value, indication: operation == .indicate))
        valueEvents.append(ValueEvent(connection: link, server: server.key, t: t, handle: handle, operation: operation, value: value))
    }

    // MARK: Finishing

    mutating func finish(captureName: String, format: String, records: Int, packets: Int) -> CaptureAnalysis {
        for link in links.values.sorted(by: { $0.number < $1.number }) { store(link) }
        links = [:]
        allLinks.sort { $0.number < $1.number }
        for link in allLinks where link.unreadable > 0 {
            warnings.append("connection \(link.number): \(link.unreadable) L2CAP payloads could not be read (cut records or malformed PDUs); what they carried is missing from the clone")
        }
        for link in allLinks where link.encrypted {
            warnings.append("connection \(link.number) was encrypted; this HCI capture shows its payloads in clear (the controller encrypts below HCI), so it was followed")
        }
        if allLinks.isEmpty {
            warnings.append("no LE connection in the capture: only advertising can be cloned (capture while the app is connected to the device)")
        } else if servers.isEmpty {
            warnings.append("no ATT traffic on any connection: nothing to rebuild a GATT database from")
        }

        var devices: [ClonedDevice] = []
        var linksByNumber: [Int: Link] = [:]
        for link in allLinks { linksByNumber[link.number] = link }
        for key in serverOrder {
            guard let builder = servers[key] else { continue }
            var seen: SeenAdvertising?
            if builder.side == "local" {
                seen = localAdvertising.data == nil && localAdvertising.scanResponse == nil ? nil : localAdvertising
            } else if let address = builder.address {
                seen = advertising[address.value]
            }
            let (device, notes) = builder.build(advertising: seen, localAddress: localAddress, replyWindow: replyWindow)
            warnings += notes
            devices.append(device)
        }
        devices.sort { ($0.pduWeight, $0.side == "remote" ? 1 : 0) > ($1.pduWeight, $1.side == "remote" ? 1 : 0) }

        // Value records per connection, resolved against the finished databases.
        var byServer: [String: ClonedDevice] = [:]
        for device in devices { byServer[device.key] = device }
        var recordsByLink: [Int: [ValueRecord]] = [:]
        for event in valueEvents {
            guard let device = byServer[event.server], let start = linksByNumber[event.connection]?.start else { continue }
            guard let located = device.locate(Int(event.handle)) else { continue }
            let (service, characteristic) = located
            let identity = DeviceIdentity(address: device.address, name: device.name)
            recordsByLink[event.connection, default: []].append(ValueRecord(
                timestamp: max(0, event.t - start), device: identity, service: service, characteristic: characteristic,
                operation: event.operation, value: event.value))
        }

        let connections = allLinks.map { link in
            CloneConnection(
                number: link.number, handle: Int(link.key.handle),
                localRole: link.localRole.map(Self.roleName) ?? "unknown", peer: link.peer?.string,
                peerAddressType: link.peer.map { $0.type == .random ? "random" : "public" }, start: link.start, end: link.end,
                encrypted: link.encrypted, attPDUs: link.attPDUs, unreadablePDUs: link.unreadable)
        }
        let duration = firstTime.map { Double(lastTime &- $0) / 1_000_000 } ?? 0
        let source = CloneSource(
            capture: captureName, format: format, records: records, packets: packets, startUnixMicroseconds: firstTime ?? 0,
            durationSeconds: duration)
        return CaptureAnalysis(
            document: CloneDocument(source: source, devices: devices, connections: connections, warnings: warnings),
            valueRecords: recordsByLink)
    }
}

extension ClonedDevice {
    /// Sort weight: characteristics plus behaviour seen.
    var pduWeight: Int { characteristics.count + exchanges.count + notifications.count }
    /// Key used while building (the address as the analyzer named it).
    var key: String { side == "local" ? "local" : "remote \(address)" }

    /// The service and characteristic UUIDs of the value at `handle`, if it is one.
    func locate(_ handle: Int) -> (BluetoothUUID?, BluetoothUUID)? {
        for service in services {
            if let c = service.characteristics.first(where: { $0.valueHandle == handle }) { return (service.uuid, c.uuid) }
        }
        return nil
    }
}
