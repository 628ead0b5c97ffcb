import BluetideBase
import BluetideProfiles
import Testing

@testable import BluetideDeviceModels

/// Issue 28 item 5: the emulated HM-10 and Nordic UART devices print numeric lines by themselves.
@Suite struct NumericLineStreamTests {
    @Test func linesFollowTheTimeAtTheirRate() {
        var stream = NumericLineStream(series: .both, rate: 10)
        #expect(stream.lines(now: 5) == ["sine=0.000 counter=0\n"], "the first call starts the stream")
        #expect(stream.lines(now: 5.05).isEmpty, "the next line is due 0.1 s later")
        #expect(stream.lines(now: 5.25) == ["sine=0.156 counter=1\n", "sine=0.309 counter=2\n"])
        // A quarter period (1 s = 10 lines) in: the sine's peak.
        #expect(NumericLineStream.line(.sine, index: 10, rate: 10) == "sine=1.000\n")
        #expect(NumericLineStream.line(.sine, index: 30, rate: 10) == "sine=-1.000\n")
        #expect(NumericLineStream.line(.counter, index: 7, rate: 10) == "counter=7\n")
        // A long pause gives the latest lines only.
        let late = stream.lines(now: 1000)
        #expect(late.count == NumericLineStream.catchUpLimit)
        #expect(late.last == NumericLineStream.line(.both, index: 9950, rate: 10))
    }

    @Test(arguments: ["hm10", "nus"])
    func serialModelsNotifyTheirLinesOnTick(model name: String) throws {
        var options = EmulatorOptions()
        try options.set("stream", to: "counter")
        try options.set("stream-rate", to: "4")
        #expect(throws: EmulatorOptionError.self) { try options.set("stream", to: "square") }
        var model = try #require(EmulatorCatalog.make(name: name, options: options))
        #expect(model.tickInterval == 0.25)
        var text: [UInt8] = []
        for now in stride(from: 0.0, through: 3.0, by: 0.25) {
            for output in model.tick(now: now) {
                #expect(output.bytes.count <= 20, "notifications of at most 20 bytes before the MTU is known")
                text += output.bytes
            }
        }
        #expect(String(decoding: text, as: UTF8.self) == (0...12).map { "counter=\($0)\n" }.joined())
        // Without the option they stay quiet.
        var quiet = try #require(EmulatorCatalog.make(name: name, options: EmulatorOptions()))
        #expect(quiet.tick(now: 0).isEmpty && quiet.tick(now: 10).isEmpty)
    }
}
