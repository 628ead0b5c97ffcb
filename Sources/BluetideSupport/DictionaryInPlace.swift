extension Dictionary {
    /// Runs `body` on the value stored for `key`, in place, and returns its result; nil (and
    /// `body` is not run) when there is no such key.
    ///
    /// For the data path's large value types (a controller's state, a link, a host port):
    /// `dictionary[key]?.change()` moves the value out into the accessor's coroutine frame,
    /// which is heap-allocated when the value is that large (a `malloc` and `free` per access),
    /// and reading `dictionary[key]?.field` copies the whole value (a retain and release of each
    /// of its references). Through the index and `values` the value is reached where it lies.
    @inlinable
    public mutating func inPlace<Result>(_ key: Key, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let index = index(forKey: key) else { return nil }
        return try body(&values[index])
    }
}
