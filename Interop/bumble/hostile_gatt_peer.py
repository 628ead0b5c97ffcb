#!/usr/bin/env python3
"""A Bumble GATT peripheral that breaks the ATT protocol on purpose: the interop peer for
"a response must match the outstanding request" (`bluetide gatt` against it must end with a
one-line protocol error and a non-zero exit, never print what the broken answers say).

It advertises its name and serves a Battery service (Battery Level 2A19 = 87 %) and a Heart
Rate service, then misbehaves as `--mode` says:

* `duplicate`: every response is sent twice, back to back.
* `unsolicited`: right after its Exchange MTU Response, a Read By Group Type Response (180D
  over handles 1-65535) nobody asked for.
* `backwards`: Read By Group Type Responses list 180D over handles 10-5.
* `zero-handle` / `ffff-handle`: the first characteristic declaration found gives value
  handle 0x0000 / 0xFFFF.
* `none`: behaves (the control case).

Every event is one JSON object per line on stdout: ready, connected, misbehaved (what it did
wrong, once per kind), disconnected, stopped, timeout, error. The process exits 0 when the link
is disconnected, 3 when --timeout expires first, 4 on a signal or end of stdin, 1 on a setup
error.
"""

from __future__ import annotations

import argparse
import asyncio
import struct

from bumble.core import AdvertisingData
from bumble.device import Device
from bumble.gatt import Characteristic, Service
from bumble_common import add_common_options, address_text, emit_event, run_main
from bumble_device import report_crash_as_event, serve_peripheral

# The response opcodes (Error Response 0x01 … Read Multiple Variable Response 0x21).
RESPONSES = {0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21}
EXCHANGE_MTU_RESPONSE = 0x03
READ_BY_TYPE_RESPONSE = 0x09
READ_BY_GROUP_TYPE_RESPONSE = 0x11
MODES = ["none", "duplicate", "unsolicited", "backwards", "zero-handle", "ffff-handle"]

emit = emit_event


class HostilePeer:
    """The database, and the server's responses bent as `mode` says."""

    def __init__(self, arguments: argparse.Namespace, device: Device) -> None:
        self.mode = arguments.mode
        self.device = device
        self.finished = asyncio.get_running_loop().create_future()
        self.reported: set[str] = set()
        device.add_service(Service("180F", [Characteristic(
            "2A19", Characteristic.Properties.READ, Characteristic.Permissions.READABLE, bytes([87]))]))
        device.add_service(Service("180D", [Characteristic(
            "2A38", Characteristic.Properties.READ, Characteristic.Permissions.READABLE, bytes([1]))]))
        server = device.gatt_server
        original = server.send_gatt_pdu

        def send_gatt_pdu(bearer, pdu: bytes) -> None:
            for bent in self.bend(bytes(pdu)):
                original(bearer, bent)

        server.send_gatt_pdu = send_gatt_pdu
        device.on("connection", self.on_connection)

    def misbehaved(self, what: str) -> None:
        if what not in self.reported:
            self.reported.add(what)
            emit("misbehaved", what=what)

    def bend(self, pdu: bytes) -> list[bytes]:
        """What goes out instead of the server's own PDU `pdu`."""
        if not pdu or pdu[0] not in RESPONSES:
            return [pdu]
        opcode = pdu[0]
        if self.mode == "unsolicited" and opcode == EXCHANGE_MTU_RESPONSE:
            self.misbehaved("a response nobody asked for")
            return [pdu, bytes([READ_BY_GROUP_TYPE_RESPONSE, 6]) + struct.pack("<HHH", 1, 0xFFFF, 0x180D)]
        if self.mode == "duplicate":
            self.misbehaved("every response twice")
            return [pdu, pdu]
        if self.mode == "backwards" and opcode == READ_BY_GROUP_TYPE_RESPONSE:
            self.misbehaved("service over handles 10-5")
            return [bytes([opcode, 6]) + struct.pack("<HHH", 10, 5, 0x180D)]
        if self.mode in ("zero-handle", "ffff-handle") and opcode == READ_BY_TYPE_RESPONSE and len(pdu) >= 2 + 5 + 2:
            length = pdu[1]
            if length in (7, 21):
                value_handle = 0 if self.mode == "zero-handle" else 0xFFFF
                self.misbehaved(f"value handle {value_handle:#06x}")
                return [pdu[:5] + struct.pack("<H", value_handle) + pdu[7:]]
        return [pdu]

    def on_connection(self, connection) -> None:
        emit("connected", peer=address_text(connection.peer_address))
        connection.on("disconnection", self.on_disconnection)

    def on_disconnection(self, reason: int) -> None:
        emit("disconnected", reason=reason)
        if not self.finished.done():
            self.finished.set_result(0)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Bumble GATT peripheral that breaks the ATT protocol on purpose.")
    parser.add_argument("transport", help="HCI transport moniker, or a bare TCP port meaning tcp-client:127.0.0.1:PORT")
    parser.add_argument("--mode", choices=MODES, default="duplicate", help="how to misbehave")
    parser.add_argument("--name", default="Hostile", help="advertised name")
    parser.add_argument("--address", default="C6:C5:C4:C3:C2:C4", help="random static address (top two bits 11)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before giving up if nobody disconnects (exit 3)")
    add_common_options(parser)
    return parser.parse_args(argv)


async def run(arguments: argparse.Namespace) -> int:
    data = bytes(AdvertisingData([
        (AdvertisingData.FLAGS, bytes([0x06])),
        (AdvertisingData.COMPLETE_LOCAL_NAME, arguments.name.encode("utf-8")),
    ]))
    return await serve_peripheral(arguments, data, lambda device: HostilePeer(arguments, device))


def main() -> None:
    run_main(parse_arguments, run, report_crash_as_event)


if __name__ == "__main__":
    main()
