import BluetideBase
import BluetideProfiles

/// `tacx-fec`: a Tacx trainer speaking ANT+ FE-C pages over the Tacx BLE service
/// (`6E40FEC1-…`: notify FEC2, write FEC3), one 13-byte ANT message per notification.
///
/// Notifies page 16 (general FE data: elapsed time in 0.25 s and distance in metres, both
/// rolling at 256; speed in mm/s) and page 25 (trainer data: event count rolling at 256,
/// accumulated power rolling at 65536, 12-bit instantaneous power) alternately at 4 Hz. Obeys
/// pages 48 (basic resistance), 49 (target power, ERG), 50 (wind resistance), 51 (track
/// resistance: grade and Crr, simulation) and 55 (user configuration: mass and wheel). Each
/// command bumps the command sequence number reported in page 71. Page 70 requests are answered
/// with the requested page (16, 17, 25, 54, 55, 71, 80, 81) in the next 4 Hz slots. Device
/// Information (0x180A) names it `Tacx` with the serial number and revisions of pages 80/81.
public struct TacxFECModel: DeviceModel {
    /// Catalog name.
    public let name = "tacx-fec"
    private let localName: String
    /// The trainer's physics.
    public private(set) var engine: TrainerEngine
    /// Page 25 event count (wraps at 256).
    public private(set) var eventCount: UInt8 = 0
    /// Page 25 accumulated power, watts (wraps at 65536).
    public private(set) var accumulatedPowerWatts: UInt16 = 0
    /// The last user configuration received (page 55), or the default.
    public private(set) var userConfiguration: FECUserConfiguration
    /// Page 71 content: last command, sequence number, status and echoed data.
    public private(set) var commandStatus = FECCommandStatus(
        lastCommandPage: 0xFF, sequenceNumber: 0xFF, status: .uninitialized, data: [0xFF, 0xFF, 0xFF, 0xFF])
    /// Writes that did not decode as an FE-C frame (ignored, as a trainer does).
    public private(set) var ignoredWrites = 0
    private var commandsReceived: UInt8 = 0
    private var hasCommandStatus = false
    private var configured = false
    private var slot = 0
    private var queued: [UInt8] = []
    private var nextMessage: Double?
    private let serialNumber: UInt32
    /// Device Information (0x180A): Tacx, the model, and the serial and revisions pages 80 and
    /// 81 report.
    public let deviceInformation: EmulatedDeviceInformation

