import BluetideBase
import Testing
@testable import BluetideHost

@Suite struct ATTPDUTests {
    static let nus = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    static let nusLE = "9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E"

    /// Every PDU with its bytes (Core Vol 3 Part F 3.4 layouts, little-endian fields).
    static let vectors: [(String, ATTPDU)] = [
        ("01 0A 03 00 02", .errorResponse(requestOpcode: .readRequest, handle: 3, error: .readNotPermitted)),
        ("02 F7 00", .exchangeMTURequest(clientMTU: 247)),
        ("03 05 02", .exchangeMTUResponse(serverMTU: 517)),
        ("04 01 00 FF FF", .findInformationRequest(start: 1, end: 0xFFFF)),
        ("05 01 03 00 02 29 04 00 01 29", .findInformationResponse([
            ATTHandleUUID(handle: 3, uuid: .clientCharacteristicConfiguration), ATTHandleUUID(handle: 4, uuid: .characteristicUserDescription),
        ])),
        ("05 02 05 00 " + nusLE, .findInformationResponse([ATTHandleUUID(handle: 5, uuid: nus)])),
        ("06 01 00 FF FF 00 28 0D 18", .findByTypeValueRequest(start: 1, end: 0xFFFF, type: 0x2800, value: [0x0D, 0x18])),
        ("07 0A 00 0F 00 10 00 FF FF", .findByTypeValueResponse([ATTHandleRange(start: 10, end: 15), ATTHandleRange(start: 16, end: 0xFFFF)])),
        ("08 01 00 FF FF 03 28", .readByTypeRequest(start: 1, end: 0xFFFF, type: .characteristicDeclaration)),
        ("08 0A 00 14 00 " + nusLE, .readByTypeRequest(start: 10, end: 20, type: nus)),
        ("09 07 02 00 10 03 00 37 2A 04 00 02 05 00 38 2A", .readByTypeResponse([
            ATTHandleValue(handle: 2, value: [0x10, 0x03, 0x00, 0x37, 0x2A]), ATTHandleValue(handle: 4, value: [0x02, 0x05, 0x00, 0x38, 0x2A]),
        ])),
        ("0A 03 00", .readRequest(handle: 3)),
        ("0B 64", .readResponse(value: [100])),
        ("0B", .readResponse(value: [])),
        ("0C 03 00 16 00", .readBlobRequest(handle: 3, offset: 22)),
        ("0D 01 02", .readBlobResponse(value: [1, 2])),
        ("0E 03 00 05 00", .readMultipleRequest(handles: [3, 5])),
        ("0F 01 02 03", .readMultipleResponse(values: [1, 2, 3])),
        ("10 01 00 FF FF 00 28", .readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService)),
        ("11 06 01 00 05 00 00 18 06 00 09 00 01 18", .readByGroupTypeResponse([
            ATTGroupValue(handle: 1, endGroupHandle: 5, value: [0x00, 0x18]), ATTGroupValue(handle: 6, endGroupHandle: 9, value: [0x01, 0x18]),
        ])),
        ("12 03 00 01 00", .writeRequest(handle: 3, value: [1, 0])),
        ("13", .writeResponse),
        ("52 03 00 AB", .writeCommand(handle: 3, value: [0xAB])),
        ("D2 03 00 AB 01 02 03 04 05 06 07 08 09 0A 0B 0C",
         .signedWriteCommand(handle: 3, value: [0xAB], signature: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])),
        ("16 03 00 12 00 01 02 03", .prepareWriteRequest(handle: 3, offset: 18, value: [1, 2, 3])),
        ("17 03 00 12 00 01 02 03", .prepareWriteResponse(handle: 3, offset: 18, value: [1, 2, 3])),
        ("18 01", .executeWriteRequest(flags: 1)),
        ("18 00", .executeWriteRequest(flags: 0)),
        ("19", .executeWriteResponse),
        ("1B 03 00 48 65", .handleValueNotification(handle: 3, value: [0x48, 0x65])),
        ("1D 03 00 01", .handleValueIndication(handle: 3, value: [1])),
        ("1E", .handleValueConfirmation),
        ("20 03 00 05 00", .readMultipleVariableRequest(handles: [3, 5])),
        ("21 01 00 01 02 00 41 03", .readMultipleVariableResponse([ATTLengthValue([1]), ATTLengthValue([0x41, 0x03])])),
        ("21 05 00 01 02", .readMultipleVariableResponse([ATTLengthValue(length: 5, value: [1, 2])])),
        ("23 0C 00 02 00 00 48 19 00 01 00 07", .multipleHandleValueNotification([
            ATTHandleValue(handle: 12, value: [0x00, 0x48]), ATTHandleValue(handle: 25, value: [7]),
        ])),
        ("30 01 02", .unknown(opcode: ATTOpcode(0x30), parameters: [1, 2])),
        ("FF", .unknown(opcode: ATTOpcode(0xFF), parameters: [])),
    ]

    @Test func decodesAndEncodesEveryVector() throws {
        for (text, pdu) in Self.vectors {
            let bytes = gattHex(text)
            #expect(try ATTPDU(bytes: bytes) == pdu, "decode \(text)")
            #expect(pdu.bytes == bytes, "encode \(text)")
            #expect(pdu.opcode.rawValue == bytes[0])
        }
    }

    /// Fixed-layout PDUs: every shorter prefix is a truncation error, never a value.
    @Test func truncationAtEveryFieldBoundary() throws {
        let fixed = ["01 0A 03 00 02", "02 F7 00", "03 05 02", "04 01 00 FF FF", "06 01 00 FF FF 00 28", "08 01 00 FF FF 03 28",
                     "0A 03 00", "0C 03 00 16 00", "0E 03 00 05 00", "10 01 00 FF FF 00 28", "12 03 00", "52 03 00", "18 01",
                     "16 03 00 12 00", "17 03 00 12 00", "1B 03 00", "1D 03 00",
                     "D2 03 00 01 02 03 04 05 06 07 08 09 0A 0B 0C", "05 01 03 00 02 29", "07 0A 00 0F 00", "09 03 02 00 10",
                     "11 06 01 00 05 00 00 18", "20 03 00 05 00", "23 0C 00 02 00 00 48"]
        for text in fixed {
            let bytes = gattHex(text)
            #expect(throws: Never.self, "whole \(text)") { try ATTPDU(bytes: bytes) }
            for cut in 0..<bytes.count {
                #expect(throws: DecodingError.self, "\(text) cut to \(cut)") { try ATTPDU(bytes: Array(bytes.prefix(cut))) }
            }
        }
    }

    @Test func truncationErrorNamesTheField() {
        #expect(throws: DecodingError.truncated("ATT 0x0C.value offset", needed: 2, present: 1, at: 3)) {
            try ATTPDU(bytes: [0x0C, 0x03, 0x00, 0x16])
        }
    }

    @Test func rejectsTrailingBytesAndBadLists() {
        for text in ["0A 03 00 00", "02 F7 00 00", "13 00", "1E 00", "19 01", "18 01 00",  // fixed size plus one
                     "05 03 03 00 02 29",  // unknown format
                     "05 01 03 00 02 29 04",  // partial entry
                     "05 01",  // empty list
                     "07 0A 00 0F",  // partial range
                     "09 01 02 00",  // length below 2
                     "09 04 02 00 10 03 00",  // partial second entry
                     "11 03 01 00 05",  // length below 4
                     "08 01 00 FF FF 03",  // 1-byte UUID
                     "08 01 00 FF FF 03 28 00 00",  // 4-byte UUID
                     "0E 03 00",  // one handle only
                     "0E 03 00 05"]  // odd handle bytes
        {
            #expect(throws: DecodingError.self, "\(text)") { try ATTPDU(bytes: gattHex(text)) }
        }
    }

    @Test func opcodeKinds() {
        #expect(ATTOpcode.readRequest.kind == .request)
        #expect(ATTOpcode.readResponse.kind == .response)
        #expect(ATTOpcode.errorResponse.kind == .response)
        #expect(ATTOpcode.writeCommand.kind == .command)
        #expect(ATTOpcode.signedWriteCommand.kind == .command)
        #expect(ATTOpcode.handleValueNotification.kind == .notification)
        #expect(ATTOpcode.handleValueIndication.kind == .indication)
        #expect(ATTOpcode.handleValueConfirmation.kind == .confirmation)
        #expect(ATTOpcode(0x3E).kind == .request)
        #expect(ATTOpcode(0x7F).kind == .command)
        #expect(ATTOpcode.readBlobRequest.responseOpcode == .readBlobResponse)
        #expect(ATTOpcode.writeCommand.responseOpcode == nil)
        #expect(ATTErrorCode(0x0F).name == "Insufficient Encryption")
        #expect(ATTErrorCode.application(0).rawValue == 0x80)
        #expect(ATTErrorCode(0x85).isApplicationError)
        #expect(ATTErrorCode.readNotPermitted.description == "0x02 (Read Not Permitted)")
    }

    /// Random and truncated inputs: only values or DecodingError; every decoded value re-encodes
    /// to bytes that decode to the same value.
    @Test func randomizedRobustness() throws {
        var rng = GATTSeededRandom(seed: 0xA77)
        let seeds = Self.vectors.map { gattHex($0.0) }
        for i in 0..<20_000 {
            var input: [UInt8]
            if i % 2 == 0 {
                input = rng.bytes(upTo: 40)
            } else {
                input = seeds[Int.random(in: 0..<seeds.count, using: &rng)]
                if !input.isEmpty, Bool.random(using: &rng) { input[Int.random(in: 0..<input.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
                input = Array(input.prefix(Int.random(in: 0...input.count + 1, using: &rng)))
                if Bool.random(using: &rng) { input += rng.bytes(upTo: 4) }
            }
            do {
                let pdu = try ATTPDU(bytes: input)
                #expect(try ATTPDU(bytes: pdu.bytes) == pdu, "\(input.spacedHex)")
            } catch {
                // A DecodingError is the only other outcome (typed throws).
            }
        }
    }
}
