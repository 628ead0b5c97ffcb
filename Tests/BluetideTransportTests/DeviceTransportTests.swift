import BluetideHCI
import Testing
@testable import BluetideTransport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Serial and user-channel transports cannot reach hardware here: these pin their error messages.
@Suite struct DeviceTransportTests {
    @Test func userChannelBusySaysHowToFreeTheAdapter() {
        for code in [EBUSY, EALREADY] {
            let text = HCISocketTransport.bindFailureMessage(errno: code, index: 1)
            #expect(text.hasPrefix("hci-socket:1: hci1 is up or held by bluetoothd"))
            #expect(text.contains("sudo hciconfig hci1 down"))
            #expect(text.contains("sudo systemctl stop bluetooth"))
        }
    }

    @Test func userChannelPermissionNamesTheCapability() {
        let text = HCISocketTransport.bindFailureMessage(errno: EPERM, index: 0)
        #expect(text.contains("CAP_NET_ADMIN"))
        #expect(text.contains("setcap cap_net_admin+ep"))
        #expect(HCISocketTransport.socketFailureMessage(errno: EPERM, index: 0).contains("CAP_NET_ADMIN"))
    }

    @Test func userChannelOtherFailures() {
        #expect(HCISocketTransport.bindFailureMessage(errno: ENODEV, index: 3).contains("there is no adapter hci3"))
        #expect(HCISocketTransport.bindFailureMessage(errno: EUSERS, index: 0).contains("already holds the user channel"))
        #expect(HCISocketTransport.socketFailureMessage(errno: EAFNOSUPPORT, index: 0).contains("no Bluetooth sockets"))
    }

    @Test func openingTheUserChannelHereFailsWithAnExplanation() async {
        // No adapter in the test machine: whatever the reason, it is an openFailed naming the spec.
        do {
            let transport = try await Transport.open("hci-socket:200")
            await transport.close()
            Issue.record("hci200 opened")
        } catch let error as TransportError {
            #expect(error.description.hasPrefix("hci-socket:200: "))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func serialMissingDevice() async {
        await #expect(throws: TransportError.openFailed(
            "serial:/dev/ttyBLUETIDE9,1000000: no device /dev/ttyBLUETIDE9. Is the board plugged in? List candidates with: ls /dev/ttyACM* /dev/ttyUSB*"
        )) {
            _ = try await Transport.open("serial:/dev/ttyBLUETIDE9")
        }
    }

    @Test func serialRejectsANonTerminal() async {
        await #expect(throws: TransportError.openFailed("serial:/dev/null,115200,rtscts: /dev/null is not a serial (terminal) device")) {
            _ = try await Transport.open("serial:/dev/null,115200,rtscts")
        }
    }

    @Test func serialPermissionMessage() {
        let text = SerialTransport.openFailureMessage(errno: EACCES, path: "/dev/ttyACM0", name: "serial:/dev/ttyACM0,1000000")
        #expect(text.contains("dialout"))
    }

    @Test func fileDescriptorTransportFramesASocketPair() async throws {
        // A UNIX socket pair stands in for a UART: bytes in, packets out, garbage ends the stream.
        var ends: [Int32] = [-1, -1]
        #if os(Linux)
        let type = Int32(SOCK_STREAM.rawValue)
        #else
        let type = SOCK_STREAM
        #endif
        #expect(socketpair(AF_UNIX, type, 0, &ends) == 0)
        let transport = try FileDescriptorTransport(fd: ends[0], name: "test-fd")
        let event = HCIPacket.event(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00])
        for byte in event.h4Bytes + [0x42] {
            var b = byte
            #expect(write(ends[1], &b, 1) == 1)
        }
        var packets = transport.packets.makeAsyncIterator()
        #expect(try await packets.next() == event)
        let ended4 = await nextError(&packets)
        #expect(isFramingError(ended4, type: 0x42, offset: 7))
        try await transport.send(.command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: []))
        var reply = [UInt8](repeating: 0, count: 8)
        #expect(read(ends[1], &reply, 8) == 4)
        #expect(reply.prefix(4) == [0x01, 0x03, 0x0C, 0x00])
        await transport.close()
        await #expect(throws: TransportError.closed("test-fd")) {
            try await transport.send(event)
        }
        close(ends[1])
    }

    @Test func fileDescriptorTransportEndsWhenThePeerHangsUp() async throws {
        var ends: [Int32] = [-1, -1]
        #if os(Linux)
        let type = Int32(SOCK_STREAM.rawValue)
        #else
        let type = SOCK_STREAM
        #endif
        #expect(socketpair(AF_UNIX, type, 0, &ends) == 0)
        let transport = try FileDescriptorTransport(fd: ends[0], name: "test-fd")
        close(ends[1])
        var packets = transport.packets.makeAsyncIterator()
        let ended5 = await nextError(&packets)
        #expect(ended5 as? TransportError == TransportError.closedByPeer("test-fd"))
        await transport.close()
    }
}

