import BluetideBase
import BluetideHost

/// Where each characteristic value of a set of service definitions lands in a ``HostStack``'s
/// attribute database.
///
/// ``HostStack/valueHandle(of:in:)`` answers with the first match only, which is ambiguous when
/// two served devices share a service (a heart-rate belt and a battery both have 0x180F). The
/// database layout is a pure function of the definitions (GAP and GATT first, then the services
/// in order), so building the same ``GATTDatabase`` locally gives every value handle exactly.
struct AttributeLayout: Sendable {
    /// Value handles in definition order: `handles[service][characteristic]`.
    let handles: [[UInt16]]

    init(_ services: [GATTServiceDefinition]) {
        let database = GATTDatabase(deviceName: "", services: services)
        var values: [UInt16] = []
        for attribute in database.attributes {
            if case .characteristicValue = attribute.role { values.append(attribute.handle) }
        }
        // The GAP service has two characteristics and the GATT service one before ours.
        var cursor = 3
        var handles: [[UInt16]] = []
        for service in services {
            var row: [UInt16] = []
            for _ in service.characteristics {
                row.append(cursor < values.count ? values[cursor] : 0)
                cursor += 1
            }
            handles.append(row)
        }
        self.handles = handles
    }
}
