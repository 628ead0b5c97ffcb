import BluetideTestSupport
import Foundation
import Testing

/// What `peripheral.py` reported about one connection, collected until the link went down.
/// Reusable when Bluetide's central replaces `central.py`.
struct BumblePeripheralLog: Sendable {
    /// `AA:BB:CC:DD:EE:FF/R` or `/P` of the central that connected.
    var connectedPeer: String?
    /// Hex of each value written to the echo characteristic, in order.
    var writtenEcho: [String] = []
    /// Hex of each value written to the write-only characteristic, in order.
    var writtenWriteOnly: [String] = []
    /// Characteristic names of each CCCD write, in order.
    var subscribed: [String] = []
    /// Characteristic name → number of values sent on a finished notify/indicate sequence.
    var sent: [String: Int] = [:]
    /// Negotiated ATT MTU, if an exchange took place.
    var mtu: Int?
    /// HCI disconnection reason.
    var disconnectReason: Int?

    /// Reads the peripheral's events (an AsyncSequence, each line within `lineTimeout`) until
    /// `disconnected`; throws on an `error` or `timeout` event or when the output ends first.
    static func collect(
        from peripheral: BumbleProcess, lineTimeout: Duration = .seconds(60)
    ) async throws -> BumblePeripheralLog {
        var log = BumblePeripheralLog()
        for try await event in peripheral.jsonLines(timeout: lineTimeout) {
            switch event["event"]?.string {
            case "connected": log.connectedPeer = event["peer"]?.string
            case "mtu": log.mtu = event["mtu"]?.int
            case "written":
                let hex = event["hex"]?.string ?? ""
                if event["characteristic"]?.string == "echo" { log.writtenEcho.append(hex) }
                if event["characteristic"]?.string == "write-only" { log.writtenWriteOnly.append(hex) }
            case "subscribed": log.subscribed.append(event["characteristic"]?.string ?? "")
            case "sent":
                if let name = event["characteristic"]?.string { log.sent[name] = event["count"]?.int }
            case "disconnected":
                log.disconnectReason = event["reason"]?.int
                return log
            case "error", "timeout":
                throw await peripheral.failure("peripheral reported \(event)")
            default: break
            }
        }
        throw await peripheral.failure("peripheral output ended before it reported a disconnection")
    }
}

/// The numbered payloads `index u16 LE | total u16 LE` for 0..<total, in hex.
func bumbleNumberedPayloads(_ total: Int) -> [String] {
    (0..<total).map { index in
        [UInt8(index & 0xFF), UInt8(index >> 8 & 0xFF), UInt8(total & 0xFF), UInt8(total >> 8 & 0xFF)].bumbleHex
    }
}

/// Asserts what `BumbleCentralOptions.fullScript` must find on a peripheral serving the test
/// database (`peripheral.py`, or Bluetide's server with the same database).
func expectFullBumbleScript(
    _ summary: BumbleCentralSummary, peripheral: BumblePeripheralOptions, longLength: Int,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(summary.ok, sourceLocation: sourceLocation)
    #expect(summary.peer == peripheral.address + "/R", sourceLocation: sourceLocation)
    for service in [
        "1800", "1801", BumbleTestService.heartRateService, BumbleTestService.batteryService,
        BumbleTestService.service,
    ] {
        #expect(summary.services.contains(service), "service \(service) not discovered", sourceLocation: sourceLocation)
    }
    #expect(summary.readErrors.isEmpty, sourceLocation: sourceLocation)
    #expect(
        summary.reads[BumbleTestService.longRead] == BumbleTestService.longReadValue.bumbleHex,
        sourceLocation: sourceLocation)
    #expect(summary.reads[BumbleTestService.bodySensorLocation] == "01", sourceLocation: sourceLocation)
    #expect(summary.reads[BumbleTestService.batteryLevel] == "57", sourceLocation: sourceLocation)
    #expect(
        summary.reads[BumbleTestService.readOnly] == Array("read-only".utf8).bumbleHex, sourceLocation: sourceLocation)
    #expect(summary.reads["2A00"] == Array(peripheral.name.utf8).bumbleHex, sourceLocation: sourceLocation)

    let writes = summary.writes[BumbleTestService.echo] ?? []
    #expect(writes.map(\.kind) == ["short", "long"], sourceLocation: sourceLocation)
    #expect(writes.first?.hex == BumbleTestService.centralShortValue.bumbleHex, sourceLocation: sourceLocation)
    #expect(
        writes.last?.hex == BumbleTestService.centralLongValue(length: longLength).bumbleHex,
        sourceLocation: sourceLocation)
    #expect(writes.last?.length == longLength, sourceLocation: sourceLocation)
    #expect(writes.allSatisfy { $0.readbackMatches == true }, sourceLocation: sourceLocation)

    let notify = summary.subscriptions[BumbleTestService.notify]
    #expect(notify?.kind == "notify", sourceLocation: sourceLocation)
    #expect(notify?.count == peripheral.notifyCount, sourceLocation: sourceLocation)
    #expect(notify?.values == bumbleNumberedPayloads(peripheral.notifyCount), sourceLocation: sourceLocation)
    let indicate = summary.subscriptions[BumbleTestService.indicate]
    #expect(indicate?.kind == "indicate", sourceLocation: sourceLocation)
    #expect(indicate?.count == peripheral.indicateCount, sourceLocation: sourceLocation)
    #expect(indicate?.values == bumbleNumberedPayloads(peripheral.indicateCount), sourceLocation: sourceLocation)
    let heartRate = summary.subscriptions[BumbleTestService.heartRateMeasurement]
    #expect(heartRate?.count == peripheral.heartRateCount, sourceLocation: sourceLocation)
    #expect(heartRate?.values.first == "003c", sourceLocation: sourceLocation)
    #expect(summary.subscriptions[BumbleTestService.batteryLevel]?.values == ["57"], sourceLocation: sourceLocation)

    #expect(
        summary.readDenied[BumbleTestService.writeOnly] == .some(BumbleTestService.readNotPermitted),
        sourceLocation: sourceLocation)
    #expect(
        summary.writeDenied[BumbleTestService.readOnly] == .some(BumbleTestService.writeNotPermitted),
        sourceLocation: sourceLocation)
    #expect(summary.disconnectReason == 0x13, sourceLocation: sourceLocation)
}
