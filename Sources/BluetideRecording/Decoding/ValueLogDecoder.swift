import BluetideBase
import BluetideProfiles

/// A record and what its value decodes to.
public struct DecodedValueRecord: Sendable {
    /// What decoding produced.
    public enum Outcome: Sendable {
        /// The value decoded (with derived values for stateful profiles).
        case decoded(DecodedPacket)
        /// The profile rejected the value (truncated, invalid field).
        case failed(DecodingError)
        /// No profile is known for this record's characteristic.
        case noProfile
    }

    /// The record as recorded.
    public var record: ValueRecord
    /// Name of the profile used, when there was one, e.g. `csc`.
    public var profile: String?
    /// The result.
    public var outcome: Outcome

    /// A record with its decoding result.
    public init(record: ValueRecord, profile: String?, outcome: Outcome) {
        self.record = record
        self.profile = profile
        self.outcome = outcome
    }

    /// The decoded packet, when decoding succeeded.
    public var packet: DecodedPacket? {
        if case let .decoded(packet) = outcome { return packet }
        return nil
    }

    /// One readable line: the packet's summary, the decoding error, or the raw hex.
    public var summary: String {
        switch outcome {
        case let .decoded(packet): return packet.summary
        case let .failed(error): return "undecodable: \(error)"
        case .noProfile: return record.value.spacedHex
        }
    }
}

/// Decodes the records of a value log (live or replayed) with the profiles of
/// ``BluetideProfiles/ProfileCatalog``.
///
/// Stateful profiles (CSC, Cycling Power, FE-C) derive speed, cadence and distance from the
/// sequence of packets, so the decoder keeps one profile decoder per (device, characteristic)
/// and feeds it each record at the record's recorded ``ValueRecord/timestamp``: a replay at any
/// pace yields the same derived values as decoding the packets live did.
///
/// The profile for a record is, in order: the one given to ``init(options:profile:)`` (applied
/// to every record), the profile named in the record, else the one registered for its
/// characteristic.
public struct ValueLogDecoder: Sendable {
    /// Why a decoder could not be made.
    public struct UnknownProfileError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The name given.
        public var name: String
        public var description: String {
            "unknown profile \"\(name)\": expected one of \(ProfileCatalog.all.map(\.name).joined(separator: ", "))"
        }
    }

    private struct StreamKey: Hashable, Sendable {
        var device: String
        var characteristic: BluetoothUUID
        var profile: String
    }

    /// Options for stateful profiles (wheel circumference). Changing them affects decoders made
    /// afterwards; call ``reset()`` to apply them to every stream.
    public var options: ProfileOptions
    /// The profile forced on every record, if any.
    public let forcedProfile: ProfileDescriptor?
    private var decoders: [StreamKey: any PacketDecoder] = [:]

    /// A decoder choosing each record's profile itself, or using `profile` for all records.
    public init(options: ProfileOptions = ProfileOptions(), profile: ProfileDescriptor? = nil) {
        self.options = options
        forcedProfile = profile
    }

    /// A decoder that decodes every record with the catalog profile called `name` (e.g. `csc`).
    public init(options: ProfileOptions = ProfileOptions(), profileNamed name: String) throws(UnknownProfileError) {
        guard let profile = ProfileCatalog.named(name) else { throw UnknownProfileError(name: name) }
        self.init(options: options, profile: profile)
    }

    /// The profile that would decode `record`, if any.
    public func profile(for record: ValueRecord) -> ProfileDescriptor? {
        if let forcedProfile { return forcedProfile }
        if let name = record.profile, let named = ProfileCatalog.named(name) { return named }
        return ProfileCatalog.forCharacteristic(record.characteristic)
    }

    /// Decodes one record, continuing the sequence of its (device, characteristic).
    public mutating func decode(_ record: ValueRecord) -> DecodedValueRecord {
        guard let profile = profile(for: record) else {
            return DecodedValueRecord(record: record, profile: nil, outcome: .noProfile)
        }
        let key = StreamKey(
            device: record.device.address.uppercased(), characteristic: record.characteristic, profile: profile.name)
        var decoder = decoders.removeValue(forKey: key) ?? profile.makeDecoder(options)
        let outcome: DecodedValueRecord.Outcome
        do {
            outcome = .decoded(try decoder.decode(record.value, at: record.timestamp))
        } catch {
            outcome = .failed(error)
        }
        decoders[key] = decoder
        return DecodedValueRecord(record: record, profile: profile.name, outcome: outcome)
    }

    /// Forgets every stream's state (e.g. before replaying again from the start).
    public mutating func reset() { decoders.removeAll() }
}
