#!/usr/bin/env python3
"""A COLMI R02 ring played by Bumble, answering with the real packets of the spec notes.

Bluetide's `ring` commands are tested against it: like a real ring it takes one central at a
time (advertising stops while connected and starts again after the disconnection), serves the
V1 UART service (6E40FFF0-..., write 6E400002, notify 6E400003), the V2 big-data service and
Device Information, and answers each request with packets captured from real rings
(../shared/specs/colmi-r02.md section 8, from tahnok/colmi_r02_client's tests and captures):

* 01 set time -> the capability map 01 00 01 00 22 ..., then the unsolicited 2F F1 packet;
  the ring's clock follows the time set.
* 03 battery -> 03 40 ... (64 %, not charging).
* 15 HR log -> for the day 2024-08-10 the captured 24-packet log (hourly values 89, 107, 96,
  107, 80, 70 from 15:00); any other day 15 FF (no data).
* 43 steps -> the captured records for 2024-10-15 and 2023-08-13 when the day asked for (the
  ring's date minus the offset) is one of those; otherwise 43 FF.
* 16 01 HR-log settings -> 16 01 01 3C (on, every 60 min); 37 stress -> 37 FF (no data).
* BC 27 sleep -> the captured 57-byte frame (one night, 22:23 to 09:02), in 20-byte notifications.
* BC 2A SpO2 -> an empty frame BC 2A 00 00 FF FF (no stored days; inferred, no capture).
* Unknown opcodes are ignored; packets with a bad checksum are ignored.

Every event is one JSON line on stdout ({"event": "ready" | "connected" | "request" |
"disconnected" | ...}). Exits 0 after --connections disconnections, 3 on --timeout, 4 on a
signal or stdin EOF (--exit-on-stdin-eof).
"""

from __future__ import annotations

import argparse
import asyncio
import calendar
import time

from bumble import hci
from bumble.core import AdvertisingData
from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble_common import add_common_options, address_text, emit_event, run_main
from bumble_device import serve_peripheral, report_crash_as_event

UART_SERVICE = "6E40FFF0-B5A3-F393-E0A9-E50E24DCCA9E"
UART_WRITE = "6E400002-B5A3-F393-E0A9-E50E24DCCA9E"
UART_NOTIFY = "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"
BIG_DATA_SERVICE = "DE5BF728-D711-4E47-AF26-65E3012A5DC7"
BIG_DATA_WRITE = "DE5BF72A-D711-4E47-AF26-65E3012A5DC7"
BIG_DATA_NOTIFY = "DE5BF729-D711-4E47-AF26-65E3012A5DC7"


def packet(text: str) -> bytes:
    """16 bytes from hex (spaces allowed); checked against the spec's checksum rule."""
    data = bytes.fromhex(text.replace(" ", ""))
    assert len(data) == 16 and sum(data[:15]) & 0xFF == data[15], text
    return data


def zero_packet(opcode: int, index: int) -> bytes:
    body = bytes([opcode, index]) + bytes(13)
    return body + bytes([sum(body) & 0xFF])


# --- Captured replies (colmi-r02.md section 8) -------------------------------------------------
CAPABILITIES = packet("01 00 01 00 22 00 00 00 00 01 00 30 01 00 10 66")
PACKET_SIZE = packet("2f f1 00 00 00 00 00 00 00 00 00 00 00 00 00 20")
BATTERY = packet("03 40 00 00 00 00 00 00 00 00 00 00 00 00 00 43")
HR_SETTINGS = packet("16 01 01 3c 00 00 00 00 00 00 00 00 00 00 00 54")
HR_NO_DATA = packet("15 ff 00 00 00 00 00 00 00 00 00 00 00 00 00 14")
STEPS_NO_DATA = packet("43 ff 00 00 00 00 00 00 00 00 00 00 00 00 00 42")
STRESS_NO_DATA = zero_packet(0x37, 0xFF)

