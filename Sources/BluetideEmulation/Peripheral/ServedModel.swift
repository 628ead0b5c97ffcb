import BluetideBase
import BluetideDeviceModels
import BluetideProfiles
import Synchronization

/// The single owner of one ``DeviceModel``'s state while it is served.
///
/// The model is touched from three places: the GATT server's read handler and write validator
/// (synchronous closures the ``HostStack`` actor calls while it handles an ATT request) and the
/// peripheral's tick task. All three go through ``state``, a `Mutex`, and each holds the lock for
/// one model call only — no `await` and no call back into the stack happens inside it — so
/// the calls are serialised, no caller can see a half-applied write, and no lock-order cycle can
/// form (the stack never holds this lock while waiting for itself, and this lock never waits for
/// the stack). Running the write inside the validator is what lets a refused write answer with
/// the model's own ATT error code in the same ATT transaction, and an accepted one change the
/// model before the Write Response leaves.
///
/// Known limit: for a long write (Prepare Write + Execute Write) the host's GATT server calls
/// the validator twice for the same value (once while checking every part, once while applying),
/// so such a write reaches the model twice. Models' writable values fit one Write Request, which
/// is what clients send for them.
final class ServedModel: Sendable {
    /// Catalog name, for events.
    let name: String
    /// The model's services as served (fixed for the model's life; a Device Information
    /// service another model already serves is left out).
    let services: [EmulatedService]
    /// Seconds between ticks.
    let tickInterval: Double
    /// Value handle of every characteristic, filled when the database is laid out.
    let handles: [BluetoothUUID: UInt16]

    private struct State: ~Copyable {
        var model: any DeviceModel
        /// The last value sent or stored per characteristic, for reads the model does not answer.
        var lastValues: [BluetoothUUID: [UInt8]]
    }
    private let state: Mutex<State>

    init(model: any DeviceModel, services: [EmulatedService], handles: [BluetoothUUID: UInt16]) {
        name = model.name
        self.services = services
        tickInterval = max(model.tickInterval, 0.005)
        self.handles = handles
        var initial: [BluetoothUUID: [UInt8]] = [:]
        for c in model.allCharacteristics { initial[c.uuid] = c.initialValue }
        state = Mutex(State(model: model, lastValues: initial))
    }

    /// The current value: the model's answer, else the last value sent, else the initial one.
    func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8] {
        state.withLock { s in s.model.read(characteristic, now: now) ?? s.lastValues[characteristic] ?? [] }
    }

    /// Applies a write to the model; accepted writes' outputs are returned for sending.
    func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        state.withLock { s in
            let outcome = s.model.write(characteristic, bytes, now: now)
            if case .accepted = outcome {
                for output in outcome.outputs { s.lastValues[output.characteristic] = output.bytes }
            }
            return outcome
        }
    }

    /// Advances the model; returns what to notify or indicate.
    func tick(now: Double) -> [EmulatedOutput] {
        state.withLock { s in
            let outputs = s.model.tick(now: now)
            for output in outputs { s.lastValues[output.characteristic] = output.bytes }
            return outputs
        }
    }

    /// Lets a model that cuts its values (COLMI frames, Nordic UART echoes) fit them to what
    /// the link carries (ATT MTU − 3 octets); other models ignore it.
    func setMaximumNotificationLength(_ length: Int) {
        state.withLock { s in
            guard var adjustable = s.model as? any DeviceModel & NotificationLengthAdjustable else { return }
            adjustable.setMaximumNotificationLength(length)
            s.model = adjustable
        }
    }

    /// A copy of the model as it is now (for tests and status output).
    func snapshot() -> any DeviceModel { state.withLock { $0.model } }
}
