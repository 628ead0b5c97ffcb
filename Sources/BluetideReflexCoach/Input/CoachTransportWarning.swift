/// The warning for a trainer search on a virtual link nobody else is on: nothing can be found there.
public enum CoachTransportWarning {
    /// The warning line for `transport` and `emulate`, nil when a trainer can be there.
    public static func line(transport: String, emulate: Bool) -> String? {
        guard !emulate, transport == "virtual" || transport.hasPrefix("virtual+") else { return nil }
        return "warning: --transport \(transport) is a private virtual link with no trainer on it; add --emulate for an "
            + "emulated one, or name the trainer's transport (e.g. --transport hci-socket:0 or tcp-client:HOST:PORT)"
    }
}
