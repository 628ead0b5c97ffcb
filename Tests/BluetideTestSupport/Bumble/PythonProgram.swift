import Foundation

/// A Python program for `BumbleProcess.launchPython`: a module (`-m`), a script file, or one of
/// the interop scripts in `Interop/bumble`.
public enum PythonProgram: Sendable, CustomStringConvertible {
    /// `python3 -m <module>`, e.g. `bumble.apps.bench` or `bumble.apps.controllers`.
    case module(String)
    /// A script file anywhere.
    case script(URL)
    /// A script in `BumbleEnvironment.scriptsDirectory`, by file name (e.g. `peripheral.py`).
    case interopScript(String)

    /// Short name for messages: the module's last component or the file name without `.py`.
    public var shortName: String {
        switch self {
        case .module(let module): String(module.split(separator: ".").last ?? Substring(module))
        case .script(let url): url.deletingPathExtension().lastPathComponent
        case .interopScript(let file): URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        }
    }

    /// The script file, when this is a script.
    public var scriptFile: URL? {
        switch self {
        case .module: nil
        case .script(let url): url
        case .interopScript(let file): BumbleEnvironment.scriptsDirectory.appendingPathComponent(file)
        }
    }

    /// What follows the interpreter on the command line, before the program's own arguments.
    var interpreterArguments: [String] {
        switch self {
        case .module(let module): ["-u", "-m", module]
        case .script, .interopScript: ["-u", scriptFile?.path ?? ""]
        }
    }

    public var description: String {
        switch self {
        case .module(let module): "-m \(module)"
        case .script, .interopScript: scriptFile?.path ?? ""
        }
    }
}

extension BumbleProcess {
    /// Starts `python3 -u <program> <arguments>` with the interpreter found by
    /// `BumbleEnvironment.requirePython()` (which fails with the install command when Bumble is
    /// missing). Example: `launchPython(.module("bumble.apps.bench"), arguments: ["peripheral",
    /// "tcp-client:127.0.0.1:\(port)"])`; Bumble's apps log to stderr (`stderrLines`).
    /// - Parameters:
    ///   - name: for messages; defaults to `program.shortName`.
    ///   - stderrLog: a file that also receives the process's stderr.
    ///   - environment: added to this process's environment.
    public static func launchPython(
        _ program: PythonProgram, arguments: [String] = [], name: String? = nil, stderrLog: URL? = nil,
        environment: [String: String] = [:]
    ) async throws -> BumbleProcess {
        let python = try await BumbleEnvironment.requirePython()
        if let file = program.scriptFile, !FileManager.default.fileExists(atPath: file.path) {
            throw BumbleHarnessError(description: "missing Python script \(file.path)")
        }
        return try launch(
            name: name ?? program.shortName, executable: python,
            arguments: program.interpreterArguments + arguments, stderrLog: stderrLog,
            environment: environment)
    }
}