    /// Capabilities (page 54): 2000 N, basic resistance, target power and simulation.
    public static let capabilities = FECCapabilities(
        maximumResistanceNewtons: 2000, supportedModes: [.basicResistance, .targetPower, .simulation])

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) {
        var generator = SeededGenerator(seed: seed)
        serialNumber = UInt32(truncatingIfNeeded: generator.next() % 100_000)
        localName = options.localName ?? "Tacx Neo \(serialNumber % 100_000)"
        deviceInformation = EmulatedDeviceInformation(
            manufacturerName: "Tacx", modelNumber: "Neo (emulated)", serialNumber: String(serialNumber),
            hardwareRevision: String(Self.hardwareRevision), firmwareRevision: Self.softwareVersion,
            softwareRevision: Self.softwareVersion)
        engine = TrainerEngine(
            riderPowerWatts: options.powerWatts, riderCadenceRPM: options.cadenceRPM, massKilograms: options.riderMassKilograms)
        userConfiguration = FECUserConfiguration(
            userWeightHundredthKg: UInt16(clamping: Int((options.riderMassKilograms - 8) * 100)),
            bicycleWeightTwentiethKg: 160,
            wheelDiameterCentimeters: UInt8(clamping: Int((options.wheelCircumferenceMeters / Double.pi * 100).rounded())))
    }

    public var advertising: AdvertisingHints {
        AdvertisingHints(localName: localName, serviceUUIDs: [.tacxFECService], appearance: 0x0480)
    }

    public var services: [EmulatedService] {
        [
            EmulatedService(.tacxFECService, [
                EmulatedCharacteristic(.tacxFECNotify, [.notify]),
                EmulatedCharacteristic(.tacxFECWrite, [.write, .writeWithoutResponse]),
            ]),
            deviceInformation.service,
        ]
    }

    public var tickInterval: Double { 0.25 }

    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? { deviceInformation.read(characteristic) }

    /// Hardware revision reported on page 80 and in Device Information.
    static let hardwareRevision: UInt8 = 1
    /// Main software revision reported on page 81 (tenths: 42 is 4.2).
    static let softwareRevisionMain: UInt8 = 42
    /// ``softwareRevisionMain`` as text, `4.2`.
    static var softwareVersion: String { "\(softwareRevisionMain / 10).\(softwareRevisionMain % 10)" }

    public mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        guard characteristic == .tacxFECWrite else { return .rejected(attError: EmulatedATTError.writeNotPermitted) }
        guard let frame = try? FECFrame.decodeKeepingBadChecksum(bytes).frame else {
            ignoredWrites += 1
            return .ok
        }
        engine.advance(to: now)
        let page = frame.page
        let pageBytes = page.bytes
        var status = FECCommandStatus.Status.pass
        switch page {
        case let .basicResistance(p):
            engine.mode = .resistance(fraction: min(p.resistancePercent, 100) / 100)
        case let .targetPower(p):
            engine.mode = .targetPower(watts: min(p.watts, 4000))
        case let .windResistance(p):
            engine.road.windResistanceKgPerMeter = p.windResistanceKgPerMeter * p.draftingFactor
            engine.road.windSpeedMetersPerSecond = Double(p.windSpeedKmh) / 3.6
            engine.mode = .simulation
        case let .trackResistance(p):
            engine.road.gradePercent = p.gradePercent
            engine.road.rollingResistance = p.rollingResistanceCoefficient
            engine.mode = .simulation
        case let .userConfiguration(p):
            userConfiguration = p
            configured = true
            if let rider = p.userWeightKg {
                engine.setMass(rider + (p.bicycleWeightKg ?? 8))
            }
        case let .requestDataPage(request):
            let times = request.requestedTransmissionResponse & 0x7F
            let count = min(max(Int(times), 1), 4)
            if Self.answerablePages.contains(request.requestedPageNumber) {
                queued += Array(repeating: request.requestedPageNumber, count: count)
            }
            return .ok
        case .raw:
            status = .notSupported
        default:
            // Data pages sent to the trainer are not commands.
            status = .notSupported
        }
        commandsReceived = hasCommandStatus ? commandsReceived &+ 1 : 0
        hasCommandStatus = true
        commandStatus = FECCommandStatus(
            lastCommandPage: page.pageNumber, sequenceNumber: commandsReceived, status: status,
            data: pageBytes.count >= 8 ? Array(pageBytes[4..<8]) : [0xFF, 0xFF, 0xFF, 0xFF])
        return .ok
    }

    /// Pages a page-70 request can ask for.
    public static let answerablePages: Set<UInt8> = [16, 17, 25, 54, 55, 71, 80, 81]

    public mutating func tick(now: Double) -> [EmulatedOutput] {
        engine.advance(to: now)
        var out: [EmulatedOutput] = []
        if nextMessage == nil { nextMessage = now + 0.25 }
        while let due = nextMessage, now >= due {
            nextMessage = due + 0.25
            let page: FECPage
            if !queued.isEmpty {
                page = self.page(queued.removeFirst())
            } else {
                page = self.page(slot % 2 == 0 ? 16 : 25)
                slot += 1
            }
            out.append(EmulatedOutput(.tacxFECNotify, FECFrame(page: page).bytes))
        }
        return out
    }

    private var state: FEState { engine.isPedalling ? .inUse : .ready }

    /// Builds page `number` from the current state (page 25 advances the event counters).
    private mutating func page(_ number: UInt8) -> FECPage {
        switch number {
        case 16:
            return .generalData(FECGeneralData(
                elapsedTimeQuarterSeconds: UInt8(truncatingIfNeeded: Int(engine.elapsedSeconds * 4)),
                distanceTraveledMeters: UInt8(truncatingIfNeeded: Int(engine.distanceMeters)),
                speedMillimetersPerSecond: UInt16(clamping: Int((engine.speedMetersPerSecond * 1000).rounded())),
                state: state))
        case 17:
            return .generalSettings(FECGeneralSettings(
                inclineHundredthPercent: Int16(clamping: Int((engine.road.gradePercent * 100).rounded())),
                resistanceLevelHalfPercent: resistanceHalfPercent, state: state))
        case 25:
            let watts = UInt16(clamping: Int(engine.powerWatts.rounded()))
            eventCount &+= 1
            accumulatedPowerWatts &+= watts
            return .trainerData(FECTrainerData(
                eventCount: eventCount, cadenceRpm: UInt8(clamping: Int(engine.cadenceRPM.rounded())),
                accumulatedPowerWatts: accumulatedPowerWatts, instantaneousPowerWatts: min(watts, 0xFFE),
                trainerStatus: configured ? [] : [.userConfigurationRequired], state: state))
        case 54: return .capabilities(Self.capabilities)
        case 55: return .userConfiguration(userConfiguration)
        case 71: return .commandStatus(commandStatus)
        case 80: return .manufacturerInfo(FECManufacturerInfo(hardwareRevision: Self.hardwareRevision, manufacturerID: 89, modelNumber: 2875))
        default: return .productInfo(FECProductInfo(softwareRevisionMain: Self.softwareRevisionMain, serialNumber: serialNumber))
        }
    }

    private var resistanceHalfPercent: UInt8 {
        if case let .resistance(fraction) = engine.mode { return UInt8(clamping: Int((fraction * 200).rounded())) }
        return 0
    }
}
