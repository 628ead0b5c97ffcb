import Testing

extension Trait where Self == ConditionTrait {
    /// Skips a test or suite when `BLUETIDE_SKIP_BUMBLE=1`; otherwise it runs (and fails with the
    /// install command if Bumble is missing). Put it on every test that starts Python/Bumble.
    public static var bumbleInterop: Self {
        .enabled(
            if: !BumbleEnvironment.isSkipRequested,
            "Bumble interop tests skipped because BLUETIDE_SKIP_BUMBLE=1")
    }
}
