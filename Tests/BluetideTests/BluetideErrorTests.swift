import Testing
@testable import Bluetide
import BluetideHost

/// A characteristic that claims notify but has no CCCD is reported as exactly that.
@Suite struct NoClientConfigurationTests {
    @Test func aNotifyCharacteristicWithoutCCCDIsReportedTruthfully() {
        let uuid = BluetoothUUID(0x2A37)
        let error = BluetideError.from(GATTClientError.noClientConfiguration(valueHandle: 12), characteristic: uuid, operation: "subscribe")
        #expect(error == .noClientConfiguration(uuid))
        #expect(error.description.contains("no Client Characteristic Configuration descriptor"))
        #expect(!error.description.contains("neither"))
        #expect(BluetideError.from(GATTClientError.notSubscribable(valueHandle: 12), characteristic: uuid) == .notSubscribable(uuid))
    }
}
