// swift-tools-version: 6.1
import PackageDescription

// Layers (see docs/ARCHITECTURE-NOTES.md and ../shared/ARCHITECTURE.md): arrows only point down.
//   bluetide (CLI) → BluetideHost → BluetideTransport → BluetideVirtual → BluetideHCI → BluetideCore
//                  → BluetideProfiles → BluetideCore
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
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The coach dashboard's password hash (PBKDF2 in CryptoExtras).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        .target(name: "BluetideCore", swiftSettings: strict),
        .target(name: "BluetideProfiles", dependencies: ["BluetideCore"], swiftSettings: strict),
        .target(name: "BluetideRecording", dependencies: ["BluetideCore", "BluetideProfiles"], swiftSettings: strict),
        .target(name: "BluetideEmulators", dependencies: ["BluetideCore", "BluetideProfiles"], swiftSettings: strict),
        .target(name: "BluetideGPIO", dependencies: ["BluetideCore"], swiftSettings: strict),
        .target(name: "BluetideHCI", dependencies: ["BluetideCore"], swiftSettings: strict),
        .target(name: "BluetideVirtual", dependencies: ["BluetideCore", "BluetideHCI"], swiftSettings: strict),
        .target(
            name: "BluetideTransport",
            dependencies: [
                "BluetideCore", "BluetideHCI", "BluetideVirtual",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict),
        .target(
            name: "BluetideHost",
            dependencies: ["BluetideCore", "BluetideHCI", "BluetideTransport"],
            swiftSettings: strict),
        .target(
            name: "Bluetide",
            dependencies: ["BluetideCore", "BluetideProfiles", "BluetideHCI", "BluetideTransport", "BluetideHost", "BluetideVirtual"],
            swiftSettings: strict),
        .target(
            name: "BluetideEmulation",
            dependencies: ["BluetideCore", "BluetideProfiles", "BluetideEmulators", "BluetideHost", "BluetideTransport", "BluetideRecording"],
            swiftSettings: strict),
        .target(
            name: "BluetideCharts",
            dependencies: [],
            swiftSettings: strict),
        .target(
            name: "BluetideReflex",
            dependencies: ["BluetideCharts", "BluetideCore", "BluetideProfiles", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
        .target(
            name: "BluetideReflexDevice",
            dependencies: ["Bluetide", "BluetideGPIO", "BluetideProfiles", "BluetideHost"],
            swiftSettings: strict),
        .target(
            name: "BluetideReflexCoach",
            dependencies: ["Bluetide", "BluetideReflex", "BluetideProfiles", "BluetideCore"],
            swiftSettings: strict),
        .target(
            name: "BluetideReflexWeb",
            dependencies: [
                "Bluetide", "BluetideReflex", "BluetideReflexCoach", "BluetideProfiles", "BluetideCore", "BluetideCharts",
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
        .target(
            name: "BluetideCommands",
            dependencies: [
                "BluetideCore", "BluetideProfiles", "BluetideHost", "BluetideTransport", "BluetideVirtual",
                "BluetideRecording", "BluetideEmulators", "BluetideEmulation", "Bluetide", "BluetideReflexDevice", "BluetideGPIO",
                "BluetideReflex", "BluetideReflexCoach", "BluetideReflexWeb",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        .executableTarget(name: "bluetide", dependencies: ["BluetideCommands"], swiftSettings: strict),
        // Shared by the test targets: run-time limits for hang guards, and the Bumble interop
        // harness (Bumble/: environment probe, child processes with timed line output, controllers.py).
        .target(name: "BluetideTestSupport", path: "Tests/BluetideTestSupport", swiftSettings: strict),
        .testTarget(name: "BluetideCoreTests", dependencies: ["BluetideCore"], swiftSettings: strict),
        .testTarget(name: "BluetideProfilesTests", dependencies: ["BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideRecordingTests", dependencies: ["BluetideRecording", "BluetideCore", "BluetideProfiles"], swiftSettings: strict),
        .testTarget(name: "BluetideEmulatorsTests", dependencies: ["BluetideEmulators"], swiftSettings: strict),
        .testTarget(name: "BluetideGPIOTests", dependencies: ["BluetideGPIO"], swiftSettings: strict),
        .testTarget(name: "BluetideHCITests", dependencies: ["BluetideHCI"], swiftSettings: strict),
        .testTarget(name: "BluetideVirtualTests", dependencies: ["BluetideVirtual"], swiftSettings: strict),
        .testTarget(name: "BluetideTransportTests", dependencies: ["BluetideTransport", "BluetideHCI", "BluetideVirtual"], swiftSettings: strict),
        .testTarget(name: "BluetideHostTests", dependencies: ["BluetideTestSupport", "BluetideHost", "BluetideVirtual", "BluetideTransport", "BluetideHCI", "BluetideCore"], swiftSettings: strict),
        .testTarget(name: "BluetideTests", dependencies: ["BluetideTestSupport", "Bluetide", "BluetideVirtual", "BluetideTransport", "BluetideHost"], swiftSettings: strict),
        .testTarget(name: "BluetideEmulationTests", dependencies: ["BluetideTestSupport", "BluetideEmulation", "BluetideHost", "BluetideTransport", "BluetideEmulators", "BluetideProfiles", "BluetideRecording", "BluetideCore"], swiftSettings: strict),
        .testTarget(name: "BluetideReflexDeviceTests", dependencies: ["BluetideTestSupport", "BluetideReflexDevice", "Bluetide", "BluetideGPIO", "BluetideHost", "BluetideTransport"], swiftSettings: strict),
        .testTarget(name: "BluetideReflexTests", dependencies: ["BluetideReflex", "BluetideCharts", "BluetideProfiles", .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: strict),
        .testTarget(name: "BluetideCLITests", dependencies: ["BluetideTestSupport", "BluetideCommands", "bluetide", "BluetideRecording", "BluetideEmulation", "BluetideEmulators", "BluetideTransport", "BluetideCore", "BluetideHost"], swiftSettings: strict),
        .testTarget(name: "BluetideReflexCoachTests", dependencies: ["BluetideReflexCoach", "BluetideReflex", "Bluetide", "BluetideEmulation", "BluetideEmulators", "BluetideProfiles", "BluetideTransport", "BluetideVirtual", "BluetideCommands"], swiftSettings: strict),
        .testTarget(
            name: "BluetideReflexWebTests",
            dependencies: [
                "BluetideTestSupport", "BluetideReflexWeb", "BluetideReflex", "BluetideReflexCoach", "BluetideCommands", "BluetideProfiles",
                "Bluetide",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: strict),
    ]
)
