import Bluetide
import BluetideDBus
import Foundation
import Synchronization

/// Bluetide's pairing agent for bluetoothd (`org.bluez.Agent1`, exported on our connection,
/// registered with `AgentManager1` and made the default agent): bluetoothd's questions become
/// ``PairingPrompt``s — the same ones the own host asks, answered by the same code (the
/// command line's `--pairing` or its terminal prompts).
///
/// - `RequestPasskey` → ``PairingPrompt/Kind/enterPasskey``, `DisplayPasskey` →
///   ``PairingPrompt/Kind/displayPasskey(_:)`` (once per pairing; bluetoothd repeats it as keys
///   are typed), `RequestConfirmation` → ``PairingPrompt/Kind/confirmNumber(_:)``.
/// - `RequestAuthorization` (Just Works that the peer started) is answered from the policy:
///   accepted when this host is pairable and does not require MITM protection.
/// - `Cancel` cancels the question pending; an unanswered one is refused after the policy's
///   time limit (bluetoothd gives up on its side after 60 s).
///
/// The method each device paired with is remembered, so a link's level can be told when
/// bluetoothd's key store cannot be read (see ``BlueZSecurity``).
final class BlueZAgent: Sendable {
    /// The object path we export (one agent per process).
    static var path: String { "/org/bluetide/agent\(getpid())" }
    static let interface = "org.bluez.Agent1"
    static let managerInterface = "org.bluez.AgentManager1"

    /// How a device paired, as far as the agent saw.
    enum Method: Sendable, Equatable {
        case numericComparison
        case passkey
        case justWorks
    }

    private struct Pending {
        var next = 0
        var answers: [Int: CheckedContinuation<PairingPrompt.Answer?, Never>] = [:]
        /// Questions ended before their continuation was stored (a late answer is dropped).
        var finished: Set<Int> = []
        /// The passkey last shown per device (DisplayPasskey repeats for each key typed).
        var shown: [String: UInt32] = [:]
        var methods: [String: Method] = [:]
    }

    let bus: DBusConnection
    let policy: PairingPolicy
    /// The prompts, for ``Bluetooth/pairingPrompts``.
    let prompts: AsyncStream<PairingPrompt>
    private let continuation: AsyncStream<PairingPrompt>.Continuation
    private let pending = Mutex(Pending())

