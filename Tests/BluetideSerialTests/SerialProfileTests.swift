import Bluetide
import BluetideSerial
import Testing

@Suite struct SerialProfileTests {
    @Test func chunkSizes() {
        #expect(SerialProfile.hm10.chunkSize(mtu: 23) == 20)
        #expect(SerialProfile.hm10.chunkSize(mtu: 247) == 20, "HM-10 stays at 20 bytes whatever the MTU")
        #expect(SerialProfile.nordicUART.chunkSize(mtu: 23) == 20)
        #expect(SerialProfile.nordicUART.chunkSize(mtu: 247) == 244)
        #expect(SerialProfile.nordicUART.chunkSize(mtu: 517) == 512, "never more than an attribute holds")
    }

    @Test func descriptionNamesTheCharacteristics() {
        #expect(SerialProfile.hm10.description == "HM-10 (FFE0: write FFE1, notify FFE1)")
        #expect(SerialProfile.nordicUART.description == "Nordic UART (6E400001: write 6E400002, notify 6E400003)")
        #expect(SerialProfile.short(SerialUUID.nordicUARTRX) == "6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
    }

    @Test func optionsMapToAFixedIntervalPolicy() {
        let policy = SerialLinkOptions().connectionPolicy
        #expect(policy.retry.attempts == 4)
        #expect(policy.retry.delay == .seconds(1))
        #expect(policy.reconnect.isEnabled)
        #expect(policy.reconnect.maximumAttempts == 3)
        #expect(policy.reconnect.nominalDelay(beforeAttempt: 3) == .seconds(1))
        #expect(policy.reconnect.jitter == 0)
        #expect(!SerialLinkOptions(reconnectTries: 0).connectionPolicy.reconnect.isEnabled)
    }
}
