/// The one place the package's version is written: `bluetide --version`, value-log headers and
/// anything else that says which Bluetide made it read it from here.
public enum BluetideVersion {
    /// Semantic version of this source tree, e.g. `0.1.0`.
    public static let current = "0.1.0"
}
