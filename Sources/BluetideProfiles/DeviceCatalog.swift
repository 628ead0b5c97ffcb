import BluetideBase

// COLMI R02, Punch (reflex trainer), Nordic UART / HM-10 entries for ProfileCatalog.
extension ProfileCatalog {
    static let deviceProfiles: [ProfileDescriptor] = [
        ProfileDescriptor(
            name: "colmi",
            summary: "COLMI R02 ring notifications: 16-byte V1 packets and V2 big-data frames (HR log, steps, stress and HRV reassembled)",
            characteristic: COLMIUUID.notify, isStateful: true
        ) { _ in COLMINotificationDecoder() },
        ProfileDescriptor(
            name: "punch-response", summary: "Reflex trainer punchResponse: one step's result (8-byte or legacy 5-byte form)",
            characteristic: PunchUUID.response
        ) { _ in
            StatelessDecoder { bytes throws(DecodingError) in
                let response = try PunchResponse(exactly: bytes)
                return DecodedPacket(summary: response.summary, value: response)
            }
        },
        ProfileDescriptor(
            name: "punch-sequence", summary: "Reflex trainer punchSequence: target index 0-5 per step",
            characteristic: PunchUUID.sequence
        ) { _ in
            StatelessDecoder { bytes throws(DecodingError) in
                let sequence = try PunchSequence(exactly: bytes)
                return DecodedPacket(
                    summary: "\(sequence.count) steps: targets \(sequence.targets.map(String.init).joined(separator: " "))",
                    value: sequence)
            }
        },
        ProfileDescriptor(
            name: "punch-time-sequence", summary: "Reflex trainer punchTimeSequence: milliseconds lit per step",
            characteristic: PunchUUID.timeSequence
        ) { _ in
            StatelessDecoder { bytes throws(DecodingError) in
                let times = try PunchTimeSequence(exactly: bytes)
                let total = times.milliseconds.reduce(0) { $0 + Int($1) }
                return DecodedPacket(
                    summary: "\(times.count) steps: \(times.milliseconds.map { "\($0)" }.joined(separator: " ")) ms (total \(Double(total) / 1000) s)",
                    value: times)
            }
        },
        ProfileDescriptor(
            name: "punch-control", summary: "Reflex trainer punchControl: commands (start, stop, countdown) and statuses",
            characteristic: PunchUUID.control
        ) { _ in
            StatelessDecoder { bytes throws(DecodingError) in
                let message = try PunchControlMessage(exactly: bytes)
                return DecodedPacket(summary: message.summary, value: message)
            }
        },
    ]
}
