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
        } catch {
            // Help and version requests exit 0 as usual; every other usage error exits 2 like
            // the decode failures, with one line that names the bad argument and the help.
            if BluetideCommand.exitCode(for: error).isSuccess { BluetideCommand.exit(withError: error) }
            let line = UsageErrorLine.describe(error, arguments: arguments ?? Array(CommandLine.arguments.dropFirst()))
            FileHandle.standardError.write(Data("\(line)\n".utf8))
            exit(2)
        }
    }
}
