import BluetideBase
import BluetideProfiles
import Testing

@testable import BluetideDeviceModels

/// Issue 21 item 2: the emulated trainers and sensors serve Device Information (0x180A) as real
/// ones do, so an app (pyftms, Home Assistant) can show who made the device and which model it is.
@Suite struct DeviceInformationModelTests {
    /// The text `model` serves for `characteristic` in its 0x180A service (declared value and read).
    private func text(_ model: any DeviceModel, _ characteristic: BluetoothUUID) throws -> String {
        let service = try #require(model.services.first { $0.uuid == .deviceInformation }, "\(model.name) serves no 0x180A")
        let declared = try #require(service.characteristics.first { $0.uuid == characteristic }, "\(model.name) \(characteristic)")
        #expect(declared.properties == [.read])
        let read = try #require(model.read(characteristic, now: 0))
        #expect(read == declared.initialValue)
        return try DeviceInformationString(bytes: read).text
    }

    @Test func trainersStrapsAndSensorsNameTheirMakerAndModel() throws {
        let expected: [(String, String, String)] = [
            ("ftms-bike", "Bluetide", "FTMS Bike"), ("tacx-fec", "Tacx", "Neo (emulated)"),
            ("heart-rate", "Bluetide", "HRM"), ("csc", "Bluetide", "Speed/Cadence Sensor"),
            ("cycling-power", "Bluetide", "Power Meter"),
        ]
        for (name, manufacturer, modelNumber) in expected {
            let model = try #require(EmulatorCatalog.make(name: name, seed: 7))
            #expect(try text(model, .manufacturerName) == manufacturer, "\(name)")
            #expect(try text(model, .modelNumber) == modelNumber, "\(name)")
            #expect(try text(model, .firmwareRevision).isEmpty == false, "\(name)")
            #expect(try text(model, .softwareRevision).isEmpty == false, "\(name)")
            #expect(try text(model, .hardwareRevision).isEmpty == false, "\(name)")
            let serial = try text(model, .serialNumber)
            #expect(!serial.isEmpty && serial.allSatisfy(\.isNumber), "\(name) serial \(serial)")
            // The same seed gives the same serial; another seed another one.
            let again = try #require(EmulatorCatalog.make(name: name, seed: 7))
            let other = try #require(EmulatorCatalog.make(name: name, seed: 8))
            #expect(try text(again, .serialNumber) == serial)
            #expect(try text(other, .serialNumber) != serial, "\(name)")
        }
    }

    @Test func theTacxSerialAndRevisionsAgreeWithItsFECPages() throws {
        var model = TacxFECModel(seed: 3)
        // Ask for pages 80 and 81 and read them back from the notifications.
        let request: (UInt8) -> [UInt8] = { page in
            FECFrame(page: .requestDataPage(FECRequestDataPage(requestedPageNumber: page, requestedTransmissionResponse: 1))).bytes
        }
        _ = model.write(.tacxFECWrite, request(80), now: 0)
        _ = model.write(.tacxFECWrite, request(81), now: 0)
        let pages = drive(&model, to: 1, step: 0.25).compactMap { try? FECFrame(bytes: $0.output.bytes).page }
        let manufacturer = try #require(pages.lazy.compactMap { if case let .manufacturerInfo(p) = $0 { p } else { nil } }.first)
        let product = try #require(pages.lazy.compactMap { if case let .productInfo(p) = $0 { p } else { nil } }.first)
        #expect(try text(model, .serialNumber) == String(product.serialNumber))
        #expect(try text(model, .hardwareRevision) == String(manufacturer.hardwareRevision))
        #expect(try text(model, .firmwareRevision) == "\(product.softwareRevisionMain / 10).\(product.softwareRevisionMain % 10)")
    }
}
