import BluetideRide

/// The start and the end of a ride command (`ride`, `ride bridge`): the session's samples with
/// its failures in one line, and the wait for --duration or Ctrl-C.
enum RideRunning {
    /// Starts `ride`, turning its failures into a ``CommandFailure``.
    static func start(_ ride: RideSession) async throws -> AsyncStream<RideSample> {
        do { return try await ride.start() } catch let error as RideError {
            throw CommandFailure(error.message)
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    /// Waits until `printer` ends (the samples ended), `duration` seconds pass, or (with
    /// `stopOnSignals`) Ctrl-C or SIGTERM; then cancels `printer`.
    static func wait(for printer: Task<Void, Never>, duration: Double?, stopOnSignals: Bool) async {
        let ender = Task {
            if stopOnSignals { _ = await StopSignal.install(duration: duration).wait() } else if let duration {
                try? await Task.sleep(for: .seconds(duration))
            } else {
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            }
            printer.cancel()
        }
        await printer.value
        ender.cancel()
    }
}
