import Foundation

/// The one failure every `serve` command (`reflex coach serve`, `ring serve`, `ride serve`)
/// reports when its web server cannot listen: the same words and exit status 1 (a runtime
/// failure: the port is taken, not mistyped), naming the address and what to try, without the
/// socket call's internals (`bind(descriptor:ptr:bytes:)`).
enum ListenFailure {
    /// The failure for `error`, thrown while listening on `host`:`port`.
    static func failure(host: String, port: Int, _ error: any Error) -> CommandFailure {
        var failure = CommandFailure(message(host: host, port: port, error))
        failure.status = .failure
        failure.field = "--port"
        return failure
    }

    /// `cannot listen on 127.0.0.1:8080: the port is in use …; …`.
    static func message(host: String, port: Int, _ error: any Error) -> String {
        let text = "\(error)"
        let address = "\(host.contains(":") ? "[\(host)]" : host):\(port)"
        let suggestion = port == 0 ? "check --host" : "pick another with --port (e.g. --port \(port + 1)), or --port 0 for any free one"
        if isAddressInUse(text) {
            return "cannot listen on \(address): the port is in use (another program, or another bluetide serve, listens there); stop it, or \(suggestion)"
        }
        return "cannot listen on \(address): \(reason(text)); \(suggestion)"
    }

    /// True when the error says the address is taken (EADDRINUSE, as NIO and the OS word it).
    static func isAddressInUse(_ text: String) -> Bool {
        text.localizedCaseInsensitiveContains("address already in use") || text.contains("EADDRINUSE")
            || text.contains("errno: \(EADDRINUSE))")
    }

    /// The OS's reason without the name of the call that failed: `bind(descriptor:ptr:bytes:):
    /// Permission denied (errno: 13)` → `Permission denied (errno: 13)`.
    static func reason(_ text: String) -> String {
        guard let call = text.range(of: #"^[A-Za-z_][A-Za-z0-9_]*\([A-Za-z0-9_:]*\): "#, options: .regularExpression) else { return text }
        return String(text[call.upperBound...])
    }
}