# tahnok tests/test_hr.py: the log of 2024-08-10 (timestamp 0x66B6AD80), 24 packets.
HR_LOG_DAY = 0x66B6AD80
HR_LOG_VALUES = {
    0x0F: "15 0f 00 00 59 00 00 00 00 00 00 00 00 00 00 7d",
    0x10: "15 10 00 6b 00 00 00 00 00 00 00 00 00 00 00 90",
    0x11: "15 11 60 00 00 00 00 00 00 00 00 00 00 00 6b f1",
    0x13: "15 13 00 00 00 00 00 00 00 00 00 00 50 00 00 78",
    0x14: "15 14 00 00 00 00 00 00 00 00 00 46 00 00 00 6f",
}
HR_LOG = [packet("15 00 18 05 00 00 00 00 00 00 00 00 00 00 00 32"),
          packet("15 01 80 ad b6 66 00 00 00 00 00 00 00 00 00 5f")] + [
    packet(HR_LOG_VALUES[k]) if k in HR_LOG_VALUES else zero_packet(0x15, k) for k in range(2, 24)]

# tahnok tests/test_steps.py.
STEPS = {
    (2024, 10, 15): [packet("43 f0 01 01 00 00 00 00 00 00 00 00 00 00 00 35"),
                     packet("43 24 10 15 5c 00 01 79 00 15 00 10 00 00 00 87")],
    (2023, 8, 13): [packet("43 f0 05 01 00 00 00 00 00 00 00 00 00 00 00 39"),
                    packet("43 23 08 13 10 00 05 c8 00 30 00 1b 00 00 00 a9"),
                    packet("43 23 08 13 14 01 05 b6 18 aa 04 69 03 00 00 83"),
                    packet("43 23 08 13 18 02 05 38 04 e1 00 95 00 00 00 52"),
                    packet("43 23 08 13 1c 03 05 05 02 6c 00 48 00 00 00 60"),
                    packet("43 23 08 13 4c 04 05 ef 01 63 00 44 00 00 00 6d")],
}

# tahnok PR #52 tests/test_big_data.py: one night of sleep.
SLEEP_FRAME = bytes.fromhex(
    "bc273300d489010030 3f051e0202360311051102300310022004200320022004100320022004100220032002400320023003100202050c0219"
    .replace(" ", ""))
SPO2_EMPTY = bytes.fromhex("bc2a0000ffff")

emit = emit_event


def bcd(value: int) -> int:
    return (value >> 4) * 10 + (value & 0x0F)


