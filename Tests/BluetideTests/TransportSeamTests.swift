import BluetideTestSupport
import BluetideTransport
import BluetideHCI
import Synchronization
import Testing
@testable import Bluetide

/// A transport added from outside the package (issue 22, open seams): registered once as a
/// ``TransportScheme``, opened by spec like a built-in one, or handed to ``Bluetooth/start(on:spec:configuration:)``.
@Suite(.timeLimit(.minutes(2))) struct TransportSeamTests {
    /// A test double: a virtual-link controller whose packets are counted both ways.
    final class CountingTransport: HCITransport {
        let inner: VirtualTransport
        let sent = Mutex(0)
        let received = Mutex(0)
        init(_ inner: VirtualTransport) { self.inner = inner }
        var packets: AsyncThrowingStream<HCIPacket, any Error> {
            let source = inner.packets
            return AsyncThrowingStream { continuation in
                let task = Task {
                    do {
                        for try await packet in source {
                            self.received.withLock { $0 += 1 }
                            continuation.yield(packet)
                        }
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: error)
                    }
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }
        func send(_ packet: HCIPacket) async throws {
            sent.withLock { $0 += 1 }
            try await inner.send(packet)
        }
        func close() async { await inner.close() }
    }

    /// `counted:LINK` opens a ``CountingTransport`` on virtual link LINK.
    final class CountingScheme: TransportScheme {
        let name: String
        var syntax: String { "\(name):LINK" }
        let opened = Mutex<[CountingTransport]>([])
        init(name: String) { self.name = name }
        func validate(argument: String?) throws {
            guard let argument, !argument.isEmpty else { throw SchemeError(text: "\(name) needs a virtual link name after the colon") }
        }
        func open(argument: String?) async throws -> any HCITransport {
            let transport = CountingTransport(await VirtualTransport.attach(toLinkNamed: argument ?? "default"))
            opened.withLock { $0.append(transport) }
            return transport
        }
    }

    struct SchemeError: Error, CustomStringConvertible {
        let text: String
        var description: String { text }
    }

    @Test func aRegisteredSchemeOpensBySpecAndCarriesTheReadmeCentral() async throws {
        let scheme = CountingScheme(name: "counted-\(UInt32.random(in: 0...UInt32.max))")
        try TransportRegistry.register(scheme)
        defer { TransportRegistry.unregister(scheme.name) }
        let link = uniqueLinkName()
        #expect(try TransportSpec(parsing: "\(scheme.name):\(link)").kind == .registered(scheme: scheme.name, argument: link))
        #expect(try TransportSpec(parsing: "\(scheme.name):\(link)+snoop:x.btsnoop").description == "\(scheme.name):\(link)+snoop:x.btsnoop")
        #expect(TransportSpec.syntaxSummary.contains("\(scheme.name):LINK"), "help texts list the added scheme")

        let strap = Task { try await serveHeartRateStrap(transport: "virtual:\(link)", name: "Seam HRM", beats: [70, 72]) }
        defer { strap.cancel() }
        let watched = try await within(60, "the README's central over the added transport") {
            try await watchHeartRate(transport: "\(scheme.name):\(link)", name: "Seam HRM", count: 2)
        }
        #expect(watched.measurements.map(\.beatsPerMinute) == [70, 72])
        let transports = scheme.opened.withLock { $0 }
        #expect(transports.count == 1)
        #expect(transports.allSatisfy { $0.sent.withLock { $0 } > 10 && $0.received.withLock { $0 } > 10 })
    }

    @Test func aBadArgumentFailsWhenTheSpecIsParsed() throws {
        let scheme = CountingScheme(name: "counted-\(UInt32.random(in: 0...UInt32.max))")
        try TransportRegistry.register(scheme)
        defer { TransportRegistry.unregister(scheme.name) }
        let error = #expect(throws: TransportSpecError.self) { try TransportSpec(parsing: "\(scheme.name):") }
        #expect(error?.description == "bad transport \"\(scheme.name):\": \(scheme.name) needs a virtual link name after the colon (example: \(scheme.name):LINK)")
    }

    @Test func builtInDuplicateAndMalformedNamesAreRefused() throws {
        #expect(throws: TransportRegistryError.builtIn("virtual")) { try TransportRegistry.register(CountingScheme(name: "virtual")) }
        #expect(throws: TransportRegistryError.badName("Has Space")) { try TransportRegistry.register(CountingScheme(name: "Has Space")) }
        let name = "counted-\(UInt32.random(in: 0...UInt32.max))"
        try TransportRegistry.register(CountingScheme(name: name))
        defer { TransportRegistry.unregister(name) }
        #expect(throws: TransportRegistryError.alreadyRegistered(name)) { try TransportRegistry.register(CountingScheme(name: name)) }
        // Once unregistered, the spec is unknown again and the error lists what is accepted.
        TransportRegistry.unregister(name)
        #expect(throws: TransportSpecError.self) { try TransportSpec(parsing: "\(name):x") }
    }

    @Test func aTransportOpenedByTheCallerStartsAHost() async throws {
        let link = uniqueLinkName()
        let double = CountingTransport(await VirtualTransport.attach(toLinkNamed: link))
        let bluetooth = try await Bluetooth.start(on: double, spec: "counting double", configuration: .testing)
        #expect(bluetooth.transportSpec == "counting double")
        #expect(double.sent.withLock { $0 } > 0 && double.received.withLock { $0 } > 0, "the host reset and set up the controller through it")
        await bluetooth.close()
    }
}
