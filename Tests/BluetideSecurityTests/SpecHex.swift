import BluetideBase

/// Bytes in wire order (least significant first) from hex written as the specification writes
/// its sample data (most significant octet first, spaces allowed).
func wire(_ specHex: String) -> [UInt8] { Array(msbFirst(specHex).reversed()) }

/// Bytes from hex in the order written (spaces allowed).
func msbFirst(_ hex: String) -> [UInt8] {
    // Test inputs are literals in this file's callers; a typo fails the test that uses it.
    (try? Hex.parse(hex.filter { $0 != " " })) ?? []
}
