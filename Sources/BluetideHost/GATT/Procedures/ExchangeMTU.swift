import BluetideBase

/// Exchange MTU (Core Vol 3 Part G 4.3.1): offers our receive MTU and gives the server's. The
/// bearer lowers an offer above its own receive MTU, and applies the effective MTU (the smaller
/// of both) when the response passes through it.
public struct ExchangeMTU: GATTProcedure {
    /// The receive MTU offered, octets.
    public let clientMTU: Int

    /// Offers `clientMTU` octets (clamped to 0…65535).
    public init(clientMTU: Int) { self.clientMTU = clientMTU }

    public mutating func start() -> GATTProcedureStep<Int> {
        .send(.exchangeMTURequest(clientMTU: UInt16(clamping: clientMTU)))
    }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<Int> {
        GATTResponse.finish(response, answering: .exchangeMTURequest) {
            if case let .exchangeMTUResponse(serverMTU) = $0 { Int(serverMTU) } else { nil }
        }
    }
}
