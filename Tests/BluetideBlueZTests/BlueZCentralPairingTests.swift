import Bluetide
import BluetideTestSupport
import Foundation
import Testing

/// Bluetide's central on the `bluez` transport pairs through its own `org.bluez.Agent1`: the
/// `bluetide` binary in the guest, beside bluetoothd, pairs with a Bluetide peripheral on the
/// host whose values need an authenticated link; bluetoothd's questions reach the command's
/// pairing mode (`--pairing confirm`) exactly as the own host's do. Then bluetoothd's bond is
/// listed and removed with `bluetide bonds --transport bluez`. Part of the one serialized BlueZ
/// suite (one guest boot).
extension BlueZGuestTests {
    /// `confirm` mode says DisplayYesNo: against a peripheral that can only type
    /// (KeyboardOnly) the pairing is passkey entry, bluetoothd asks our agent to show the
    /// passkey (DisplayPasskey) and the command prints "Type NNNNNN on …", which the test types
    /// on the peripheral; against one that shows and confirms (DisplayYesNo) it is numeric
    /// comparison (RequestConfirmation), accepted by the mode and confirmed on the peripheral.
    /// The shell's `pair` calls Device1.Pair; the link's level comes from bluetoothd's key store.
    @Test(arguments: [IOCapability.keyboardOnly, .displayYesNo])
    func bluetideOnTheBlueZTransportPairsThroughItsAgentAndManagesTheBond(_ io: IOCapability) async throws {
        let typesPasskey = io == .keyboardOnly
        let method = typesPasskey ? "passkey" : "numeric comparison"
        try await withRig("bluetide on bluez pairs with a Bluetide peripheral (\(method))", 420) { rig in
            let address = typesPasskey ? "C1:B1:7E:00:07:00" : "C1:B1:7E:00:07:01"
            let bondFile = try Self.bondFile(rig, typesPasskey ? "bluez-central-passkey" : "bluez-central-numeric")
            let authenticated = BlueZPairingService.authenticatedUUID.uuidString
            let script = "pair\\nread \(authenticated)\\nwrite \(authenticated) 01\\n"
            let session = try await Self.servePairingService(
                rig, address: address, policy: PairingPolicy(ioCapability: io), bondFile: bondFile, snoop: "peripheral"
            ) { host in
                let shell = try await rig.guest.start(
                    "printf '\(script)' | " + Self.bluetideInGuest("shell \(address)/R --transport bluez --pairing confirm --timeout 20 --json --log-level notice") + " 2>&1",
                    timeout: .seconds(150))
                if typesPasskey {
                    let shown = try await rig.guest.line(of: shell, timeout: .seconds(90)) { $0.contains("Type ") }
                    let digits = try #require(shown.split(separator: " ").first { $0.count == 6 && $0.allSatisfy(\.isNumber) }, "no passkey in \(shown)")
                    host.passkeys.yield(try #require(UInt32(String(digits))))
                }
                return try await rig.guest.result(of: shell, timeout: .seconds(150))
            }
            let records = session.guest.json
            #expect(session.guest.status == 0, "shell: \(Self.describe(session.guest))")
            let paired = try #require(records.first { $0["type"] as? String == "paired" }, "no paired record: \(Self.describe(session.guest))")
            #expect(paired["outcome"] as? String == "paired", "\(paired)")
            // bluetoothd's bond, as Bluetooth.bonds() reports it on this backend.
            #expect(paired["bonded"] as? Bool == true, "\(paired)")
            // Exact: bluetoothd's stored key is authenticated LE Secure Connections, 128-bit.
            #expect(paired["securityLevel"] as? Int == 4, "\(paired)")
            let read = records.first { $0["type"] as? String == "read" }
            #expect((read?["value"] as? [String: Any])?["hex"] as? String == Data("authenticated".utf8).map { String(format: "%02x", $0) }.joined(),
                    "\(Self.describe(session.guest))")
            if typesPasskey {
                #expect(session.asked == [.enterPasskey], "our peripheral was asked \(session.asked)")
            } else {
                // The number the peripheral confirmed is the one the command accepted (logged).
                let asked = session.asked
                #expect(asked.count == 1, "our peripheral was asked \(asked)")
                if case let .confirmNumber(number)? = asked.first {
                    let digits = PairingPrompt.sixDigits(number)
                    #expect(session.guest.stdout.contains { $0.contains("should show \(digits)") }, "the command never showed \(digits): \(Self.describe(session.guest))")
                }
            }
            #expect(session.writes == [.init(value: [0x01], level: .authenticatedSecureConnections)], "writes seen: \(session.writes)")

            // bluetoothd keeps the bond: listed from D-Bus, its level from the key store.
            let listed = try await rig.guest.run(Self.bluetideInGuest("bonds list --transport bluez --json"), timeout: .seconds(60))
            #expect(listed.status == 0, "bonds list: \(Self.describe(listed))")
            let bond = listed.json.first { (($0["device"] as? [String: Any])?["address"] as? String)?.hasPrefix(address) == true }
            #expect(bond?["bonded"] as? Bool == true && bond?["securityLevel"] as? Int == 4 && bond?["secureConnections"] as? Bool == true,
                    "bonds list: \(Self.describe(listed))")
            let removed = try await rig.guest.run(Self.bluetideInGuest("bonds remove \(address)/R --transport bluez"), timeout: .seconds(60))
            #expect(removed.status == 0, "bonds remove: \(Self.describe(removed))")
            let after = try await rig.guest.run(Self.bluetideInGuest("bonds list --transport bluez --json"), timeout: .seconds(60))
            #expect(!after.stdout.contains { $0.contains(address) }, "still listed after remove: \(Self.describe(after))")
            let again = try await rig.guest.run(Self.bluetideInGuest("bonds remove \(address)/R --transport bluez"), timeout: .seconds(60))
            #expect(again.status == 1 && again.stderr.contains { $0.contains("no bond with") }, "second remove: \(Self.describe(again))")
        }
    }
}
