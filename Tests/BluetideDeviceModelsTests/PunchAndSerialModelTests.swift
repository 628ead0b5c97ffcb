import BluetideBase
import BluetideProfiles
import Testing

@testable import BluetideDeviceModels

@Suite struct PunchTrainerModelTests {
    private func responses(_ outputs: [(time: Double, output: EmulatedOutput)]) throws -> [PunchResponse] {
        try values(outputs, PunchUUID.response).map { try PunchResponse(exactly: $0.bytes) }
    }

    private func statuses(_ outputs: [EmulatedOutput]) throws -> [PunchControlStatus] {
        try outputs.filter { $0.characteristic == PunchUUID.control }.map { try PunchControlStatus(exactly: $0.bytes) }
    }

    private func load(_ model: inout PunchTrainerModel, targets: [UInt8], milliseconds: [UInt16]) {
        let a = model.write(PunchUUID.sequence, targets, now: 0)
        let b = model.write(PunchUUID.timeSequence, milliseconds.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, now: 0)
        #expect(a == .ok && b == .ok)
    }

    @Test func invalidSequencesAreRefusedWith0x80AndTheOldValuesKept() {
        var model = PunchTrainerModel(seed: 1)
        load(&model, targets: [0, 1, 2], milliseconds: [1000, 1000, 1000])
        for bad in [[UInt8](), [0, 6], [UInt8](repeating: 1, count: 513)] {
            let outcome = model.write(PunchUUID.sequence, bad, now: 1)
            #expect(outcome.attError == 0x80)
        }
        for bad: [UInt8] in [[0xE8], [0x00, 0x00], [0x61, 0xEA], []] {
            let outcome = model.write(PunchUUID.timeSequence, bad, now: 1)
            #expect(outcome.attError == 0x80)
        }
        #expect(model.read(PunchUUID.sequence, now: 1) == [0, 1, 2])
        #expect(model.read(PunchUUID.timeSequence, now: 1) == [0xE8, 0x03, 0xE8, 0x03, 0xE8, 0x03])
    }

    @Test func startNeedsMatchingSequences() throws {
        var model = PunchTrainerModel(seed: 1)
        var outcome = model.write(PunchUUID.control, [0x01], now: 0)
        #expect(try statuses(outcome.outputs) == [.error(.sequencesMissing)])
        load(&model, targets: [0, 1], milliseconds: [1000])
        outcome = model.write(PunchUUID.control, [0x01], now: 0)
        #expect(outcome.outputs.map(\.bytes) == [[0xE0, 0x01]])
        outcome = model.write(PunchUUID.control, [0x07], now: 0)
        #expect(outcome.attError == 0x80)
    }

