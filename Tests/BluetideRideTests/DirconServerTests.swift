import BluetideRide
import BluetideSupport
import Foundation
import Testing

/// The DIRCON server's refusals, typed (the CLI names its options around them).
@Suite struct DirconServerTests {
    static func bridge() -> DirconBridge {
        DirconBridge(session: RideSession(source: RecordedRideSource(records: [], pace: .asFastAsPossible, clock: ContinuousClock())))
    }

    @Test func aPortOutOfRangeIsRefusedBeforeAnySocket() {
        #expect(throws: DirconServerError.portOutOfRange(70_000)) { try DirconServer(bridge: Self.bridge(), host: "127.0.0.1", port: 70_000) }
        #expect(throws: DirconServerError.portOutOfRange(-1)) { try DirconServer(bridge: Self.bridge(), host: "127.0.0.1", port: -1) }
    }

    @Test func aPortInUseOrAHostThatIsNotAnAddressCannotListen() async throws {
        let first = try DirconServer(bridge: Self.bridge(), host: "127.0.0.1", port: 0)
        #expect(first.port != 0, "a free port was picked")
        do {
            _ = try DirconServer(bridge: Self.bridge(), host: "127.0.0.1", port: Int(first.port))
            Issue.record("a second listener on the same port")
        } catch {
            guard case let .cannotListen(host, port, _) = error else { Issue.record("\(error)"); return }
            #expect(host == "127.0.0.1" && port == Int(first.port))
        }
        do {
            _ = try DirconServer(bridge: Self.bridge(), host: "gym.local", port: 0)
            Issue.record("a host name was taken as an address")
        } catch {
            guard case .cannotListen = error else { Issue.record("\(error)"); return }
            #expect(error.description.hasPrefix("cannot listen on gym.local:0: "))
        }
        await first.stop()
    }
}
