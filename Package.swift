// swift-tools-version: 6.1
import PackageDescription

// Which target may import which: the one layer table in docs/ARCHITECTURE-NOTES.md, enforced by
// .ci/check-layers (a new target needs a row there).
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Bluetide",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "BluetideCore", targets: ["BluetideCore"]),
        .library(name: "BluetideProfiles", targets: ["BluetideProfiles"]),
        .library(name: "BluetideHost", targets: ["BluetideHost"]),
        .library(name: "Bluetide", targets: ["Bluetide"]),
        .executable(name: "bluetide", targets: ["bluetide"]),
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
        .target(name: "BluetideCore", dependencies: ["BluetideSupport"], swiftSettings: strict),
        // What several layers share and none owns: SplitMix64, civil-date arithmetic, ManualClock,
        // AsyncLock, time limits. Depends on nothing, so any target may import it.
        .target(name: "BluetideSupport", swiftSettings: strict),
        // MQTT client on libmosquitto, loaded at run time (dlopen): nothing to link at build time.
        .target(name: "BluetideMQTT", dependencies: ["BluetideSupport"], swiftSettings: strict),
        // A D-Bus client on libdbus-1 (loaded at run time): the BlueZ backend's transport to bluetoothd.
        .target(name: "BluetideDBus", swiftSettings: strict),
        // BlueZ's D-Bus API (adapters, devices, GATT objects) on BluetideDBus.
        .target(name: "BluetideBlueZ", dependencies: ["BluetideDBus", "Bluetide", "BluetideCore", "BluetideProfiles"], swiftSettings: strict),
        .target(name: "BluetideProfiles", dependencies: ["BluetideCore", "BluetideSupport"], swiftSettings: strict),
        .target(name: "BluetideRecording", dependencies: ["BluetideCore", "BluetideProfiles", "BluetideSupport"], swiftSettings: strict),
        .target(name: "BluetideEmulators", dependencies: ["BluetideCore", "BluetideProfiles", "BluetideSupport"], swiftSettings: strict),
        .target(name: "BluetideGPIO", dependencies: ["BluetideCore", "BluetideSupport"], swiftSettings: strict),
        .target(name: "BluetideHCI", dependencies: ["BluetideCore"], swiftSettings: strict),
        .target(
            name: "BluetideVirtual",
            dependencies: [
                "BluetideCore", "BluetideHCI", "BluetideSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .target(
            name: "BluetideTransport",
            dependencies: [
                "BluetideCore", "BluetideHCI", "BluetideVirtual",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .target(
            name: "BluetideHost",
            dependencies: [
                "BluetideCore", "BluetideHCI", "BluetideTransport", "BluetideSupport", .product(name: "Logging", package: "swift-log"),
                // Pairing (Security/): P-256 ECDH, and the AES-128 block function AES-CMAC is built on.
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .target(
            name: "Bluetide",
            dependencies: ["BluetideCore", "BluetideProfiles", "BluetideHCI", "BluetideTransport", "BluetideHost", "BluetideSupport"],
            swiftSettings: strict),
        // `bluetide clone`: a capture's HCI traffic followed up to ATT, rebuilt as a device model.
        .target(
            name: "BluetideCapture",
            dependencies: ["BluetideCore", "BluetideHCI", "BluetideHost", "BluetideTransport", "BluetideRecording", "BluetideProfiles"],
            swiftSettings: strict),
        .target(
            name: "BluetideEmulation",
            dependencies: ["Bluetide", "BluetideCore", "BluetideProfiles", "BluetideEmulators", "BluetideHost", "BluetideTransport", "BluetideRecording", "BluetideCapture", "BluetideSupport"],
            swiftSettings: strict),
        .target(
            name: "BluetideCharts",
            dependencies: ["BluetideSupport"],
            swiftSettings: strict),
        // The uart app: serial links to HM-10 / Nordic UART devices, on the public API only.
        // bluetide gateway: devices on an MQTT broker (values, Home Assistant discovery, commands).
        .target(
            name: "BluetideGateway",
            dependencies: ["Bluetide", "BluetideCore", "BluetideProfiles", "BluetideMQTT", "BluetideRecording", "BluetideRide", "BluetideRing", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict),
        .target(name: "BluetideSerial", dependencies: ["BluetideCore", "BluetideProfiles", "Bluetide", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(
            name: "BluetideReflex",
            dependencies: ["BluetideCharts", "BluetideProfiles", "BluetideSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
        .target(
            name: "BluetideReflexDevice",
            dependencies: ["Bluetide", "BluetideGPIO", "BluetideProfiles", "BluetideCore", "BluetideSupport"],
            swiftSettings: strict),
        .target(
            name: "BluetideReflexCoach",
            dependencies: ["Bluetide", "BluetideReflex", "BluetideProfiles", "BluetideCore", "BluetideSupport"],
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
        .target(name: "BluetideRide", dependencies: ["Bluetide", "BluetideCore", "BluetideProfiles", "BluetideRecording", "BluetideSupport"], swiftSettings: strict),
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
                "BluetideSerial", "BluetideLiveWeb",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .target(
            name: "BluetideRing",
            dependencies: ["BluetideCore", "BluetideProfiles", "Bluetide", "BluetideSupport", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log")],
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
            dependencies: ["BluetideCore", "BluetideProfiles", "BluetideHost", "BluetideTransport", "BluetideVirtual", "BluetideSupport"],
            swiftSettings: strict),
        // The demo's world and device scripts (`bluetide demo` parses and prints).
        .target(
            name: "BluetideDemo",
            dependencies: [
                "Bluetide", "BluetideCore", "BluetideEmulation", "BluetideEmulators", "BluetideProfiles", "BluetideReflexCoach", "BluetideRide", "BluetideRing",
            ],
            swiftSettings: strict),
        .target(
            name: "BluetideCommands",
            dependencies: [
                "BluetideCore", "BluetideProfiles", "BluetideTransport", "BluetideBench", "BluetideSupport",
                "BluetideRecording", "BluetideEmulators", "BluetideEmulation", "Bluetide", "BluetideReflexDevice", "BluetideGPIO",
                "BluetideReflex", "BluetideReflexCoach", "BluetideReflexWeb", "BluetideRing", "BluetideRingWeb", "BluetideSerial", "BluetideSerialWeb", "BluetideRide", "BluetideRideWeb",
                "BluetideCapture", "BluetideGateway", "BluetideMQTT", "BluetideBlueZ", "BluetideDBus", "BluetideSupport", "BluetideDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .executableTarget(name: "bluetide", dependencies: ["BluetideCommands"], swiftSettings: strict),
        // Shared by the test targets: run-time limits for hang guards, and the Bumble interop
        // harness (Bumble/: environment probe, child processes with timed line output, controllers.py).
        .target(name: "BluetideTestSupport", dependencies: ["BluetideSupport"], path: "Tests/BluetideTestSupport", swiftSettings: strict),
        .testTarget(
            name: "BluetideGatewayTests",
            dependencies: ["BluetideGateway", "BluetideMQTT", "BluetideTestSupport", "Bluetide", "BluetideCore", "BluetideProfiles", "BluetideRecording", "BluetideSupport", "BluetideEmulation", "BluetideEmulators"],
            swiftSettings: strict),
        .testTarget(name: "BluetideDBusTests", dependencies: ["BluetideDBus", "BluetideBlueZ", "BluetideTestSupport", "BluetideSupport", "Bluetide", "BluetideCore", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideMQTTTests", dependencies: ["BluetideMQTT", "BluetideTestSupport", "BluetideSupport"], swiftSettings: strict),
        .testTarget(name: "BluetideCoreTests", dependencies: ["BluetideCore", "BluetideSupport", "BluetideTestSupport"], swiftSettings: strict),
        .testTarget(name: "BluetideProfilesTests", dependencies: ["BluetideProfiles", "BluetideCore"], swiftSettings: strict),
        .testTarget(name: "BluetideRecordingTests", dependencies: ["BluetideRecording", "BluetideCore", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideEmulatorsTests", dependencies: ["BluetideEmulators", "BluetideCore", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideGPIOTests", dependencies: ["BluetideGPIO", "BluetideSupport", "BluetideCore"], swiftSettings: strict),
        .testTarget(
            name: "BluetideSecurityTests",
            dependencies: ["BluetideHost", "BluetideHCI", "BluetideCore", "BluetideTransport", "BluetideTestSupport", "BluetideSupport"],
            exclude: ["Bumble"], swiftSettings: strict),
        .testTarget(
            name: "BluetideCaptureTests",
            dependencies: [
                "BluetideCapture", "BluetideCore", "BluetideHCI", "BluetideHost", "BluetideTransport", "BluetideRecording",
                "Bluetide", "BluetideEmulation", "BluetideEmulators", "BluetideRing", "BluetideSupport", "BluetideProfiles",
                "BluetideCommands", "BluetideTestSupport",
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict),
        .testTarget(name: "BluetideHCITests", dependencies: ["BluetideHCI", "BluetideCore"], swiftSettings: strict),
        .testTarget(name: "BluetideVirtualTests", dependencies: ["BluetideVirtual", "BluetideCore", "BluetideHCI", "BluetideSupport", "BluetideTransport"], swiftSettings: strict),
        .testTarget(name: "BluetideTransportTests", dependencies: ["BluetideTransport", "BluetideHCI", "BluetideVirtual", "BluetideCore", .product(name: "NIOCore", package: "swift-nio")], swiftSettings: strict),
        .testTarget(name: "BluetideHostTests", dependencies: ["BluetideTestSupport", "BluetideSupport", "BluetideHost", "BluetideVirtual", "BluetideTransport", "BluetideHCI", "BluetideCore"], exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(name: "BluetideTests", dependencies: ["BluetideTestSupport", "BluetideSupport", "Bluetide", "BluetideCore", "BluetideHost", "BluetideVirtual", "BluetideTransport", "BluetideHCI", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideEmulationTests", dependencies: ["BluetideTestSupport", "BluetideSupport", "Bluetide", "BluetideHCI", "BluetideEmulation", "BluetideHost", "BluetideTransport", "BluetideEmulators", "BluetideProfiles", "BluetideRecording", "BluetideCore"], swiftSettings: strict),
        .testTarget(name: "BluetideReflexDeviceTests", dependencies: ["BluetideTestSupport", "BluetideSupport", "BluetideReflexDevice", "Bluetide", "BluetideGPIO", "BluetideHost", "BluetideTransport", "BluetideCore", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideReflexTests", dependencies: ["BluetideReflex", "BluetideCharts", "BluetideProfiles", .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: strict),
        .testTarget(name: "BluetideCLITests", dependencies: ["BluetideTestSupport", "BluetideSupport", "Bluetide", "BluetideCommands", "BluetideSerial", "BluetideDemo", "BluetideMQTT", "BluetideDBus", "BluetideBench", "BluetideProfiles", "bluetide", "BluetideRecording", "BluetideEmulation", "BluetideEmulators", "BluetideTransport", "BluetideHCI", "BluetideCore", "BluetideHost", .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "GRDB", package: "GRDB.swift"), .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"), .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .testTarget(name: "BluetideBlueZTests", dependencies: ["BluetideTestSupport", "Bluetide", "BluetideCore", "BluetideEmulators", "BluetideProfiles", "BluetideSupport", "bluetide"], swiftSettings: strict),
        .testTarget(name: "BluetideReflexCoachTests", dependencies: ["BluetideReflexCoach", "BluetideReflex", "Bluetide", "BluetideEmulation", "BluetideEmulators", "BluetideProfiles", "BluetideTransport", "BluetideCommands", "BluetideCore", .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: strict),
        .testTarget(
            name: "BluetideSerialTests",
            dependencies: [
                "BluetideCore", "BluetideProfiles", "BluetideSupport", "BluetideTestSupport", "BluetideSerial", "BluetideSerialWeb", "Bluetide",
                "BluetideEmulation", "BluetideEmulators", "BluetideTransport",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BluetideRingTests",
            dependencies: ["BluetideCore", "BluetideProfiles", "BluetideSupport", 
                "BluetideTestSupport", "BluetideRing", "BluetideRingWeb", "Bluetide", "BluetideEmulation", "BluetideEmulators",
                "BluetideTransport", "BluetideCommands", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BluetideRideTests",
            dependencies: [
                "BluetideSupport", "BluetideTestSupport", "BluetideRide", "BluetideRideWeb", "Bluetide", "BluetideCore",
                "BluetideProfiles", "BluetideRecording", "BluetideEmulation", "BluetideEmulators", "BluetideTransport",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BluetideReflexWebTests",
            dependencies: [
                "BluetideTestSupport", "BluetideReflexWeb", "BluetideReflex", "BluetideReflexCoach", "BluetideCommands",
                "Bluetide", "BluetideCore", "BluetideProfiles", "BluetideSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: strict),
    ]
)