    @Test func aFullSessionReportsEveryStepAndFinishes() throws {
        var options = EmulatorOptions()
        options.missProbability = 0.1
        options.wrongTargetProbability = 0.1
        var model = PunchTrainerModel(seed: 42, options: options)
        let targets: [UInt8] = (0..<40).map { UInt8($0 % 6) }
        load(&model, targets: targets, milliseconds: Array(repeating: 800, count: 40))
        let start = model.write(PunchUUID.control, [0x01], now: 1)
        #expect(try statuses(start.outputs) == [.armed, .running])
        let outputs = drive(&model, from: 1, to: 60, step: 0.02)
        let steps = try responses(outputs)
        #expect(steps.count == 40)
        #expect(steps.map(\.step) == (0..<40).map { UInt16($0) })
        #expect(steps.map(\.target) == targets)
        for r in steps {
            if r.hit { #expect(r.reactionTimeMilliseconds >= 120 && r.reactionTimeMilliseconds < 800) }
            else { #expect(r.reactionTimeMilliseconds == 800) }
        }
        #expect(steps.contains { !$0.hit })
        #expect(steps.contains { $0.wrongTargetFirst })
        #expect(try statuses(outputs.map(\.output)) == [.finished(stepsDone: 40)])
        // The last status comes after the last response, at the time the last step ended.
        #expect(outputs.last?.output.characteristic == PunchUUID.control)
        #expect(model.read(PunchUUID.response, now: 60) == steps.last?.bytes)
    }

    @Test func reactionTimesFollowTheConfiguredDistribution() throws {
        var options = EmulatorOptions()
        options.missProbability = 0
        options.wrongTargetProbability = 0
        var model = PunchTrainerModel(seed: 9, options: options)
        // The longest program a trainer holds (PunchSequence.maxSteps, 256 steps).
        let count = PunchSequence.maxSteps
        load(&model, targets: Array(repeating: 2, count: count), milliseconds: Array(repeating: 5000, count: count))
        _ = model.write(PunchUUID.control, [0x01], now: 0)
        let steps = try responses(drive(&model, to: 600, step: 0.05))
        #expect(steps.count == count)
        let times = steps.map { Double($0.reactionTimeMilliseconds) }
        let mean = times.reduce(0, +) / Double(times.count)
        let sd = (times.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(times.count)).squareRoot()
        #expect(abs(mean - 350) < 20, "the documented mean (docs/gpio-config.md)")
        #expect(abs(sd - 80) < 20)
        #expect(steps.allSatisfy { $0.hit })
    }

    @Test func countdownAndStop() throws {
        var model = PunchTrainerModel(seed: 3)
        load(&model, targets: [1, 2, 3, 4], milliseconds: [2000, 2000, 2000, 2000])
        let start = model.write(PunchUUID.control, [0x03, 0x03], now: 0)
        #expect(try statuses(start.outputs) == [.armed])
        #expect(drive(&model, to: 2.9, step: 0.1).isEmpty)
        let running = drive(&model, from: 3, to: 3.1, step: 0.1)
        #expect(try statuses(running.map(\.output)) == [.running])
        let stop = model.write(PunchUUID.control, [0x02], now: 3.2)
        #expect(try statuses(stop.outputs) == [.stopped])
        #expect(drive(&model, from: 3.2, to: 20, step: 0.1).isEmpty)
    }
}

@Suite struct HM10ModelTests {
    @Test func echoesWritesInTwentyByteNotifications() {
        var model = HM10Model(seed: 1)
        let text = Array("The quick brown fox jumps over the lazy dog".utf8)
        let outcome = model.write(SerialUUID.hm10Data, text, now: 0)
        #expect(outcome.outputs.map(\.bytes.count) == [20, 20, 3])
        #expect(outcome.outputs.flatMap(\.bytes) == text)
        #expect(outcome.outputs.allSatisfy { $0.characteristic == SerialUUID.hm10Data && $0.delivery == .notify })
        #expect(model.characteristic(SerialUUID.hm10Data)?.properties.rawValue == 0x16)
    }

    @Test func answersATCommands() {
        var model = HM10Model(seed: 1)
        func ask(_ command: String) -> String {
            String(decoding: model.write(SerialUUID.hm10Data, Array(command.utf8), now: 0).outputs.flatMap(\.bytes), as: UTF8.self)
        }
        #expect(ask("AT") == "OK")
        #expect(ask("AT+NAME?") == "OK+NAME:HMSoft")
        #expect(ask("AT+NAMEBoxer") == "OK+Set:Boxer")
        #expect(model.advertising.localName == "Boxer")
        #expect(ask("AT+VERS?") == "HMSoft V540")
        #expect(ask("AT+ADDR?").hasPrefix("OK+ADDR:") && ask("AT+ADDR?").count == 20)
        #expect(ask("AT+BAUD4") == "OK+Set:4")
        #expect(ask("AT+BAUD?") == "OK+Get:4")
        #expect(ask("AT+BAUD9") == "AT+BAUD9")  // out of range: not a command, echoed
        #expect(ask("AT+RESET\r\n") == "OK+RESET")
        #expect(ask("AT+RENEW") == "OK+RENEW")
        #expect(ask("hello AT") == "hello AT")
        #expect(model.uartCommand("AT", connected: true) == "OK+LOST")
        model.answersATCommands = false
        #expect(ask("AT") == "AT")
    }
}

@Suite struct NordicUARTModelTests {
    @Test func echoesRXWritesOnTXInLinkSizedNotifications() {
        var model = NordicUARTModel(seed: 1)
        #expect(model.advertising.serviceUUIDs == [SerialUUID.nordicUARTService])
        #expect(model.advertising.localName == "Bluetide UART")
        let text = Array(repeating: UInt8(ascii: "x"), count: 300)
        #expect(model.write(SerialUUID.nordicUARTRX, text, now: 0).outputs.map(\.bytes.count) == Array(repeating: 20, count: 15))
        model.setMaximumNotificationLength(244)  // ATT MTU 247
        let outputs = model.write(SerialUUID.nordicUARTRX, text, now: 0).outputs
        #expect(outputs.map(\.bytes.count) == [244, 56])
        #expect(outputs.flatMap(\.bytes) == text)
        #expect(outputs.allSatisfy { $0.characteristic == SerialUUID.nordicUARTTX && $0.delivery == .notify })
        model.setMaximumNotificationLength(514)
        #expect(model.maximumNotificationLength == 512, "never more than an attribute value holds")
        #expect(model.write(SerialUUID.nordicUARTTX, text, now: 0).attError == EmulatedATTError.writeNotPermitted)
    }
}

@Suite struct EmulatorCatalogTests {
    @Test func everyEmulatorIsListedAndRuns() throws {
        let names = EmulatorCatalog.all.map(\.name)
        #expect(names == ["heart-rate", "battery", "csc", "cycling-power", "ftms-bike", "tacx-fec", "colmi-r02", "colmi-r03", "colmi-r06", "colmi-r09", "colmi-r10", "colmi-r11", "colmi-r12", "colmi-h59", "hm10", "nus", "punch"])
        #expect(EmulatorCatalog.make(name: "nope") == nil)
        for descriptor in EmulatorCatalog.all {
            #expect(!descriptor.summary.isEmpty)
            var model = try #require(EmulatorCatalog.make(name: descriptor.name, seed: 11))
            #expect(model.name == descriptor.name)
            #expect(!model.services.isEmpty)
            #expect(!model.advertising.localName.isEmpty)
            #expect(model.tickInterval > 0)
            var t = 0.0
            while t <= 30 {
                for output in model.tick(now: t) {
                    let declared = try #require(model.characteristic(output.characteristic), "\(descriptor.name): \(output)")
                    #expect(declared.properties.contains(output.delivery == .notify ? .notify : .indicate))
                }
                t += model.tickInterval
            }
            // Every readable characteristic answers a read.
            for c in model.allCharacteristics where c.properties.contains(.read) {
                #expect(model.read(c.uuid, now: t) != nil, "\(descriptor.name) \(c.uuid)")
            }
        }
    }

    @Test func sameSeedSameBytes() {
        for descriptor in EmulatorCatalog.all {
            var a = descriptor.make(4, EmulatorOptions()), b = descriptor.make(4, EmulatorOptions())
            var t = 0.0
            while t <= 20 {
                #expect(a.tick(now: t) == b.tick(now: t))
                t += 0.25
            }
        }
    }
}

@Suite struct EmulatorOptionsTests {
    @Test func textOptionsAreParsedAndChecked() throws {
        var options = EmulatorOptions()
        try options.set("power", to: "250")
        try options.set("miss", to: "0.2")
        try options.set("name", to: "Kickr")
        #expect(options.powerWatts == 250 && options.missProbability == 0.2 && options.localName == "Kickr")
        #expect(throws: EmulatorOptionError.self) { try options.set("power", to: "lots") }
        #expect(throws: EmulatorOptionError.self) { try options.set("miss", to: "2") }
        #expect(throws: EmulatorOptionError.self) { try options.set("colour", to: "red") }
        #expect(Set(EmulatorOptions.keys.map(\.key)).count == EmulatorOptions.keys.count)
        let model = try #require(EmulatorCatalog.make(name: "ftms-bike", options: options))
        #expect(model.advertising.localName == "Kickr")
    }
}
