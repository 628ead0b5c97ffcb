/// A yes/no setting read from an environment variable (`BLUETIDE_VIRTUAL_TIME`,
/// `BLUETIDE_ONE_THREAD`): on when it is `1`, `true` or `yes` in any case; off when unset or
/// anything else.
enum EnvironmentFlag {
    /// Whether `name` is set to a yes in `environment`.
    static func isOn(_ name: String, in environment: [String: String]) -> Bool {
        guard let value = environment[name] else { return false }
        return ["1", "true", "yes"].contains(value.lowercased())
    }
}
