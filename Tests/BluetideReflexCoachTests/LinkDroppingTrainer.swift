import Bluetide
import BluetideDeviceModels
import BluetideProfiles
import Synchronization

/// A punch trainer that loses its link once, from its own side, the moment it produces the result
/// of step `afterStep`: the drop lands inside that run whatever the machine's load (a drop
/// triggered by the test's event consumer could land seconds later, after the run had ended).
/// The drop may overtake that result's notification; a reconnecting coach reads it back.
struct LinkDroppingTrainer: DeviceModel {
    private var trainer: PunchTrainerModel
    private let afterStep: UInt16
    private let drop: @Sendable () -> Void
    private let done = DropOnce()

    init(_ trainer: PunchTrainerModel, afterStep: UInt16, drop: @escaping @Sendable () -> Void) {
        self.trainer = trainer
        self.afterStep = afterStep
        self.drop = drop
    }

    var name: String { trainer.name }
    var advertising: AdvertisingHints { trainer.advertising }
    var services: [EmulatedService] { trainer.services }
    var tickInterval: Double { trainer.tickInterval }
    func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? { trainer.read(characteristic, now: now) }
    mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        trainer.write(characteristic, bytes, now: now)
    }

    mutating func tick(now: Double) -> [EmulatedOutput] {
        let outputs = trainer.tick(now: now)
        let notified = outputs.contains { output in
            output.characteristic == PunchUUID.response && (try? PunchResponse(exactly: output.bytes))?.step == afterStep
        }
        if notified, done.first() { drop() }
        return outputs
    }
}

/// True the first time it is asked, false after (shared by every copy of a model).
final class DropOnce: Sendable {
    private let asked = Mutex(false)
    func first() -> Bool { asked.withLock { was in defer { was = true }; return !was } }
}
