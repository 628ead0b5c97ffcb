/// Byte order of a multi-byte wire value. Bluetooth LE is little-endian almost everywhere;
/// a few vendor formats (COLMI activity counters, raw sensor samples) are big-endian.
public enum Endianness: Sendable, Equatable {
    case little
    case big
}
