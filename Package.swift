// swift-tools-version: 6.1
import PackageDescription

// Which target may import which: the one layer table in docs/ARCHITECTURE-NOTES.md, enforced by
// .ci/check-layers (a new target needs a row there).
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Bluetide",
    // Linux only for now (the transports, GPIO, D-Bus and the tests use Linux interfaces): no platforms are declared.
    products: [
        .library(name: "BluetideBase", targets: ["BluetideBase"]),
        .library(name: "BluetideProfiles", targets: ["BluetideProfiles"]),
        .library(name: "BluetideHost", targets: ["BluetideHost"]),
        .library(name: "Bluetide", targets: ["Bluetide"]),
        .executable(name: "bluetide", targets: ["BluetideCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The coach's web dashboard. No traits: we need neither swift-configuration nor full Foundation there.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // YAML for the gateway's configuration file.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The coach dashboard's password hash (PBKDF2 in CryptoExtras).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        .target(name: "BluetideBase", dependencies: ["BluetideSupport"], swiftSettings: strict),
        // What several layers share and none owns: SplitMix64, civil-date arithmetic, ManualClock,
        // AsyncLock, time limits. Depends on nothing, so any target may import it.
        .target(name: "BluetideSupport", swiftSettings: strict),
        // MQTT client on libmosquitto, loaded at run time (dlopen): nothing to link at build time.
        .target(name: "BluetideMQTT", dependencies: ["BluetideSupport"], swiftSettings: strict),
        // A D-Bus client on libdbus-1 (loaded at run time): the BlueZ backend's transport to bluetoothd.
        .target(name: "BluetideDBus", swiftSettings: strict),
        // BlueZ's D-Bus API (adapters, devices, GATT objects) on BluetideDBus.
        .target(name: "BluetideBlueZ", dependencies: ["BluetideDBus", "Bluetide", "BluetideBase", "BluetideProfiles", "BluetideSupport"], swiftSettings: strict),
        .target(name: "BluetideProfiles", dependencies: ["BluetideBase", "BluetideSupport"], swiftSettings: strict),
        .target(name: "BluetideRecording", dependencies: ["BluetideBase", "BluetideProfiles", "BluetideSupport"], swiftSettings: strict),
        .target(name: "BluetideDeviceModels", dependencies: ["BluetideBase", "BluetideProfiles", "BluetideSupport"], swiftSettings: strict),
        .target(name: "BluetideGPIO", dependencies: ["BluetideBase", "BluetideSupport"], swiftSettings: strict),
        .target(name: "BluetideHCI", dependencies: ["BluetideBase"], swiftSettings: strict),
        .target(
            name: "BluetideVirtual",
            dependencies: [
                "BluetideBase", "BluetideHCI", "BluetideSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .target(
            name: "BluetideTransport",
            dependencies: [
                "BluetideBase", "BluetideHCI", "BluetideVirtual",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .target(
            name: "BluetideHost",
            dependencies: [
                "BluetideBase", "BluetideHCI", "BluetideTransport", "BluetideSupport", .product(name: "Logging", package: "swift-log"),
                // Pairing (Security/): P-256 ECDH, and the AES-128 block function AES-CMAC is built on.
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .target(
            name: "Bluetide",
            dependencies: ["BluetideBase", "BluetideProfiles", "BluetideHCI", "BluetideVirtual", "BluetideTransport", "BluetideHost", "BluetideSupport"],
            swiftSettings: strict),
        // `bluetide clone`: a capture's HCI traffic followed up to ATT, rebuilt as a device model.
        .target(
            name: "BluetideCapture",
            dependencies: ["BluetideBase", "BluetideHCI", "BluetideHost", "BluetideTransport", "BluetideRecording", "BluetideProfiles"],
            swiftSettings: strict),
        .target(
            name: "BluetideEmulation",
            dependencies: ["Bluetide", "BluetideBase", "BluetideProfiles", "BluetideDeviceModels", "BluetideHost", "BluetideTransport", "BluetideRecording", "BluetideCapture", "BluetideSupport"],
            swiftSettings: strict),
        .target(
            name: "BluetideCharts",
            dependencies: ["BluetideSupport"],
            swiftSettings: strict),
        // The uart app: serial links to HM-10 / Nordic UART devices, on the public API only.
        // bluetide gateway: devices on an MQTT broker (values, Home Assistant discovery, commands).
        .target(
            name: "BluetideGateway",
            dependencies: [
                "Bluetide", "BluetideBase", "BluetideProfiles", "BluetideMQTT", "BluetideRecording", "BluetideRide", "BluetideRing", "BluetideSupport",
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict),
        .target(name: "BluetideSerial", dependencies: ["BluetideBase", "BluetideProfiles", "Bluetide", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(
            name: "BluetideReflex",
            dependencies: ["BluetideCharts", "BluetideProfiles", "BluetideSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
        .target(
            name: "BluetideReflexDevice",
            dependencies: ["Bluetide", "BluetideGPIO", "BluetideProfiles", "BluetideBase", "BluetideSupport"],
            swiftSettings: strict),
        .target(
            name: "BluetideReflexCoach",
            dependencies: ["Bluetide", "BluetideReflex", "BluetideProfiles", "BluetideBase", "BluetideSupport"],
            swiftSettings: strict),
        .target(
            name: "BluetideReflexWeb",
            dependencies: [
                "BluetideReflex", "BluetideReflexCoach", "BluetideProfiles", "BluetideCharts", "BluetideLiveWeb",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // The ride app: trainers and sensors merged into samples, trainer control, workouts, export.
        .target(name: "BluetideRide", dependencies: ["Bluetide", "BluetideBase", "BluetideProfiles", "BluetideRecording", "BluetideSerial", "BluetideSupport"], swiftSettings: strict),
        // The live pages' kernel: serving, the feed-to-WebSocket pump, host checks and tokens.
        .target(
            name: "BluetideLiveWeb",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // `ride serve`: the ride live on a web page (numbers and a rolling chart over a WebSocket).
        .target(
            name: "BluetideRideWeb",
            dependencies: [
                "BluetideRide", "BluetideLiveWeb",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // `uart plot`: the numbers a serial device prints, charted live (the ride page's kernel).
        .target(
            name: "BluetideSerialWeb",
            dependencies: [
                "BluetideSerial", "BluetideLiveWeb", "BluetideSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .target(
            name: "BluetideRing",
            dependencies: ["BluetideBase", "BluetideProfiles", "Bluetide", "BluetideSupport", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .target(
            name: "BluetideRingWeb",
            dependencies: [
                "BluetideRing", "BluetideCharts",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // The benchmarks behind `bluetide bench`: Bumble's bench scenarios (one side over any
        // transport, or both in one process), GATT throughput between two stacks, codec decoding.
        .target(
            name: "BluetideBench",
            dependencies: ["BluetideBase", "BluetideProfiles", "BluetideHost", "BluetideTransport", "BluetideVirtual", "BluetideSupport"],
            swiftSettings: strict),
        // The demo's world and device scripts (`bluetide demo` parses and prints).
        .target(
            name: "BluetideDemo",
            dependencies: [
                "Bluetide", "BluetideBase", "BluetideEmulation", "BluetideDeviceModels", "BluetideProfiles", "BluetideReflexCoach", "BluetideRide", "BluetideRing", "BluetideSupport",
            ],
            swiftSettings: strict),
        // The coach's Bluetooth with emulated trainers and straps (the coach library knows no emulators).
        .target(
            name: "BluetideReflexEmulation",
            dependencies: [
                "Bluetide", "BluetideBase", "BluetideProfiles", "BluetideEmulation", "BluetideDeviceModels", "BluetideReflex", "BluetideReflexCoach",
                "BluetideSupport",
            ],
            swiftSettings: strict),
        .target(
            name: "BluetideCommands",
            dependencies: [
                "BluetideBase", "BluetideProfiles", "BluetideTransport", "BluetideBench", "BluetideSupport",
                "BluetideRecording", "BluetideDeviceModels", "BluetideEmulation", "Bluetide", "BluetideReflexDevice", "BluetideGPIO",
                "BluetideReflex", "BluetideReflexCoach", "BluetideReflexEmulation", "BluetideReflexWeb", "BluetideRing", "BluetideRingWeb", "BluetideSerial", "BluetideSerialWeb", "BluetideRide", "BluetideRideWeb",
                "BluetideCapture", "BluetideGateway", "BluetideMQTT", "BluetideBlueZ", "BluetideDBus", "BluetideDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "BluetideCLI", dependencies: ["BluetideCommands", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")], swiftSettings: strict),
        // Shared by the test targets: run-time limits for hang guards, and the Bumble interop
        // harness (Bumble/: environment probe, child processes with timed line output, controllers.py).
        .target(name: "BluetideTestSupport", dependencies: ["BluetideSupport"], path: "Tests/BluetideTestSupport", swiftSettings: strict),
        .testTarget(
            name: "BluetideGatewayTests",
            dependencies: ["BluetideGateway", "BluetideMQTT", "BluetideTestSupport", "Bluetide", "BluetideBase", "BluetideProfiles", "BluetideRecording", "BluetideSupport", "BluetideEmulation", "BluetideDeviceModels"],
            swiftSettings: strict),
        .testTarget(name: "BluetideDBusTests", dependencies: ["BluetideDBus", "BluetideBlueZ", "BluetideTransport", "BluetideTestSupport", "BluetideSupport", "Bluetide", "BluetideBase", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideMQTTTests", dependencies: ["BluetideMQTT", "BluetideTestSupport", "BluetideSupport"], swiftSettings: strict),
        .testTarget(name: "BluetideBaseTests", dependencies: ["BluetideBase", "BluetideSupport", "BluetideTestSupport"], swiftSettings: strict),
        .testTarget(name: "BluetideProfilesTests", dependencies: ["BluetideProfiles", "BluetideBase"], swiftSettings: strict),
        .testTarget(name: "BluetideRecordingTests", dependencies: ["BluetideRecording", "BluetideBase", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideDeviceModelsTests", dependencies: ["BluetideDeviceModels", "BluetideBase", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideGPIOTests", dependencies: ["BluetideGPIO", "BluetideSupport", "BluetideBase"], swiftSettings: strict),
        .testTarget(
            name: "BluetideSecurityTests",
            dependencies: ["BluetideHost", "BluetideHCI", "BluetideBase", "BluetideTransport", "BluetideTestSupport", "BluetideSupport"],
            exclude: ["Bumble"], swiftSettings: strict),
        .testTarget(
            name: "BluetideCaptureTests",
            dependencies: [
                "BluetideCapture", "BluetideBase", "BluetideHCI", "BluetideHost", "BluetideTransport", "BluetideRecording",
                "Bluetide", "BluetideEmulation", "BluetideDeviceModels", "BluetideRing", "BluetideSupport", "BluetideProfiles",
                "BluetideCommands", "BluetideTestSupport",
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict),
        .testTarget(name: "BluetideHCITests", dependencies: ["BluetideHCI", "BluetideBase"], swiftSettings: strict),
        .testTarget(name: "BluetideVirtualTests", dependencies: ["BluetideVirtual", "BluetideBase", "BluetideHCI", "BluetideSupport", "BluetideTransport"], swiftSettings: strict),
        .testTarget(name: "BluetideTransportTests", dependencies: ["BluetideTransport", "BluetideHCI", "BluetideVirtual", "BluetideBase", .product(name: "NIOCore", package: "swift-nio")], swiftSettings: strict),
        .testTarget(name: "BluetideHostTests", dependencies: ["BluetideTestSupport", "BluetideSupport", "BluetideHost", "BluetideVirtual", "BluetideTransport", "BluetideHCI", "BluetideBase"], exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(name: "BluetideTests", dependencies: ["BluetideTestSupport", "BluetideSupport", "Bluetide", "BluetideBase", "BluetideHost", "BluetideVirtual", "BluetideTransport", "BluetideHCI", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideEmulationTests", dependencies: ["BluetideTestSupport", "BluetideSupport", "Bluetide", "BluetideHCI", "BluetideEmulation", "BluetideHost", "BluetideTransport", "BluetideDeviceModels", "BluetideProfiles", "BluetideRecording", "BluetideBase"], swiftSettings: strict),
        .testTarget(name: "BluetideReflexDeviceTests", dependencies: ["BluetideTestSupport", "BluetideSupport", "BluetideReflexDevice", "Bluetide", "BluetideGPIO", "BluetideHost", "BluetideTransport", "BluetideBase", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideReflexTests", dependencies: ["BluetideReflex", "BluetideCharts", "BluetideProfiles", .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: strict),
        .testTarget(name: "BluetideCLITests", dependencies: ["BluetideTestSupport", "BluetideSupport", "Bluetide", "BluetideCommands", "BluetideSerial", "BluetideDemo", "BluetideMQTT", "BluetideDBus", "BluetideBench", "BluetideProfiles", "BluetideCLI", "BluetideRecording", "BluetideEmulation", "BluetideDeviceModels", "BluetideTransport", "BluetideHCI", "BluetideBase", "BluetideHost", .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "GRDB", package: "GRDB.swift"), .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"), .product(name: "Logging", package: "swift-log")],
            exclude: ["HelpSnapshots"], swiftSettings: strict),
        .testTarget(name: "BluetideBlueZTests", dependencies: ["BluetideTestSupport", "Bluetide", "BluetideBase", "BluetideDeviceModels", "BluetideProfiles", "BluetideSupport", "BluetideCLI"], swiftSettings: strict),
        .testTarget(name: "BluetideReflexCoachTests", dependencies: ["BluetideReflexCoach", "BluetideReflexEmulation", "BluetideTestSupport", "BluetideSupport", "BluetideReflex", "Bluetide", "BluetideEmulation", "BluetideDeviceModels", "BluetideProfiles", "BluetideCommands", "BluetideBase", .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: strict),
        .testTarget(
            name: "BluetideSerialTests",
            dependencies: [
                "BluetideBase", "BluetideProfiles", "BluetideSupport", "BluetideTestSupport", "BluetideSerial", "BluetideSerialWeb", "Bluetide",
                "BluetideEmulation", "BluetideDeviceModels", "BluetideTransport",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BluetideRingTests",
            dependencies: ["BluetideBase", "BluetideProfiles", "BluetideSupport", 
                "BluetideTestSupport", "BluetideRing", "BluetideRingWeb", "Bluetide", "BluetideEmulation", "BluetideDeviceModels",
                "BluetideTransport", "BluetideCommands", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BluetideRideTests",
            dependencies: [
                "BluetideSupport", "BluetideTestSupport", "BluetideRide", "BluetideRideWeb", "Bluetide", "BluetideBase",
                "BluetideProfiles", "BluetideRecording", "BluetideEmulation", "BluetideDeviceModels",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BluetideReflexWebTests",
            dependencies: [
                "BluetideTestSupport", "BluetideReflexWeb", "BluetideReflex", "BluetideReflexCoach", "BluetideReflexEmulation", "BluetideCommands",
                "Bluetide", "BluetideBase", "BluetideProfiles", "BluetideSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: strict),
    ]
)