@Suite struct PipeAndReceiverTests {
    @Test func pipeCarriesPacketsBothWaysAndReportsClosing() async throws {
        let (host, controller) = PipeTransport.makePair()
        let reset = HCIPacket.command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: [])
        let complete = HCIPacket.event(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00])
        try await host.send(reset)
        try await controller.send(complete)
        var atController = controller.packets.makeAsyncIterator()
        var atHost = host.packets.makeAsyncIterator()
        #expect(try await atController.next() == reset)
        #expect(try await atHost.next() == complete)
        await controller.close()
        let ended6 = await nextError(&atHost)
        #expect(ended6 as? TransportError == TransportError.closedByPeer("pipe controller end"))
        #expect(try await atController.next() == nil)
        await #expect(throws: TransportError.closed("pipe host end")) { try await host.send(reset) }
    }

    @Test func receiverFramesOneByteAtATime() async throws {
        let inbox = InboundPackets(name: "test")
        let stream = inbox.packets
        var receiver = H4PacketReceiver(inbox: inbox)
        let packets: [HCIPacket] = [
            .event(code: 0x13, parameters: [0x01, 0x01, 0x00, 0x01, 0x00]),
            .acl(handle: 0x0EFF, boundary: .continuing, broadcast: 0, data: [1, 2, 3]),
            .iso(header: 0x1234, data: [9]),
            .sco(handle: 2, data: []),
        ]
        for byte in packets.flatMap(\.h4Bytes) {
            let accepted = receiver.receive([byte])
            #expect(accepted)
        }
        let garbage = receiver.receive([0x07])
        let after = receiver.receive([0x04])
        #expect(!garbage && !after)
        var received: [HCIPacket] = []
        do {
            for try await packet in stream { received.append(packet) }
            Issue.record("no error")
        } catch let error as H4FramingError {
            #expect(error.packetType == 0x07)
        }
        #expect(received == packets)
    }
}

/// The serial transport over a pseudo-terminal: the real open, termios and framing path.
#if os(Linux)
@Suite struct SerialOverPTYTests {
    /// Opens a pseudo-terminal pair through /dev/ptmx; returns the master fd and the slave's path.
    static func openPTY() throws -> (Int32, String) {
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        try #require(master >= 0)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        let TIOCSPTLCK: UInt = 0x4004_5431
        let TIOCGPTN: UInt = 0x8004_5430
        #expect(ioctl(master, TIOCSPTLCK, &unlock) == 0)
        #expect(ioctl(master, TIOCGPTN, &number) == 0)
        return (master, "/dev/pts/\(number)")
    }

    @Test func serialTransportOverAPseudoTerminal() async throws {
        let (master, path) = try Self.openPTY()
        defer { close(master) }
        let transport = try SerialTransport.open(path: path, baudRate: 115_200, rtsCts: false)
        #expect(transport.name == "serial:\(path),115200")

        // Controller to host: an event written in two pieces arrives as one packet.
        let event = HCIPacket.event(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00])
        let bytes = event.h4Bytes
        #expect(write(master, bytes, 3) == 3)
        #expect(bytes.dropFirst(3).withUnsafeBufferPointer { write(master, $0.baseAddress, $0.count) } == 4)
        var packets = transport.packets.makeAsyncIterator()
        #expect(try await packets.next() == event)

        // Host to controller: raw bytes, no line-discipline translation (0x0A stays 0x0A).
        let command = HCIPacket.command(opcode: HCIOpcode(rawValue: 0x0C0A), parameters: [0x0A, 0x0D, 0x00])
        try await transport.send(command)
        var reply = [UInt8](repeating: 0, count: 16)
        var received: [UInt8] = []
        while received.count < command.h4Bytes.count {
            let n = read(master, &reply, reply.count)
            try #require(n > 0)
            received += reply[0..<n]
        }
        #expect(received == command.h4Bytes)
        await transport.close()
    }
}
#endif

@Suite struct ReceiverRobustnessTests {
    @Test func randomByteStreamsNeverTrapAndEndCleanly() async throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let inbox = InboundPackets(name: "test")
            let stream = inbox.packets
            var receiver = H4PacketReceiver(inbox: inbox)
            // Mostly valid packets with random damage, fed in random chunks.
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                let data = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                bytes += HCIPacket.acl(handle: 1, boundary: .firstFlushable, broadcast: 0, data: data).h4Bytes
            }
            if !bytes.isEmpty, Bool.random(using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + Int.random(in: 1...9, using: &generator))
                receiver.receive(bytes[offset..<end])
                offset = end
            }
            receiver.finish()
            var count = 0
            do {
                for try await _ in stream { count += 1 }
            } catch is H4FramingError {
                // garbage: the stream ended with the framing error
            }
            #expect(count <= 6)
        }
    }
}
