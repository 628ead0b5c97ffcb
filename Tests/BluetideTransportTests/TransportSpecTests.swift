import Testing
import BluetideHCI
@testable import BluetideTransport

@Suite struct TransportSpecTests {
    @Test(arguments: [
        ("tcp-client:127.0.0.1:9000", TransportSpec(.tcpClient(host: "127.0.0.1", port: 9000))),
        ("tcp-client:localhost:1", TransportSpec(.tcpClient(host: "localhost", port: 1))),
        ("tcp-client:[::1]:9001", TransportSpec(.tcpClient(host: "::1", port: 9001))),
        ("tcp-server:_:9001", TransportSpec(.tcpServer(host: nil, port: 9001))),
        ("tcp-server:127.0.0.1:0", TransportSpec(.tcpServer(host: "127.0.0.1", port: 0))),
        ("serial:/dev/ttyACM0", TransportSpec(.serial(path: "/dev/ttyACM0", baudRate: 1_000_000, rtsCts: false))),
        ("serial:/dev/ttyUSB1,115200", TransportSpec(.serial(path: "/dev/ttyUSB1", baudRate: 115_200, rtsCts: false))),
        ("serial:/dev/ttyACM0,3000000,rtscts", TransportSpec(.serial(path: "/dev/ttyACM0", baudRate: 3_000_000, rtsCts: true))),
        ("serial:/dev/ttyACM0,rtscts", TransportSpec(.serial(path: "/dev/ttyACM0", baudRate: 1_000_000, rtsCts: true))),
        ("hci-socket:0", TransportSpec(.hciSocket(index: 0))),
        ("hci-socket:12", TransportSpec(.hciSocket(index: 12))),
        ("hci-socket", TransportSpec(.hciSocket(index: 0))),
        ("virtual", TransportSpec(.virtual(name: nil))),
        ("virtual:lab", TransportSpec(.virtual(name: "lab"))),
        ("virtual+snoop:x.btsnoop", TransportSpec(.virtual(name: nil), snoopPath: "x.btsnoop")),
        ("tcp-client:127.0.0.1:9000+snoop:/tmp/a b.log", TransportSpec(.tcpClient(host: "127.0.0.1", port: 9000), snoopPath: "/tmp/a b.log")),
        ("serial:/dev/ttyACM0,115200+snoop:s.btsnoop", TransportSpec(.serial(path: "/dev/ttyACM0", baudRate: 115_200, rtsCts: false), snoopPath: "s.btsnoop")),
    ])
    func parsesGoodSpecs(text: String, expected: TransportSpec) throws {
        let spec = try TransportSpec(parsing: text)
        #expect(spec == expected)
        // The description parses back to the same spec.
        #expect(try TransportSpec(parsing: spec.description) == spec)
    }

    @Test(arguments: [
        ("usb:0", "unknown transport \"usb\"", "tcp-client:127.0.0.1:9000"),
        ("", "empty transport name", "tcp-client:127.0.0.1:9000"),
        ("tcp-client:localhost", "tcp-client needs HOST:PORT", "tcp-client:127.0.0.1:9000"),
        ("tcp-client", "tcp-client needs HOST:PORT", "tcp-client:127.0.0.1:9000"),
        ("tcp-client:_:9000", "needs a host to connect to, not _", "tcp-client:127.0.0.1:9000"),
        ("tcp-client:127.0.0.1:0", "port must be a number from 1 to 65535, found \"0\"", "tcp-client:127.0.0.1:9000"),
        ("tcp-client:127.0.0.1:http", "found \"http\"", "tcp-client:127.0.0.1:9000"),
        ("tcp-server::9000", "needs a host before the port (_ for this computer only, 0.0.0.0 for every interface)", "tcp-server:_:9000"),
        ("tcp-server:_:70000", "port must be a number from 0 to 65535, found \"70000\"", "tcp-server:_:9000"),
        ("serial:", "serial needs a device path", "serial:/dev/ttyACM0,1000000,rtscts"),
        ("serial:/dev/ttyACM0,12345", "unsupported baud rate 12345", "serial:/dev/ttyACM0,1000000,rtscts"),
        ("serial:/dev/ttyACM0,4000000", "unsupported baud rate 4000000", "serial:/dev/ttyACM0,1000000,rtscts"),
        ("serial:/dev/ttyACM0,115200,parity", "unknown serial option \"parity\"", "serial:/dev/ttyACM0,1000000,rtscts"),
        ("hci-socket:x", "hci-socket needs the adapter number N of hciN (0-65534), found \"x\"", "hci-socket:0"),
        ("hci-socket:65535", "found \"65535\"", "hci-socket:0"),
        ("virtual:", "needs a link name", "virtual:lab"),
        ("virtual+snoop:", "+snoop: needs a file name", "tcp-client:127.0.0.1:9000+snoop:capture.btsnoop"),
        ("virtual+trace:x", "the only option after + is snoop:FILE", "virtual+snoop:capture.btsnoop"),
    ])
    func rejectsBadSpecsWithAClearError(text: String, problem: String, example: String) {
        do {
            _ = try TransportSpec(parsing: text)
            Issue.record("\(text) parsed")
        } catch {
            #expect(error.spec == text)
            #expect(error.problem.contains(problem), "\(error.problem)")
            #expect(error.example == example)
            #expect(error.description.hasPrefix("bad transport \"\(text)\": "))
            // The example offered is itself valid.
            #expect((try? TransportSpec(parsing: error.example)) != nil)
        }
    }

    @Test func unknownSchemeListsEverySyntax() {
        do {
            _ = try TransportSpec(parsing: "ws-client:x")
            Issue.record("ws-client parsed")
        } catch {
            for word in ["tcp-client:HOST:PORT", "tcp-server:HOST:PORT", "serial:DEVICE", "hci-socket:N", "virtual", "+snoop:FILE"] {
                #expect(error.problem.contains(word))
            }
        }
    }

    @Test func virtualOpensAControllerOnTheNamedLinkThatAnswersReset() async throws {
        let transport = try await Transport.open("virtual:spec-test")
        var packets = transport.packets.makeAsyncIterator()
        try await transport.send(.command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: []))
        let answer = try await packets.next()
        #expect(answer == .event(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00]))
        await transport.close()
        await #expect(throws: TransportError.self) {
            try await transport.send(.command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: []))
        }
    }
}
