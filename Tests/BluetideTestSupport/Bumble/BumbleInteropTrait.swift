import Testing

extension Trait where Self == ConditionTrait {
    /// Skips a test or suite when `BLUETIDE_SKIP_BUMBLE=1`, and outside CI when Python cannot
    /// import Bumble (one line says what to install); otherwise it runs, and in CI (`CI=true`) a
    /// missing Bumble fails it with the install command (see ``OptionalTool``). Put it on every
    /// test that starts Python/Bumble.
    public static var bumbleInterop: Self {
        .enabled("Bumble interop tests skipped: BLUETIDE_SKIP_BUMBLE=1, or outside CI Bumble is not installed (\(BumbleEnvironment.installHint))") {
            if BumbleEnvironment.isSkipRequested { return false }
            if OptionalTool.isCI { return true }
            return await BumbleEnvironment.probe().problem == nil
        }
    }
}
