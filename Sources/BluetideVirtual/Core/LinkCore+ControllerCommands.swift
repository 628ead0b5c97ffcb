import BluetideBase
import BluetideHCI

// The commands a host sends during init and connection set-up beyond advertising, scanning and
// connecting: what the Core spec makes mandatory for an LE controller (Vol 4 Part E 3.1) and
// what Linux's hci_sync init sequence reads. Every one listed in
// ``VirtualControllerProfile/commands`` is answered here or in `handleCommand`; anything else
// gets Command Status "Unknown HCI Command", a fixed-size answer no host can misparse.
extension LinkCore {
    mutating func handleOtherCommand(_ id: Int, opcode: HCIOpcode, parameters: [UInt8]) {
        guard let state = controllers[id] else { return }
        func reply(_ returnParameters: [UInt8]) {
            emit(id, HCIEvent.commandComplete(HCICommandComplete(opcode: opcode, returnParameters: returnParameters)))
        }
        /// The parameters must be exactly `count` bytes; otherwise 0x12 by Command Complete.
        func exactly(_ count: Int) -> Bool {
            guard parameters.count == count else {
                complete(id, opcode, .invalidParameters)
                return false
            }
            return true
        }
        func handle(at offset: Int) -> UInt16 { UInt16(parameters[offset]) | UInt16(parameters[offset + 1] & 0x0F) << 8 }
        func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

        switch opcode.rawValue {
        case 0x0C31:  // Set Controller To Host Flow Control: only "off" (the controller never waits for the host)
            guard exactly(1) else { return }
            complete(id, opcode, parameters[0] == 0 ? .success : .unsupportedFeature)

        case 0x0C2D:  // Read Transmit Power Level (current or maximum): 0 dBm
            guard exactly(3) else { return }
            let h = handle(at: 0)
            let known = connection(id, h) != nil
            reply([(known ? HCIStatus.success : .unknownConnectionIdentifier).rawValue] + le16(h) + [0])

        case 0x0C6C:  // Read LE Host Support: LE on, simultaneous LE and BR/EDR unused
            reply([HCIStatus.success.rawValue, 1, 0])

        case 0x041D:  // Read Remote Version Information: the version exchange takes a connection interval
            guard parameters.count == 2 else { return commandStatus(id, opcode, .invalidParameters) }
            guard let link = connection(id, handle(at: 0)) else { return commandStatus(id, opcode, .unknownConnectionIdentifier) }
            commandStatus(id, opcode, .success)
            startProcedure(.remoteVersion(requester: id), on: link.id)

        case 0x2007:  // LE Read Advertising Physical Channel Tx Power: 0 dBm
            reply([HCIStatus.success.rawValue, 0])

        case 0x200F:  // LE Read Filter Accept List Size
            reply([HCIStatus.success.rawValue, VirtualControllerProfile.acceptListSize])

        case 0x2010:  // LE Clear Filter Accept List
            guard !acceptListInUse(state) else { return complete(id, opcode, .commandDisallowed) }
            controllers[id]?.acceptList = []
            complete(id, opcode)

        case 0x2011, 0x2012:  // LE Add Device To / Remove Device From Filter Accept List
            guard exactly(7) else { return }
            guard !acceptListInUse(state) else { return complete(id, opcode, .commandDisallowed) }
            if parameters[0] == 0xFF { return complete(id, opcode) }  // anonymous advertisements: nothing to filter here
            guard parameters[0] <= 1 else { return complete(id, opcode, .invalidParameters) }
            var value: UInt64 = 0
            for (index, byte) in parameters[1...6].enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
            let address = BluetoothAddress(value: value, type: parameters[0] == 0 ? .public : .random)
            if opcode.rawValue == 0x2012 {
                controllers[id]?.acceptList.remove(address)
            } else {
                guard state.acceptList.contains(address) || state.acceptList.count < Int(VirtualControllerProfile.acceptListSize) else {
                    return complete(id, opcode, .memoryCapacityExceeded)
                }
                controllers[id]?.acceptList.insert(address)
            }
            complete(id, opcode)

        case 0x2014:  // LE Set Host Channel Classification: accepted (the virtual radio has no bad channels)
            guard exactly(5) else { return }
            complete(id, opcode)

        case 0x2015:  // LE Read Channel Map: all 37 data channels used
            guard exactly(2) else { return }
            let h = handle(at: 0)
            guard connection(id, h) != nil else {
                return reply([HCIStatus.unknownConnectionIdentifier.rawValue] + le16(h) + [0, 0, 0, 0, 0])
            }
            reply([HCIStatus.success.rawValue] + le16(h) + [0xFF, 0xFF, 0xFF, 0xFF, 0x1F])

        case 0x201C:  // LE Read Supported States
            let states = VirtualControllerProfile.supportedStates
            reply([HCIStatus.success.rawValue] + (0..<8).map { UInt8(truncatingIfNeeded: states >> (8 * UInt64($0))) })

        case 0x201D, 0x201E:  // LE Receiver Test / LE Transmitter Test (v1): test mode until Test End
            guard exactly(opcode.rawValue == 0x201D ? 1 : 3) else { return }
            guard !state.testMode, !state.isAdvertising, !state.scanning, state.initiating == nil, state.connections.isEmpty else {
                return complete(id, opcode, .commandDisallowed)
            }
            controllers[id]?.testMode = true
            complete(id, opcode)

        case 0x201F:  // LE Test End: no test packets are ever received on the virtual radio
            guard state.testMode else { return complete(id, opcode, .commandDisallowed) }
            controllers[id]?.testMode = false
            reply([HCIStatus.success.rawValue, 0, 0])

        case 0x204B:  // LE Read Transmit Power: −20 to +20 dBm
            reply([HCIStatus.success.rawValue, UInt8(bitPattern: -20), 20])

        default:
            commandStatus(id, opcode, .unknownCommand)
        }
    }

    /// Whether scanning, initiating or advertising currently filters through the accept list
    /// (the spec forbids changing it then).
    private func acceptListInUse(_ state: ControllerState) -> Bool {
        if state.scanning, state.scanParameters.filterPolicy & 0x01 != 0 { return true }
        if let request = state.initiating, request.initiatorFilterPolicy == 0x01 { return true }
        return false
    }
}
