import ArgumentParser
import Bluetide
import BluetideReflex
import BluetideReflexCoach
import BluetideReflexEmulation
import BluetideSupport

/// The coach commands' side of the coach library's errors: each becomes the command's one-line
/// failure, with the exit status the user's input deserves.
extension CoachCLI {
    /// `error` from a coach library call (``CoachLiveRun``, ``CoachGame``, ``CoachBluetooth``)
    /// as the command's failure: the library's line; a refusal of what the user typed is exit 2
    /// (see ``failing(_:)``), a transport that does not open says how (``CommandFailure/cannotOpenTransport(_:_:)``).
    static func failure(_ error: any Error) -> any Error {
        switch error {
        case is CommandFailure, is ExitCode:
            return error
        case let input as CoachInputError:
            return CommandFailure(input.description)
        case let store as CoachStoreError:
            return failure(store)
        case let coach as CoachError:
            return CommandFailure(coach.description)
        case let CoachBluetoothError.cannotOpen(transport, reason):
            return CommandFailure.cannotOpenTransport(transport, reason)
        case let bluetooth as CoachBluetoothError:
            return CommandFailure(bluetooth.description)
        default:
            return CommandFailure("\(error)")
        }
    }

    /// ``CoachBluetooth/open(transport:emulate:count:straps:seed:clock:output:)`` with its
    /// errors as command failures.
    static func openBluetooth(
        transport: String, emulate: Bool, count: Int = 1, straps: Int = 0, clock: BluetideClock = .continuous,
        output: (String) -> Void
    ) async throws -> CoachBluetooth {
        do {
            return try await CoachBluetooth.open(transport: transport, emulate: emulate, count: count, straps: straps, clock: clock, output: output)
        } catch {
            throw failure(error)
        }
    }
}
