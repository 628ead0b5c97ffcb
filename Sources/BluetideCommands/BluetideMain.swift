import ArgumentParser
import Foundation

/// Entry point of the `bluetide` executable: user-facing failures print what was wrong and exit 2.
public enum BluetideMain {
    public static func run(_ arguments: [String]? = nil) async {
        do {
            var command = try BluetideCommand.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            FileHandle.standardError.write(Data("bluetide: \(failure.message)\n".utf8))
            exit(2)
        } catch let code as ExitCode where !code.isSuccess {
            // A command that already said why (e.g. interrupted by a signal) and chose its status.
            exit(code.rawValue)
        } catch {
            // Help and version requests exit 0 as usual; every other usage error exits 2 like
            // the decode failures, with ArgumentParser's message (which names the bad argument).
            if BluetideCommand.exitCode(for: error).isSuccess { BluetideCommand.exit(withError: error) }
            let message = BluetideCommand.fullMessage(for: error)
            FileHandle.standardError.write(Data("\(message)\n".utf8))
            exit(2)
        }
    }
}