class RingPeer:
    """The GATT database, the ring's clock and the request handling."""

    def __init__(self, arguments: argparse.Namespace, device: Device) -> None:
        self.arguments = arguments
        self.device = device
        self.finished = asyncio.get_running_loop().create_future()
        self.disconnections = 0
        self.connection = None
        self.clock_base = time.time()  # ring seconds (wall clock as if UTC) at clock_set_at
        self.clock_set_at = time.monotonic()
        self.queue: asyncio.Queue = asyncio.Queue()
        P = Characteristic.Properties
        self.notify = Characteristic(UART_NOTIFY, P.NOTIFY, Characteristic.READABLE, b"")
        self.big_notify = Characteristic(BIG_DATA_NOTIFY, P.NOTIFY, Characteristic.READABLE, b"")
        uart_write = Characteristic(
            UART_WRITE, P.WRITE | P.WRITE_WITHOUT_RESPONSE, Characteristic.WRITEABLE,
            CharacteristicValue(write=lambda connection, value: self.received(value, big=False)))
        big_write = Characteristic(
            BIG_DATA_WRITE, P.WRITE | P.WRITE_WITHOUT_RESPONSE, Characteristic.WRITEABLE,
            CharacteristicValue(write=lambda connection, value: self.received(value, big=True)))
        device.add_services([
            Service(UART_SERVICE, [uart_write, self.notify]),
            Service(BIG_DATA_SERVICE, [big_write, self.big_notify]),
            Service("180A", [
                Characteristic("2A26", P.READ, Characteristic.READABLE, b"R02_3.00.06_240523"),
                Characteristic("2A27", P.READ, Characteristic.READABLE, b"R02_V3.0"),
            ]),
        ])
        device.on("connection", self.on_connection)

    # ---- the ring's clock ----------------------------------------------------------------------
    def ring_seconds(self) -> int:
        return int(self.clock_base + time.monotonic() - self.clock_set_at)

    def ring_date(self, days_back: int = 0) -> tuple[int, int, int]:
        t = time.gmtime(self.ring_seconds() - days_back * 86_400)
        return (t.tm_year, t.tm_mon, t.tm_mday)

    # ---- requests ------------------------------------------------------------------------------
    def received(self, value: bytes, big: bool) -> None:
        self.queue.put_nowait((bytes(value), big))

    def replies(self, value: bytes, big: bool) -> list[tuple[bytes, bool]]:
        if big:
            emit("request", hex=value.hex(), service="big-data")
            if len(value) >= 2 and value[0] == 0xBC and value[1] == 0x27:
                return [(SLEEP_FRAME, True)]
            if len(value) >= 2 and value[0] == 0xBC and value[1] == 0x2A:
                return [(SPO2_EMPTY, True)]
            return []
        if len(value) != 16 or sum(value[:15]) & 0xFF != value[15]:
            emit("ignored", hex=value.hex(), reason="not a 16-byte packet with a valid checksum")
            return []
        emit("request", hex=value.hex(), service="uart")
        op = value[0]
        if op == 0x01:
            year, month, day = 2000 + bcd(value[1]), bcd(value[2]), bcd(value[3])
            self.clock_base = calendar.timegm((year, month, day, bcd(value[4]), bcd(value[5]), bcd(value[6])))
            self.clock_set_at = time.monotonic()
            emit("clock", ring_time=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock_base)))
            return [(CAPABILITIES, False), (PACKET_SIZE, False)]
        if op == 0x03:
            return [(BATTERY, False)]
        if op == 0x15:
            requested = int.from_bytes(value[1:5], "little")
            return [(p, False) for p in HR_LOG] if requested // 86_400 == HR_LOG_DAY // 86_400 else [(HR_NO_DATA, False)]
        if op == 0x43:
            packets = STEPS.get(self.ring_date(value[1]))
            return [(p, False) for p in packets] if packets else [(STEPS_NO_DATA, False)]
        if op == 0x16 and value[1] == 0x01:
            return [(HR_SETTINGS, False)]
        if op == 0x37:
            return [(STRESS_NO_DATA, False)]
        return []  # unknown or undocumented here: the ring stays silent

    def stop(self) -> None:
        self.server.cancel()

    async def serve(self) -> None:
        while True:
            value, big = await self.queue.get()
            connection = self.connection
            for data, on_big in self.replies(value, big):
                if connection is None:
                    break
                characteristic = self.big_notify if on_big else self.notify
                size = max(20, connection.att_mtu - 3)
                for offset in range(0, len(data), size):
                    await self.device.notify_subscriber(connection, characteristic, data[offset:offset + size])

    # ---- connections ---------------------------------------------------------------------------
    def on_connection(self, connection) -> None:
        self.connection = connection
        emit("connected", peer=address_text(connection.peer_address), handle=connection.handle)
        connection.on("disconnection", lambda reason: self.on_disconnection(connection, reason))

    def on_disconnection(self, connection, reason: int) -> None:
        self.connection = None
        self.disconnections += 1
        emit("disconnected", handle=connection.handle, reason=int(reason))
        if self.disconnections >= self.arguments.connections:
            if not self.finished.done():
                self.finished.set_result(0)
        else:
            asyncio.ensure_future(self.advertise())

    async def advertise(self) -> None:
        try:
            await self.device.start_advertising(own_address_type=hci.OwnAddressType.RANDOM, auto_restart=False)
            emit("advertising")
        except Exception as error:  # reported; the harness sees no ring
            emit("error", during="advertising", message=repr(error))


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A COLMI R02 ring answering with captured packets.")
    parser.add_argument("transport", help="HCI transport moniker, or a bare TCP port (tcp-client:127.0.0.1:PORT)")
    parser.add_argument("--name", default="R02_341C", help="advertised name")
    parser.add_argument("--address", default="C2:41:0D:D0:34:1C", help="random static address")
    parser.add_argument("--connections", type=int, default=1, help="connections to serve, one at a time, before exiting")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before giving up (exit 3)")
    add_common_options(parser)
    return parser.parse_args(argv)


async def run(arguments: argparse.Namespace) -> int:
    advertising = bytes(AdvertisingData([
        (AdvertisingData.FLAGS, bytes([0x06])),
        (AdvertisingData.COMPLETE_LOCAL_NAME, arguments.name.encode()),
        (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, bytes([0x34, 0x12, 0x00, 0x00])),
    ]))
    ring: list[RingPeer] = []

    def make_ring(device: Device) -> RingPeer:
        peer = RingPeer(arguments, device)
        peer.server = asyncio.ensure_future(peer.serve())
        ring.append(peer)
        return peer

    return await serve_peripheral(arguments, advertising, make_ring, advertise=lambda: ring[0].advertise())


def main() -> None:
    run_main(parse_arguments, run, report_crash_as_event)


if __name__ == "__main__":
    main()
