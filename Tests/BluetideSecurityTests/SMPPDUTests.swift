import BluetideBase
import Testing

@testable import BluetideHost

/// Every SMP command's bytes (Core Vol 3 Part H 3.5–3.6), both ways, and what malformed input gives.
@Suite struct SMPPDUTests {
    static let sixteen = (0..<16).map { UInt8($0) }

    static let vectors: [(SMPPDU, String)] = [
        // Pairing Request: KeyboardDisplay, no OOB, Bonding|MITM|SC|Keypress, 16, EncKey|IdKey|SignKey both ways.
        (.pairingRequest(SMPPairingFeatures(
            ioCapability: .keyboardDisplay, authRequirements: [.bonding, .mitm, .secureConnections, .keypress],
            maximumKeySize: 16, initiatorKeys: [.encryptionKey, .identityKey, .signingKey],
            responderKeys: [.encryptionKey, .identityKey, .signingKey])), "01 04 00 1D 10 07 07"),
        // The legacy c1 sample's Pairing Response: 02 03 00 00 08 00 05 (written 05000800000302).
        (.pairingResponse(SMPPairingFeatures(
            ioCapability: .noInputNoOutput, authRequirements: [], maximumKeySize: 8, initiatorKeys: [],
            responderKeys: [.encryptionKey, .signingKey])), "02 03 00 00 08 00 05"),
        (.pairingConfirm(sixteen), "03 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F"),
        (.pairingRandom(sixteen), "04 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F"),
        (.pairingFailed(.confirmValueFailed), "05 04"),
        (.encryptionInformation(longTermKey: sixteen), "06 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F"),
        (.centralIdentification(ediv: 0x1234, random: 0x0102_0304_0506_0708), "07 34 12 08 07 06 05 04 03 02 01"),
        (.identityInformation(identityResolvingKey: sixteen), "08 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F"),
        (.identityAddressInformation(BluetoothAddress(value: 0xC6C5_C4C3_C2C1, type: .random)), "09 01 C1 C2 C3 C4 C5 C6"),
        (.signingInformation(signatureKey: sixteen), "0A 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F"),
        (.securityRequest([.bonding, .mitm]), "0B 05"),
        (.pairingDHKeyCheck(sixteen), "0D 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F"),
        (.keypressNotification(.digitEntered), "0E 01"),
    ]

    @Test(arguments: 0..<vectors.count)
    func encodesAndDecodes(_ index: Int) throws {
        let (pdu, hex) = Self.vectors[index]
        #expect(pdu.bytes == msbFirst(hex))
        #expect(try SMPPDU(bytes: msbFirst(hex)) == pdu)
    }

    @Test func publicKeyIsXThenYLeastSignificantFirst() throws {
        let key = SMPPublicKey.debug
        let bytes = SMPPDU.pairingPublicKey(key).bytes
        #expect(bytes.count == 65)
        #expect(bytes[0] == 0x0C)
        // X = 20b003d2 … 0e359de6 most significant first, so the wire starts e6 9d 35 0e.
        #expect(Array(bytes[1...4]) == [0xE6, 0x9D, 0x35, 0x0E])
        #expect(Array(bytes[33...36]) == [0x8B, 0xD2, 0x89, 0x15])
        #expect(try SMPPDU(bytes: bytes) == .pairingPublicKey(key))
    }

    @Test func unknownReasonIsKept() throws {
        #expect(try SMPPDU(bytes: [0x05, 0x42]) == .pairingFailed(SMPPairingFailureReason(rawValue: 0x42)))
        #expect(SMPPairingFailureReason(rawValue: 0x42).description == "reason 0x42")
    }

    @Test func reservedBitsAreIgnored() throws {
        let pdu = try SMPPDU(bytes: [0x01, 0x03, 0x00, 0xC1, 0x10, 0xF3, 0xF7])
        guard case let .pairingRequest(features) = pdu else { Issue.record("not a request"); return }
        #expect(features.authRequirements == [.bonding])
        #expect(features.initiatorKeys == [.encryptionKey, .identityKey])
        #expect(features.responderKeys == [.encryptionKey, .identityKey, .signingKey])
    }

    @Test func unknownCodeIsRefused() {
        for code: UInt8 in [0x00, 0x0F, 0xFF] {
            #expect(throws: DecodingError.invalid("SMP.code", expected: "a command code 0x01…0x0E", found: "0x" + [code].hexString, at: 0)) {
                try SMPPDU(bytes: [code, 0x00])
            }
        }
        #expect(throws: DecodingError.truncated("SMP.code", needed: 1, present: 0, at: 0)) { try SMPPDU(bytes: []) }
    }

    @Test func everyCommandRefusesTruncatedAndLongInput() {
        for code in SMPCode.allCases {
            let whole = [code.rawValue] + [UInt8](repeating: 0x01, count: code.parameterLength)
            #expect(throws: DecodingError.truncated("SMP.\(code)", needed: code.parameterLength, present: code.parameterLength - 1, at: 1)) {
                try SMPPDU(bytes: Array(whole.dropLast()))
            }
            #expect(throws: DecodingError.invalid(
                "SMP.\(code)", expected: "\(code.parameterLength) parameter octets", found: "\(code.parameterLength + 1)", at: 1)) {
                try SMPPDU(bytes: whole + [0])
            }
        }
    }

    @Test func invalidFieldValuesAreNamed() {
        #expect(throws: DecodingError.invalid("SMP.pairingRequest.IO capability", expected: "0…4", found: "5", at: 1)) {
            try SMPPDU(bytes: [0x01, 0x05, 0x00, 0x01, 0x10, 0x00, 0x00])
        }
        #expect(throws: DecodingError.invalid("SMP.pairingResponse.OOB data flag", expected: "0 or 1", found: "2", at: 2)) {
            try SMPPDU(bytes: [0x02, 0x03, 0x02, 0x01, 0x10, 0x00, 0x00])
        }
        #expect(throws: DecodingError.invalid("SMP.pairingRequest.maximum encryption key size", expected: "7…16", found: "6", at: 4)) {
            try SMPPDU(bytes: [0x01, 0x03, 0x00, 0x01, 0x06, 0x00, 0x00])
        }
        #expect(throws: DecodingError.invalid("SMP.pairingRequest.maximum encryption key size", expected: "7…16", found: "17", at: 4)) {
            try SMPPDU(bytes: [0x01, 0x03, 0x00, 0x01, 0x11, 0x00, 0x00])
        }
        #expect(throws: DecodingError.invalid("SMP.identityAddressInformation.address type", expected: "0 (public) or 1 (random)", found: "2", at: 1)) {
            try SMPPDU(bytes: [0x09, 0x02, 1, 2, 3, 4, 5, 6])
        }
        #expect(throws: DecodingError.invalid("SMP.keypressNotification.type", expected: "0…4", found: "5", at: 1)) {
            try SMPPDU(bytes: [0x0E, 0x05])
        }
    }
}
