import Testing

extension Trait where Self == ConditionTrait {
    /// Skips a test or suite with one line when the BlueZ guest cannot run here (no qemu or
    /// debootstrap outside CI, or `BLUETIDE_SKIP_BLUEZ=1`); in CI a missing tool fails instead.
    public static var bluezGuest: Self {
        .enabled(if: BlueZGuestEnvironment.skipReason == nil, Comment(rawValue: BlueZGuestEnvironment.skipReason ?? ""))
    }
}
