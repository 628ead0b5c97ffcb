import BluetideBase
import BluetideHost
import BluetideTransport
import Foundation

/// One side of Bumble's bench on its own host stack, and both sides in one process: what
/// `bluetide bench central|peripheral|loopback` run.
public enum BumbleBenchSide {
    /// Parses a random static address; `option` names where it came from in the error.
    public static func ownAddress(_ text: String, option: String) throws(BenchFailure) -> BluetoothAddress {
        guard let address = try? BluetoothAddress(text, type: .random), address.randomKind == .static else {
            throw BenchFailure("\(option) \(text): expected a random static address (six hex bytes, the first one C0 to FF), like \(BumbleBenchService.centralAddress)")
        }
        return BluetoothAddress(value: address.value, type: .random)
    }

    /// Runs one side on a host stack over `transport`: starts it, sets up the link for `role`
    /// (the central finds `peer`, an address or a name; the peripheral advertises `name`), runs
    /// `settings`, closes. `attMTU` is offered (23–517); `timeout` (seconds) bounds finding,
    /// connecting and waiting for the first packet. Returns one report per run.
    public static func run(
        role: BumbleBenchRole, transport: any HCITransport, address: BluetoothAddress, peer: String, name: String,
        attMTU: Int, timeout: Double, settings: BumbleBenchSettings, log: @escaping @Sendable (String) -> Void
    ) async throws -> [BumbleBenchReport] {
        let inbox = BumbleBenchInbox()
        let stack = HostStack(
            transport: transport,
            configuration: .init(
                randomAddress: address, deviceName: name,
                services: role == .peripheral ? [BumbleBenchServerLink.service(feeding: inbox)] : [],
                localMTU: attMTU))
        do {
            try await stack.start()
        } catch {
            await stack.close()
            throw BenchFailure("the controller did not start: \(error)")
        }
        do {
            let link: any BumbleBenchLink = switch role {
            case .central:
                try await BumbleBenchClientLink.connect(stack: stack, peer: peer, attMTU: attMTU, timeout: timeout, log: log)
            case .peripheral:
                try await BumbleBenchServerLink.accept(stack: stack, name: name, inbox: inbox, timeout: timeout, log: log)
            }
            log("running \(settings.scenario.rawValue) as \(role.rawValue)")
            let runner = BumbleBenchRunner(role: role, settings: settings, firstPacketTimeout: timeout + settings.startDelaySeconds, progress: log)
            let reports: [BumbleBenchReport]
            do {
                reports = try await runner.run(on: link)
            } catch {
                await link.close()
                throw error
            }
            // A receiver's last ACK may still be queued: give it a moment before leaving.
            if !settings.scenario.originatesPackets { try? await Task.sleep(for: .milliseconds(500)) }
            await link.close()
            await stack.close()
            return reports
        } catch {
            await stack.close()
            throw error
        }
    }

    /// Runs both sides on a fresh in-process virtual link; returns the central's reports, then
    /// the peripheral's. When one side fails, the other is stopped and the cause is thrown (not
    /// the other side's "link lost").
    public static func loopback(
        central: BumbleBenchSettings, peripheral: BumbleBenchSettings, attMTU: Int, timeout: Double,
        log: @escaping @Sendable (String) -> Void
    ) async throws -> [BumbleBenchReport] {
        let linkName = "bench-\(UUID().uuidString)"
        let peripheralTransport = await VirtualTransport.attach(toLinkNamed: linkName)
        let centralTransport = await VirtualTransport.attach(toLinkNamed: linkName)
        let peripheralAddress = try ownAddress(BumbleBenchService.peripheralAddress, option: "peripheral")
        let centralAddress = try ownAddress(BumbleBenchService.centralAddress, option: "central")
        let outcomes = await withTaskGroup(of: (BumbleBenchRole, Result<[BumbleBenchReport], any Error>).self) { group in
            group.addTask {
                do {
                    return (.peripheral, .success(try await run(
                        role: .peripheral, transport: peripheralTransport, address: peripheralAddress, peer: "",
                        name: BumbleBenchService.peripheralName, attMTU: attMTU, timeout: timeout, settings: peripheral, log: log)))
                } catch {
                    return (.peripheral, .failure(error))
                }
            }
            group.addTask {
                do {
                    return (.central, .success(try await run(
                        role: .central, transport: centralTransport, address: centralAddress,
                        peer: BumbleBenchService.peripheralName, name: "Bluetide Bench Central", attMTU: attMTU, timeout: timeout,
                        settings: central, log: log)))
                } catch {
                    return (.central, .failure(error))
                }
            }
            var byRole: [BumbleBenchRole: Result<[BumbleBenchReport], any Error>] = [:]
            for await (role, outcome) in group {
                byRole[role] = outcome
                // One side failed: the other would only wait for its timeouts.
                if case .failure = outcome { group.cancelAll() }
            }
            return byRole
        }
        // When one side fails, the other fails too, only because the link ended or it was
        // cancelled: report the cause.
        let failures: [any Error] = [BumbleBenchRole.central, .peripheral].compactMap { role in
            if case let .failure(error) = outcomes[role] { return error }
            return nil
        }
        func rank(_ error: any Error) -> Int {
            if error is CancellationError { return 3 }
            if let failure = error as? BenchFailure { return failure.isLinkLoss ? 2 : 0 }
            return 1
        }
        if let cause = failures.min(by: { rank($0) < rank($1) }) { throw cause }
        return [BumbleBenchRole.central, .peripheral].flatMap { role in (try? outcomes[role]?.get()) ?? [] }
    }
}
