/// Fits what a peripheral wants to advertise into legacy advertising: 31 bytes of advertising
/// data plus 31 bytes of scan response (sent to scanners that ask, i.e. active scans).
///
/// The flags always go in the advertisement. Everything else stays there too when it fits;
/// otherwise pieces move to the scan response, cheapest first: the local name, then the
/// 128-bit service UUIDs, then service data, manufacturer data and finally the 16-bit UUIDs,
/// choosing the placement that moves the least. When no placement fits, ``layout()`` throws
/// ``PeripheralError/advertisingDataTooLong(_:)`` listing each piece and its size.
struct AdvertisingLayout: Sendable, Equatable {
    /// Bytes of advertising data or scan response legacy advertising carries.
    static let legacyLimit = AdvertisingData.legacyMaximumLength

    /// One AD structure and how much moving it to the scan response costs (lower moves first).
    struct Piece: Sendable, Equatable {
        var element: AdvertisingDataElement
        var label: String
        var moveCost: Int
        /// Length byte + type byte + data.
        var size: Int { 2 + element.data.count }
    }

    var flags: AdvertisingDataElement
    var pieces: [Piece]

    /// The pieces for a name, service UUIDs, manufacturer data (by company ID) and service data.
    init(name: String?, serviceUUIDs: [BluetoothUUID], manufacturerData: [UInt16: [UInt8]],
         serviceData: [BluetoothUUID: [UInt8]]) {
        flags = .flags([.leGeneralDiscoverable, .brEdrNotSupported])
        var pieces: [Piece] = []
        var seen = Set<BluetoothUUID>()
        let unique = serviceUUIDs.filter { seen.insert($0).inserted }
        let short = unique.filter { $0.uuid16 != nil }
        let long = unique.filter { $0.uuid16 == nil }
        if !short.isEmpty {
            pieces.append(Piece(element: .serviceUUIDs(short, size: .bits16, complete: true),
                                label: "16-bit service UUIDs", moveCost: 16))
        }
        if !long.isEmpty {
            pieces.append(Piece(element: .serviceUUIDs(long, size: .bits128, complete: true),
                                label: "128-bit service UUIDs", moveCost: 2))
        }
        for (uuid, data) in serviceData.sorted(by: { $0.key.description < $1.key.description }) {
            let size: AdvertisingUUIDSize = uuid.uuid16 != nil ? .bits16 : .bits128
            pieces.append(Piece(element: .serviceData(uuid, size: size, data: data),
                                label: "service data for \(uuid)", moveCost: 4))
        }
        for (company, data) in manufacturerData.sorted(by: { $0.key < $1.key }) {
            pieces.append(Piece(element: .manufacturerSpecificData(companyID: company, data: data),
                                label: "manufacturer data of company 0x\(String(company, radix: 16, uppercase: true))",
                                moveCost: 8))
        }
        if let name, !name.isEmpty {
            pieces.append(Piece(element: .completeLocalName(name), label: "local name \"\(name)\"", moveCost: 1))
        }
        self.pieces = pieces
    }

    /// The advertising data and the scan response (nil when nothing needs one).
    func layout() throws(PeripheralError) -> (advertising: AdvertisingData, scanResponse: AdvertisingData?) {
        let flagsSize = 2 + flags.data.count
        let limit = Self.legacyLimit
        // Pieces that fit neither packet on their own can never be placed.
        if let huge = pieces.first(where: { $0.size > limit }) {
            throw .advertisingDataTooLong(explanation(
                "\(huge.label) needs \(huge.size) bytes, more than one packet carries (\(limit))"))
        }
        guard pieces.count <= 16 else {
            throw .advertisingDataTooLong(explanation("\(pieces.count) separate pieces are too many to place"))
        }
        var best: (cost: Int, mask: Int)?
        for mask in 0..<(1 << pieces.count) {
            var inAdvertising = flagsSize
            var inResponse = 0
            var cost = 0
            for (index, piece) in pieces.enumerated() {
                if mask & (1 << index) != 0 {
                    inResponse += piece.size
                    cost += piece.moveCost
                } else {
                    inAdvertising += piece.size
                }
            }
            guard inAdvertising <= limit, inResponse <= limit else { continue }
            if let current = best, current.cost <= cost { continue }
            best = (cost, mask)
        }
        guard let best else {
            let total = flagsSize + pieces.reduce(0) { $0 + $1.size }
            throw .advertisingDataTooLong(explanation(
                "\(total) bytes in all cannot be split into two packets of \(limit) bytes"))
        }
        var advertising: [AdvertisingDataElement] = [flags]
        var response: [AdvertisingDataElement] = []
        for (index, piece) in pieces.enumerated() {
            if best.mask & (1 << index) != 0 { response.append(piece.element) } else { advertising.append(piece.element) }
        }
        return (AdvertisingData(advertising), response.isEmpty ? nil : AdvertisingData(response))
    }

    /// A readable account of why the data does not fit, with every piece's size.
    private func explanation(_ reason: String) -> String {
        let sizes = (["flags: 3 bytes"] + pieces.map { "\($0.label): \($0.size) bytes" }).joined(separator: ", ")
        return "advertising data does not fit legacy advertising (\(Self.legacyLimit) bytes of advertisement "
            + "+ \(Self.legacyLimit) bytes of scan response): \(reason). Pieces: \(sizes). "
            + "Shorten the name, advertise fewer UUIDs or less data."
    }
}
