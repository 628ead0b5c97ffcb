import BluetideBase
import BluetideHost

/// The captured handles of a cloned database, for ``Peripheral/serve(placed:)``: every service
/// declaration, characteristic declaration, value and descriptor at the handle the capture
/// showed, gaps kept. What the capture did not show gets a free handle next to what it belongs
/// to: an inferred service's or characteristic's declaration just before its first attribute,
/// a CCCD never discovered just after the characteristic's last descriptor.
struct ClonePlacement {
    /// One service to place: its definition and the captured handles (nil: not seen).
    struct Service {
        var definition: GATTServiceDefinition
        var handle: Int?
        /// The captured group end; nil when inferred (then it ends at its last attribute).
        var endHandle: Int?
        var characteristics: [Characteristic]
    }

    /// One characteristic's captured handles; `descriptors` are those of the definition's
    /// descriptors, in order.
    struct Characteristic {
        var declaration: Int?
        var value: Int
        /// The captured CCCD's handle.
        var configuration: Int?
        /// Whether it needs a CCCD (notify or indicate) even though none was captured.
        var needsConfiguration: Bool
        var descriptors: [Int]
    }

    private enum Kind { case fixed, beforeNext, afterPrevious, end }
    private struct Slot {
        var handle: Int?
        let kind: Kind
        let what: String
    }

    /// The placements, or why the captured handles cannot be served as they are (the message
    /// names the attribute without room or the rule broken).
    static func place(_ services: [Service]) throws(GATTPlacementError) -> [GATTServicePlacement] {
        // Every attribute in handle order, with the group ends as bounds.
        var slots: [Slot] = []
        for service in services {
            let name = service.definition.uuid.shortString
            slots.append(Slot(handle: service.handle, kind: service.handle == nil ? .beforeNext : .fixed, what: "the declaration of service \(name)"))
            for (c, definition) in zip(service.characteristics, service.definition.characteristics) {
                let char = definition.uuid.shortString
                slots.append(Slot(handle: c.declaration, kind: c.declaration == nil ? .beforeNext : .fixed, what: "the declaration of \(char)"))
                slots.append(Slot(handle: c.value, kind: .fixed, what: "the value of \(char)"))
                let captured = (c.descriptors + (c.configuration.map { [$0] } ?? [])).sorted()
                for handle in captured { slots.append(Slot(handle: handle, kind: .fixed, what: "a descriptor of \(char)")) }
                if c.configuration == nil, c.needsConfiguration {
                    slots.append(Slot(handle: nil, kind: .afterPrevious, what: "the CCCD of \(char)"))
                }
            }
            // A captured group end bounds what is placed after its last attribute.
            if let end = service.endHandle { slots.append(Slot(handle: end + 1, kind: .end, what: "the end of service \(name)")) }
        }
        // Fill each run of unknown handles between two known ones: those that follow what comes
        // before them upward from it, those that precede what follows downward from it.
        var index = 0
        while index < slots.count {
            guard slots[index].handle == nil else { index += 1; continue }
            var stop = index
            while stop < slots.count, slots[stop].handle == nil { stop += 1 }
            let below = index > 0 ? slots[index - 1].handle! - (slots[index - 1].kind == .end ? 1 : 0) : 0
            let above = stop < slots.count ? slots[stop].handle! : 0x1_0000
            let run = index..<stop
            let after = run.filter { slots[$0].kind == .afterPrevious }
            let before = run.filter { slots[$0].kind != .afterPrevious }
            for (offset, i) in after.enumerated() { slots[i].handle = below + 1 + offset }
            for (offset, i) in before.enumerated() { slots[i].handle = above - before.count + offset }
            let placed = run.map { slots[$0].handle! }
            guard placed.allSatisfy({ $0 > below && $0 < above && $0 <= 0xFFFF }), zip(placed, placed.dropFirst()).allSatisfy({ $0 < $1 }) else {
                throw GATTPlacementError(description: "no free handle for \(slots[index].what) between 0x\(String(below, radix: 16)) and 0x\(String(above, radix: 16))")
            }
            index = stop
        }

        // Read the handles back, service by service.
        var cursor = 0
        func take() -> UInt16 {
            defer { cursor += 1 }
            return UInt16(clamping: slots[cursor].handle ?? 0)
        }
        var placements: [GATTServicePlacement] = []
        for service in services {
            let start = take()
            var last = start
            var characteristics: [GATTCharacteristicPlacement] = []
            for c in service.characteristics {
                let declaration = take()
                let value = take()
                let captured = (c.descriptors.map { (handle: $0, isConfiguration: false) }
                    + (c.configuration.map { [(handle: $0, isConfiguration: true)] } ?? [])).sorted { $0.handle < $1.handle }
                var configuration: UInt16?
                for entry in captured {
                    let handle = take()
                    if entry.isConfiguration { configuration = handle }
                }
                if c.configuration == nil, c.needsConfiguration { configuration = take() }
                last = max(value, configuration ?? 0, UInt16(clamping: c.descriptors.max() ?? 0))
                characteristics.append(GATTCharacteristicPlacement(
                    declarationHandle: declaration, valueHandle: value, configurationHandle: configuration,
                    descriptorHandles: c.descriptors.map { UInt16(clamping: $0) }))
            }
            var end = last
            if service.endHandle != nil {
                end = UInt16(clamping: (slots[cursor].handle ?? 1) - 1)
                cursor += 1
            }
            placements.append(GATTServicePlacement(
                definition: service.definition, handle: start, endHandle: max(end, last), characteristics: characteristics))
        }
        return placements
    }
}
