import BluetideBase

/// What a GATT client procedure wants next: send a request and hand it the answer, or nothing
/// more because it has its result.
public enum GATTProcedureStep<Output: Sendable>: Sendable {
    /// Send this request; pass its response (or the bearer's failure) back to the procedure.
    case send(ATTPDU)
    /// The procedure ended with a value or an error.
    case finished(Result<Output, any Error>)

    /// The same step with the result transformed.
    func map<T: Sendable>(_ transform: (Output) -> T) -> GATTProcedureStep<T> {
        switch self {
        case let .send(pdu): .send(pdu)
        case let .finished(result): .finished(result.map(transform))
        }
    }
}

/// One GATT client procedure (Core Vol 3 Part G 4) as a pure state machine: ``start()`` gives
/// the first request, each response gives the next request or the result. No I/O, no time, no
/// concurrency: a driver sends the requests one at a time — the host core on a stack link, or
/// ``GATTClient`` over an ``ATTRequestChannel`` — so the procedure's logic exists once.
///
/// A procedure built with an MTU uses the effective ATT MTU at its start for its whole run
/// (long reads stop at a part shorter than MTU − 1, long writes send parts of MTU − 5).
public protocol GATTProcedure: Sendable {
    /// What the procedure produces.
    associatedtype Output: Sendable

    /// The first request, or the result when none is needed (an empty handle range, a
    /// characteristic that cannot be subscribed to).
    mutating func start() -> GATTProcedureStep<Output>

    /// The server's response to the last request (an Error Response is a response).
    mutating func handle(response: ATTPDU) -> GATTProcedureStep<Output>

    /// The last request failed below ATT (transaction timeout, link loss, a response that did
    /// not decode, the caller gave up). Most procedures end with the failure; a long write
    /// first cancels the server's prepared-write queue.
    mutating func handle(failure: any Error) -> GATTProcedureStep<Output>
}

extension GATTProcedure {
    /// The default: the procedure ends with the failure.
    public mutating func handle(failure: any Error) -> GATTProcedureStep<Output> { .finished(.failure(failure)) }
}

/// The checks every procedure makes on a response.
enum GATTResponse {
    /// `response` when it answers `request`; an Error Response becomes
    /// ``GATTClientError/att(_:handle:request:)``, any other opcode
    /// ``GATTClientError/unexpectedResponse(_:request:)``.
    static func check(_ response: ATTPDU, answering request: ATTOpcode) throws(GATTClientError) -> ATTPDU {
        if case let .errorResponse(op, handle, code) = response { throw .att(code, handle: handle, request: op) }
        guard response.opcode == request.responseOpcode else { throw .unexpectedResponse(response, request: request) }
        return response
    }

    /// The end of a one-request procedure: what `extract` takes from the response to `request`,
    /// or the error the response stands for.
    static func finish<T: Sendable>(
        _ response: ATTPDU, answering request: ATTOpcode, _ extract: (ATTPDU) -> T?
    ) -> GATTProcedureStep<T> {
        do {
            guard let value = extract(try check(response, answering: request)) else {
                throw GATTClientError.unexpectedResponse(response, request: request)
            }
            return .finished(.success(value))
        } catch {
            return .finished(.failure(error))
        }
    }

    /// Like ``check(_:answering:)``, but Attribute Not Found — the normal end of a discovery —
    /// gives nil.
    static func discovery(_ response: ATTPDU, answering request: ATTOpcode) throws(GATTClientError) -> ATTPDU? {
        if case .errorResponse(_, _, .attributeNotFound) = response { return nil }
        return try check(response, answering: request)
    }

    /// Checks the handles a discovery response lists (in its order) against the request's
    /// range `start...end`: each inside it and each after the one before. A response to an
    /// earlier request (a server that sent it twice) starts before `start` and fails here.
    static func checkHandles(
        _ handles: [UInt16], from start: UInt16, to end: UInt16, in response: ATTOpcode
    ) throws(GATTClientError) {
        var previous: UInt16?
        for handle in handles {
            guard handle >= start, handle <= end else {
                throw .protocolViolation("\(response.name) lists handle \(handle), outside the range \(start)–\(end) asked for")
            }
            if let previous, handle <= previous {
                throw .protocolViolation("\(response.name) lists handle \(handle) after handle \(previous) (handles must rise)")
            }
            previous = handle
        }
    }

    /// Checks the handle ranges (first…last) a discovery response lists against the request's
    /// range `start...end`: none backwards, each inside the request's range, each after the one
    /// before.
    static func checkRanges(
        _ ranges: [(first: UInt16, last: UInt16)], from start: UInt16, to end: UInt16, in response: ATTOpcode
    ) throws(GATTClientError) {
        var previousLast: UInt16?
        for range in ranges {
            guard range.first <= range.last else {
                throw .protocolViolation("\(response.name) lists the backwards handle range \(range.first)–\(range.last)")
            }
            guard range.first >= start, range.last <= end else {
                throw .protocolViolation("\(response.name) lists handles \(range.first)–\(range.last), outside the range \(start)–\(end) asked for")
            }
            if let previousLast, range.first <= previousLast {
                throw .protocolViolation("\(response.name) lists handles \(range.first)–\(range.last), overlapping or before the range ending at \(previousLast)")
            }
            previousLast = range.last
        }
    }

    /// A UUID from a response, or ``GATTClientError/malformedResponse(_:)`` naming `what`.
    static func uuid(_ bytes: [UInt8], _ what: String) throws(GATTClientError) -> BluetoothUUID {
        do { return try BluetoothUUID(littleEndian: bytes) } catch { throw .malformedResponse(error.within(what)) }
    }
}

/// The walk through a handle range that every discovery shares: ask from `start`, take the
/// entries that came back, ask again just after the last one; stop at the end of the range, at
/// Attribute Not Found, or when the server does not advance (it cannot make the walk loop).
struct HandleRangeWalk: Sendable, Equatable {
    /// The first handle of the next request.
    private(set) var start: UInt16
    /// The last handle of the range.
    let end: UInt16

    /// A walk over `start...end`.
    init(_ start: UInt16, _ end: UInt16) {
        self.start = start
        self.end = end
    }

    /// True when the range holds no handle (the walk sends nothing).
    var isEmpty: Bool { start > end }

    /// Moves past `last`, the last handle of a response; false when the walk is over.
    mutating func advance(past last: UInt16) -> Bool {
        guard last < end, last >= start else { return false }
        start = last + 1
        return true
    }
}
