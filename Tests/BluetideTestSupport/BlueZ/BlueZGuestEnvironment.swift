import Foundation

/// Whether the BlueZ guest (`Interop/bluez`: a Debian 12 image booted under qemu) can run here,
/// and where its pieces are.
///
/// Outside CI a machine without qemu or debootstrap skips the BlueZ tests with one line (see the
/// `.bluezGuest` trait); in CI (`CI=true`) they run and fail with the install command instead.
/// `BLUETIDE_SKIP_BLUEZ=1` skips them anywhere. The image lives in `BLUETIDE_BLUEZ_CACHE`
/// (default `/var/cache/bluetide-bluez`) and is built by `Interop/bluez/build-image.sh` when missing.
public enum BlueZGuestEnvironment {
    /// The programs the rig needs on the host, with the Debian package that has each.
    public static let requiredTools: [(tool: String, package: String)] = [
        ("qemu-system-x86_64", "qemu-system-x86"), ("debootstrap", "debootstrap"), ("mkfs.ext4", "e2fsprogs"),
    ]

    /// True when running in CI (`CI=true`): missing tools then fail instead of skipping.
    public static var isCI: Bool { OptionalTool.isCI }

    /// The tools of `requiredTools` not found on `PATH`.
    public static var missingTools: [(tool: String, package: String)] {
        requiredTools.filter { executable(named: $0.tool) == nil }
    }

    /// Why the BlueZ tests are skipped on this machine, or `nil` when they run.
    public static var skipReason: String? {
        if ProcessInfo.processInfo.environment["BLUETIDE_SKIP_BLUEZ"] == "1" {
            return "BlueZ guest tests skipped because BLUETIDE_SKIP_BLUEZ=1"
        }
        let missing = missingTools
        guard !missing.isEmpty, !isCI else { return nil }
        return "BlueZ guest tests skipped: \(missing.map(\.tool).joined(separator: ", ")) not installed (apt-get install \(missing.map(\.package).joined(separator: " ")))"
    }

    /// `Interop/bluez` in the repository.
    public static var rigDirectory: URL {
        BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/bluez", isDirectory: true)
    }

    /// Where the built image is kept between runs.
    public static var imageDirectory: URL {
        let override = ProcessInfo.processInfo.environment["BLUETIDE_BLUEZ_CACHE"] ?? ""
        return URL(fileURLWithPath: override.isEmpty ? "/var/cache/bluetide-bluez" : override, isDirectory: true)
    }

    /// Throws the install command when a tool is missing (the trait already skipped outside CI).
    public static func requireTools() throws {
        let missing = missingTools
        guard missing.isEmpty else {
            throw BumbleHarnessError(description: "the BlueZ guest needs \(missing.map(\.tool).joined(separator: ", ")): apt-get install \(missing.map(\.package).joined(separator: " "))")
        }
    }

    /// Runs `build-image.sh` (it returns at once when the image is up to date) and returns its
    /// output's last line; throws with the output's tail when it fails.
    public static func buildImage(timeout: Duration = .seconds(900)) async throws -> String {
        try requireTools()
        let script = rigDirectory.appendingPathComponent("build-image.sh")
        let build = try BumbleProcess.launch(name: "build-image", executable: URL(fileURLWithPath: "/bin/bash"), arguments: [script.path])
        let status = await build.waitForCompletion(timeout: timeout)
        let output = await build.output(.either)
        if status == nil { await build.stop() }
        guard status == 0 else {
            throw BumbleHarnessError(description: "Interop/bluez/build-image.sh \(status.map { "exited \($0)" } ?? "did not finish in \(timeout)"): \(output.suffix(8).joined(separator: " | "))")
        }
        return output.last ?? ""
    }

    /// The folder of the Swift runtime this process runs on (shared with the guest so the host's
    /// `bluetide` binary runs there), found from the loaded `libswiftCore.so`.
    public static var swiftRuntimeDirectory: URL? {
        // /proc files report a size of 0, so read to the end instead of by size.
        guard let data = FileHandle(forReadingAtPath: "/proc/self/maps")?.readDataToEndOfFile() else { return nil }
        let maps = String(decoding: data, as: UTF8.self)
        for line in maps.split(separator: "\n") where line.hasSuffix("/libswiftCore.so") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            return URL(fileURLWithPath: String(line[slash...])).deletingLastPathComponent()
        }
        return nil
    }

    /// The first executable called `name` on `PATH` (plus the sbin folders, where debootstrap lives).
    public static func executable(named name: String) -> URL? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/sbin:/usr/local/sbin"
        for folder in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
