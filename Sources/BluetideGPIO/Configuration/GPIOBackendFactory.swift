/// A chip opened from a configuration, with its simulated athlete when the backend is `sim`.
public struct OpenedGPIO<C: Clock>: Sendable where C.Duration == Duration {
    /// The chip to request the lines from.
    public let chip: any GPIOChip
    /// The running simulated athlete (`sim` backend only); stop it when done.
    public let athlete: SimulatedAthlete<C>?

    public init(chip: any GPIOChip, athlete: SimulatedAthlete<C>?) {
        self.chip = chip
        self.athlete = athlete
    }
}

extension GPIOConfiguration {
    /// Opens the configured backend: the Linux chip at ``chipPath``, or a simulated chip (named
    /// after ``chipPath``, with every line the targets use) watched by a started
    /// ``SimulatedAthlete`` whose time runs on `clock`, scaled by `timeScale`.
    public func openGPIO<C: Clock>(clock: C, timeScale: Double = 1) async throws(GPIOError) -> OpenedGPIO<C> {
        switch backend {
        case .linux:
            #if os(Linux)
            return OpenedGPIO(chip: try LinuxGPIOChip(path: chipPath), athlete: nil)
            #else
            throw .noSuchChip(chip: chipPath, available: [])
            #endif
        case .sim:
            let highest = targets.flatMap { [$0.ledLine, $0.sensorLine] }.max() ?? 0
            let chip = SimulatedGPIOChip(lineCount: max(54, highest + 1), name: "sim:\(chipPath)", clock: clock)
            let athlete = SimulatedAthlete(chip: chip, configuration: self, clock: clock, timeScale: timeScale)
            await athlete.start()
            return OpenedGPIO(chip: chip, athlete: athlete)
        }
    }
}
