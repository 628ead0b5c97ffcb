import ArgumentParser
import Bluetide
import BluetideRing
import BluetideTransport
import Foundation

/// Options every `ring` command that talks to the ring shares: where the controller is, which
/// ring, and where the remembered ring lives.
struct RingConnectionOptions: ParsableArguments {
    @Option(name: .long, help: "Controller transport (default: the one the ring was paired on, else virtual): \(TransportSpec.syntaxSummary)")
    var transport: String?

    @Option(name: .long, help: ArgumentHelp("Start an emulated ring first: colmi-r02, colmi-r03, colmi-r06, colmi-r09, colmi-r10, colmi-r11, colmi-r12, colmi-h59. Remembered by `ring pair`.", valueName: "profile"))
    var emulate: String?

    @Option(name: .long, help: ArgumentHelp("The ring to use instead of the paired one: ADDRESS/R, ADDRESS/P or its name.", valueName: "ring"))
    var device: String?

    @Option(name: .long, help: "Seconds to find and connect to the ring.")
    var timeout: Double = 10

    @Option(name: .customLong("pairing-file"), help: .hidden)
    var pairingFile: String?

    /// The remembered-ring file in use.
    var pairing: RingPairingFile { RingPairingFile(url: pairingFile.map { URL(fileURLWithPath: $0) }) }

    /// The device-session options: given ones first, then the remembered ring's.
    func sessionOptions(remembered: RingPairing?) throws -> DeviceSessionOptions {
        let transport = transport ?? remembered?.transport ?? "virtual"
        // The remembered emulation only applies on the remembered transport.
        let emulate = emulate ?? (self.transport == nil || self.transport == remembered?.transport ? remembered?.emulate : nil)
        var arguments = ["--transport", transport]
        if let emulate { arguments += ["--emulate", emulate] }
        do { return try DeviceSessionOptions.parse(arguments) } catch {
            throw CommandFailure("cannot use --transport \(transport): \(DeviceSessionOptions.message(for: error))")
        }
    }

    func check() throws {
        guard timeout.isFinite, timeout > 0 else { throw CommandFailure("--timeout \(timeout): expected seconds > 0, e.g. --timeout 10") }
    }

    /// Connects to the ring (the `--device` one, else the paired one) and opens a session.
    func open(options: Ring.Options = Ring.Options()) async throws -> RingLink {
        try check()
        let remembered: RingPairing?
        do { remembered = try pairing.load() } catch { throw CommandFailure("\(error)") }
        guard let target = device ?? remembered?.address.description else {
            throw CommandFailure("no ring picked yet: run `bluetide ring pair` first (or pass --device ADDRESS/R)")
        }
        let session = try await DeviceSession.open(try sessionOptions(remembered: remembered))
        do {
            var (connection, label) = try await session.connect(target, timeout: timeout)
            if device == nil, let remembered { label = remembered.label }
            let name = device == nil ? remembered?.name : nil
            let address = connection.address
            do {
                let ring = try await Ring.open(connection, options: options)
                return RingLink(session: session, ring: ring, label: label, device: JSONOutput.device(address, name: name))
            } catch {
                await connection.disconnect()
                throw CommandFailure("\(label): \(error)")
            }
        } catch let failure as CommandFailure {
            await session.close()
            if remembered != nil, device == nil, failure.message.hasPrefix("cannot connect") {
                throw CommandFailure("\(failure.message) (the paired ring: is it charged, nearby and not connected to a phone?)")
            }
            throw failure
        } catch {
            await session.close()
            throw CommandFailure("\(error)")
        }
    }
}

/// An open ring session and the device session under it.
struct RingLink {
    let session: DeviceSession
    let ring: Ring
    let label: String
    /// The ring as `--json` records name it: address, address type, and its name when remembered.
    let device: JSONOutputValue

    /// Runs `body` with the ring, then closes the session (stopping measurements) and the link,
    /// also when `body` throws; ring errors become one-line failures.
    func use<T>(_ body: (Ring) async throws -> T) async throws -> T {
        let result: T
        do { result = try await body(ring) } catch {
            await close()
            if let failure = error as? CommandFailure { throw failure }
            throw CommandFailure("\(label): \(error)")
        }
        await close()
        return result
    }

    func close() async {
        await ring.close()
        await session.close()
    }
}

extension DeviceSessionOptions {
    /// The text of a parse error (ArgumentParser wraps ours).
    static func message(for error: any Error) -> String {
        if let failure = error as? CommandFailure { return failure.message }
        return DeviceSessionOptions.fullMessage(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
    }
}

/// The ring commands' `--json` records (docs/json-output.md): an `Encodable` value's fields plus
/// `type` and, when there is one, the ring as `device`; field names spelled as the schema wants.
enum RingJSON {
    static func line(_ type: String, device: JSONOutputValue? = nil, _ value: some Encodable) -> String {
        var fields: [String: JSONOutputValue] = [:]
        if case let .object(members) = JSONOutputValue.encoding(value) { fields = members }
        if let device { fields["device"] = device }
        return JSONOutput.line(type, fields)
    }
}