    init(bus: DBusConnection, policy: PairingPolicy) {
        self.bus = bus
        self.policy = policy
        (prompts, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// BlueZ's name for the policy's IO capability.
    static func capability(_ io: IOCapability) -> String {
        switch io {
        case .displayOnly: "DisplayOnly"
        case .displayYesNo: "DisplayYesNo"
        case .keyboardOnly: "KeyboardOnly"
        case .noInputNoOutput: "NoInputNoOutput"
        case .keyboardDisplay: "KeyboardDisplay"
        }
    }

    /// Exports the agent, registers it with bluetoothd's capability for the policy and makes it
    /// the default agent (the one the kernel's pairing asks), so pairing started by bluetoothd
    /// itself (a value that needs security) is answered here too.
    func register() async throws {
        try bus.export(path: Self.path) { [weak self] message in
            guard let self else { throw DBusError("agent gone", name: "org.bluez.Error.Canceled") }
            return try await self.handle(message)
        }
        do {
            _ = try await bus.call(
                destination: BlueZ.service, path: "/org/bluez", interface: Self.managerInterface, member: "RegisterAgent",
                arguments: [.objectPath(Self.path), .string(Self.capability(policy.ioCapability))], timeout: .seconds(5))
            _ = try await bus.call(
                destination: BlueZ.service, path: "/org/bluez", interface: Self.managerInterface, member: "RequestDefaultAgent",
                arguments: [.objectPath(Self.path)], timeout: .seconds(5))
        } catch {
            bus.unexport(path: Self.path)
            throw error
        }
    }

    /// Unregisters (bluetoothd also drops the agent when our connection closes) and refuses
    /// what is still pending.
    func unregister() async {
        _ = try? await bus.call(
            destination: BlueZ.service, path: "/org/bluez", interface: Self.managerInterface, member: "UnregisterAgent",
            arguments: [.objectPath(Self.path)], timeout: .seconds(2))
        bus.unexport(path: Self.path)
        cancelAll()
        continuation.finish()
    }

    /// The method `device` (an object path) last paired with, as seen by this agent.
    func method(of device: String) -> Method? { pending.withLock { $0.methods[device] } }

    /// Forgets what was seen of `device` before a new pairing.
    func forget(_ device: String) {
        pending.withLock { state in
            state.methods[device] = nil
            state.shown[device] = nil
        }
    }

    private func cancelAll() {
        let waiting = pending.withLock { state in
            defer { state.answers = [:] }
            return Array(state.answers.values)
        }
        for answer in waiting { answer.resume(returning: nil) }
    }

    /// One call from bluetoothd.
    func handle(_ message: DBusMessage) async throws -> [DBusValue] {
        let device = message.body.first?.string ?? ""
        switch message.member {
        case "Release":
            cancelAll()
            return []
        case "Cancel":
            cancelAll()
            return []
        case "RequestPinCode", "DisplayPinCode":
            // PIN codes belong to BR/EDR pairing, which this agent does not do.
            throw DBusError("Bluetide's agent pairs LE devices only (no PIN codes)", name: "org.bluez.Error.Rejected")
        case "AuthorizeService":
            return []
        case "RequestAuthorization":
            pending.withLock { $0.methods[device] = .justWorks }
            guard policy.pairable, !policy.requiresMITM else {
                throw DBusError(
                    policy.pairable ? "Just Works refused: the pairing policy requires MITM protection" : "this host is not pairable",
                    name: "org.bluez.Error.Rejected")
            }
            return []
        case "RequestPasskey":
            pending.withLock { $0.methods[device] = .passkey }
            guard case let .passkey(passkey?) = await ask(.enterPasskey, device: device) else {
                throw DBusError("passkey entry cancelled", name: "org.bluez.Error.Canceled")
            }
            return [.uint32(passkey)]
        case "DisplayPasskey":
            let passkey = message.body.dropFirst().first?.integer.flatMap { UInt32(exactly: $0) } ?? 0
            let first = pending.withLock { state -> Bool in
                state.methods[device] = .passkey
                defer { state.shown[device] = passkey }
                return state.shown[device] != passkey
            }
            if first {
                let address = await Self.address(of: device, on: bus)
                continuation.yield(PairingPrompt(kind: .displayPasskey(passkey), address: address) { [weak self] answer in
                    // Cancelling a shown passkey: bluetoothd is told through the device.
                    if case .passkey(nil) = answer, let self {
                        _ = try? await self.bus.call(
                            destination: BlueZ.service, path: device, interface: BlueZ.deviceInterface, member: "CancelPairing",
                            timeout: .seconds(5))
                    }
                })
            }
            return []
        case "RequestConfirmation":
            let number = message.body.dropFirst().first?.integer.flatMap { UInt32(exactly: $0) } ?? 0
            pending.withLock { $0.methods[device] = .numericComparison }
            guard case .confirm(true) = await ask(.confirmNumber(number), device: device) else {
                throw DBusError("numeric comparison refused", name: "org.bluez.Error.Rejected")
            }
            return []
        default:
            throw DBusError("unknown method \(message.member ?? "")", name: "org.freedesktop.DBus.Error.UnknownMethod")
        }
    }

    /// Puts `kind` to the application and waits for its answer (nil: cancelled, or no answer
    /// within the policy's time limit plus the time a person needs to type).
    private func ask(_ kind: PairingPrompt.Kind, device: String) async -> PairingPrompt.Answer? {
        let address = await Self.address(of: device, on: bus)
        let limit = policy.timeout + .seconds(30)
        return await withTaskGroup(of: PairingPrompt.Answer?.self) { group in
            let token = pending.withLock { state -> Int in
                state.next += 1
                return state.next
            }
            group.addTask {
                await withCheckedContinuation { (waiting: CheckedContinuation<PairingPrompt.Answer?, Never>) in
                    let over = self.pending.withLock { state -> Bool in
                        // Timed out or cancelled before the question was even put.
                        if state.finished.remove(token) != nil { return true }
                        state.answers[token] = waiting
                        return false
                    }
                    if over { return waiting.resume(returning: nil) }
                    self.continuation.yield(PairingPrompt(kind: kind, address: address) { [weak self] answer in
                        self?.answer(token, answer)
                    })
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            answer(token, nil)
            group.cancelAll()
            await group.waitForAll()
            pending.withLock { _ = $0.finished.remove(token) }
            return first
        }
    }

    private func answer(_ token: Int, _ answer: PairingPrompt.Answer?) {
        let waiting = pending.withLock { state in
            guard let waiting = state.answers.removeValue(forKey: token) else {
                state.finished.insert(token)
                return nil as CheckedContinuation<PairingPrompt.Answer?, Never>?
            }
            return waiting
        }
        waiting?.resume(returning: answer)
    }

    /// The device's address with its type (asked of bluetoothd), nil when it cannot say.
    static func address(of device: String, on bus: DBusConnection) async -> BluetoothAddress? {
        let text = try? await bus.property("Address", of: BlueZ.deviceInterface, at: device, destination: BlueZ.service, timeout: .seconds(2))
        let type = try? await bus.property("AddressType", of: BlueZ.deviceInterface, at: device, destination: BlueZ.service, timeout: .seconds(2))
        return bluetideAddress(text?.string, type: type?.string)
    }
}
