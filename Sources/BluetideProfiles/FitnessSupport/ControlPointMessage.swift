import BluetideBase

/// A control-point request type (client → device) of a SIG profile.
public protocol ControlPointRequest: GATTCodable, Equatable, Encodable {
    /// One readable line.
    var summary: String { get }
}

/// A control-point response type (device → client), recognised by its first byte.
public protocol ControlPointResponse: GATTCodable, Equatable, Encodable {
    /// The first byte of every response (0x10 for SC Control Point, 0x20 for Cycling Power).
    static var responseCode: UInt8 { get }
    /// One readable line.
    var summary: String { get }
}

/// Anything seen on a control point that shares requests and responses on one characteristic:
/// a response when the first byte is the profile's response code, else a request.
public enum ControlPointMessage<Request: ControlPointRequest, Response: ControlPointResponse>:
    Equatable, Sendable, Encodable, GATTCodable
{
    case request(Request)
    case response(Response)

    public init(from reader: inout ByteReader) throws(DecodingError) {
        if reader.peek() == Response.responseCode {
            self = .response(try Response(from: &reader))
        } else {
            self = .request(try Request(from: &reader))
        }
    }

    public func encode(to writer: inout ByteWriter) {
        switch self {
        case let .request(request): request.encode(to: &writer)
        case let .response(response): response.encode(to: &writer)
        }
    }

    /// The request's or response's summary.
    public var summary: String {
        switch self {
        case let .request(request): request.summary
        case let .response(response): response.summary
        }
    }

    /// JSON: the request or response object.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case let .request(request): try request.encode(to: encoder)
        case let .response(response): try response.encode(to: encoder)
        }
    }
}

extension ControlPointMessage: Hashable where Request: Hashable, Response: Hashable {}
