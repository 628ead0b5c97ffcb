import Bluetide
import BluetideGPIO
import BluetideSupport

/// One session of the punch trainer as `bluetide reflex device` runs it: opens the host on a
/// transport, serves the Punch service, hands every device event on in order, and ends when
/// the duration passes, the caller's stop comes or the controller goes away; then the run is
/// stopped (LEDs off, lines released) and the host closed, whatever happened.
public struct ReflexDeviceRun: Sendable {
    /// The controller transport spec (`virtual`, `hci-socket:0`, `tcp-client:…`).
    public var transport: String
    /// The GPIO lines, the simulated athlete, the name and the gap between steps.
    public var options: ReflexDeviceOptions
    /// How long to serve; nil: until the stop or the controller's end.
    public var duration: Duration?

    public init(transport: String, options: ReflexDeviceOptions, duration: Duration? = nil) {
        self.transport = transport
        self.options = options
        self.duration = duration
    }

    /// Why a run ended (it ended the orderly way in each case).
    public enum Ending: Sendable, Equatable {
        /// The duration passed.
        case durationPassed
        /// The caller's stop came (a signal, in the CLI).
        case stopped
    }

    /// Serves until the duration passes on `clock`, `stopWhen` returns, or the controller goes
    /// away (a ``ReflexDeviceRunError/controllerGone(transport:_:)``). `events` gets each device
    /// event, in order, and has seen the last one when this returns. With a manual `clock` (and
    /// a `virtual:NAME` link made on it) the host, the device and its simulated athlete run in
    /// virtual time.
    /// - Throws: ``ReflexDeviceRunError``.
    public func run(
        clock: BluetideClock = .continuous, stopWhen: @escaping @Sendable () async -> Void,
        events: @escaping @Sendable (ReflexDeviceEvent) -> Void
    ) async throws(ReflexDeviceRunError) -> Ending {
        // The controller's own address: the device keeps its name (Reflex-XXXX) from run to run.
        let configuration = Bluetooth.Configuration(
            deviceName: options.name ?? options.configuration.deviceName ?? "Reflex", usesControllerAddress: true, clock: clock)
        let bluetooth: Bluetooth
        do { bluetooth = try await Bluetooth.open(transport: transport, configuration: configuration) } catch {
            throw .cannotOpen(transport: transport, error)
        }
        let device: ReflexDevice<BluetideClock>
        do {
            device = try await ReflexDevice.start(bluetooth: bluetooth, options: options, clock: clock)
        } catch {
            await bluetooth.close()
            throw (error as? GPIOError).map(ReflexDeviceRunError.gpio) ?? .cannotStart(error)
        }
        let printer = Task { for await event in device.events { events(event) } }
        let duration = duration
        // The first of: the duration, the stop, the controller's end (nil for the first two).
        let ending = await withTaskGroup(of: Result<Ending, BluetideError>?.self) { group in
            if let duration {
                group.addTask {
                    do { try await clock.sleep(for: duration) } catch { return nil }
                    return .success(.durationPassed)
                }
            }
            group.addTask {
                await stopWhen()
                return Task.isCancelled ? nil : .success(.stopped)
            }
            group.addTask { await bluetooth.waitUntilClosed().map { .failure($0) } }
            var first: Result<Ending, BluetideError>?
            while first == nil, let next = await group.next() { first = next }
            group.cancelAll()
            return first ?? .success(.stopped)
        }
        await device.stop()
        await printer.value
        await bluetooth.close()
        switch ending {
        case let .success(ending): return ending
        case let .failure(gone): throw .controllerGone(transport: transport, gone)
        }
    }
}

/// Why a ``ReflexDeviceRun`` could not start or did not end the orderly way.
public enum ReflexDeviceRunError: Error, CustomStringConvertible {
    /// The host did not start on `transport` (no such adapter, no controller answering).
    case cannotOpen(transport: String, any Error)
    /// The GPIO lines could not be had (busy, no such chip).
    case gpio(GPIOError)
    /// The device did not start (its service or advertising was refused).
    case cannotStart(any Error)
    /// The controller went away while serving.
    case controllerGone(transport: String, BluetideError)

    public var description: String {
        switch self {
        case let .cannotOpen(transport, error): "cannot start the Bluetooth host on \(transport): \(error)"
        case let .gpio(error): "\(error)"
        case let .cannotStart(error): "cannot start the device: \(error)"
        case let .controllerGone(transport, error): "the controller on \(transport) went away (\(error))"
        }
    }
}
