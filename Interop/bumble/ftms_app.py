#!/usr/bin/env python3
"""Bumble central acting as an FTMS-only training app (Zwift-like): an interop peer for
`bluetide ride bridge`.

It connects to an HCI controller (normally one of `controllers.py`), finds the trainer by
advertised name (or the first device advertising the Fitness Machine service 0x1826), and then
does what an app does:

  connect -> discover -> read Fitness Machine Feature and Supported Power Range
  -> subscribe to Indoor Bike Data (notify), the Control Point (indicate) and Fitness Machine
     Status (notify)
  -> with --write-before-control: Set Target Power before Request Control, expecting 0x05
  -> Request Control (`00`), expecting `80 00 01`
  -> Set Target Power (`05`, --erg W), expecting `80 05 01`
  -> with --grade: Set Indoor Bike Simulation (`11`), expecting `80 11 01`, then ERG again
  -> watch Indoor Bike Data until --settle-count values in a row have power within --tolerance
     W of the target (or --watch seconds pass)
  -> disconnect.

Each step prints one JSON object on stdout ({"event": ...}): found, connected, feature,
power-range, subscribed, response (opcode, result), status (hex), bike-data (power_w,
cadence_rpm, speed_kmh), settled, disconnected; on failure {"event": "error", "during": ...,
"message": ...} and exit status 1. Every wait has a timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import struct

from bumble import hci
from bumble.core import UUID, AdvertisingData
from bumble.device import Device, Peer
from bumble_common import add_common_options, address_text, emit_event, run_main
from bumble_device import StepFailure, powered_central, report_crash_as_event

emit = emit_event

FITNESS_MACHINE = UUID.from_16_bits(0x1826)
FEATURE = UUID.from_16_bits(0x2ACC)
INDOOR_BIKE_DATA = UUID.from_16_bits(0x2AD2)
POWER_RANGE = UUID.from_16_bits(0x2AD8)
CONTROL_POINT = UUID.from_16_bits(0x2AD9)
STATUS = UUID.from_16_bits(0x2ADA)


Failure = StepFailure


def parse_indoor_bike_data(value: bytes) -> dict:
    """The fields an app shows, from an Indoor Bike Data value (FTMS 4.9)."""
    flags = struct.unpack_from("<H", value)[0]
    offset = 2
    out: dict = {}
    def take(fmt: str):
        nonlocal offset
        field = struct.unpack_from(fmt, value, offset)[0]
        offset += struct.calcsize(fmt)
        return field
    if not flags & 0x0001:
        out["speed_kmh"] = take("<H") / 100.0
    if flags & 0x0002:
        take("<H")
    if flags & 0x0004:
        out["cadence_rpm"] = take("<H") / 2.0
    if flags & 0x0008:
        take("<H")
    if flags & 0x0010:
        out["distance_m"] = int.from_bytes(value[offset:offset + 3], "little")
        offset += 3
    if flags & 0x0020:
        take("<h")
    if flags & 0x0040:
        out["power_w"] = take("<h")
    if flags & 0x0080:
        take("<h")
    if flags & 0x0100:
        offset += 5
    if flags & 0x0200:
        out["heart_rate_bpm"] = value[offset]
        offset += 1
    return out


class FTMSApp:
    def __init__(self, arguments: argparse.Namespace, device: Device) -> None:
        self.arguments = arguments
        self.device = device
        self.responses: asyncio.Queue = asyncio.Queue()
        self.bike_data: asyncio.Queue = asyncio.Queue()

    async def within(self, during: str, awaitable, timeout: float | None = None):
        limit = self.arguments.step_timeout if timeout is None else timeout
        try:
            return await asyncio.wait_for(awaitable, limit)
        except asyncio.TimeoutError as error:
            raise Failure(during, f"timed out after {limit} s") from error

    async def find(self) -> hci.Address:
        found = asyncio.get_running_loop().create_future()
        wanted = self.arguments.name

        def on_advertisement(advertisement) -> None:
            data = advertisement.data
            name = data.get(AdvertisingData.COMPLETE_LOCAL_NAME) or data.get(AdvertisingData.SHORTENED_LOCAL_NAME)
            services = data.get(AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS) or []
            matches = name == wanted if wanted else FITNESS_MACHINE in services
            if matches and not found.done():
                found.set_result((advertisement.address, name))

        self.device.on("advertisement", on_advertisement)
        try:
            await self.within("scan", self.device.start_scanning(filter_duplicates=True))
            address, name = await self.within("scan", found, timeout=self.arguments.scan_timeout)
        finally:
            self.device.remove_listener("advertisement", on_advertisement)
            if self.device.is_scanning:
                await self.device.stop_scanning()
        emit("found", name=name, address=address_text(address))
        return address

    def characteristic(self, peer: Peer, uuid: UUID):
        found = peer.get_characteristics_by_uuid(uuid)
        if not found:
            raise Failure("discover", f"the trainer serves no characteristic {uuid}")
        return found[0]

    async def control(self, peer: Peer, point, request: bytes, expected: int, name: str) -> None:
        while not self.responses.empty():
            self.responses.get_nowait()
        await self.within(f"write {name}", peer.write_value(point, request, with_response=True))
        while True:
            response = await self.within(f"indication for {name}", self.responses.get())
            if len(response) >= 3 and response[0] == 0x80 and response[1] == request[0]:
                break
        result = response[2]
        emit("response", request=name, opcode=request[0], result=result, hex=response.hex())
        if result != expected:
            raise Failure(name, f"the trainer answered result 0x{result:02x}, expected 0x{expected:02x}")

    async def run(self) -> None:
        address = await self.find()
        connection = await self.within(
            "connect", self.device.connect(address, own_address_type=hci.OwnAddressType.RANDOM, timeout=15.0), timeout=20.0)
        emit("connected", peer=address_text(connection.peer_address))
        peer = Peer(connection)
        await self.within("discover", peer.discover_all(), timeout=30.0)
        if not peer.get_services_by_uuid(FITNESS_MACHINE):
            raise Failure("discover", "the trainer does not serve the Fitness Machine service 0x1826")
        feature = await self.within("read feature", peer.read_value(self.characteristic(peer, FEATURE)))
        machine, targets = struct.unpack_from("<II", feature)
        emit("feature", machine=machine, targets=targets, power_target=bool(targets & (1 << 3)),
             simulation=bool(targets & (1 << 13)), hex=feature.hex())
        power_range = await self.within("read power range", peer.read_value(self.characteristic(peer, POWER_RANGE)))
        low, high, step = struct.unpack_from("<hhH", power_range)
        emit("power-range", minimum_w=low, maximum_w=high, increment_w=step)

        point = self.characteristic(peer, CONTROL_POINT)
        await self.within("subscribe control point", peer.subscribe(point, lambda v: self.responses.put_nowait(bytes(v)), prefer_notify=False))
        await self.within("subscribe status", peer.subscribe(
            self.characteristic(peer, STATUS), lambda v: emit("status", hex=bytes(v).hex())))
        await self.within("subscribe indoor bike data", peer.subscribe(
            self.characteristic(peer, INDOOR_BIKE_DATA), lambda v: self.bike_data.put_nowait(bytes(v))))
        emit("subscribed")

        erg = self.arguments.erg
        ergo = bytes([0x05]) + struct.pack("<h", erg)
        if self.arguments.write_before_control:
            await self.control(peer, point, ergo, 0x05, "set target power before request control")
        await self.control(peer, point, bytes([0x00]), 0x01, "request control")
        if self.arguments.grade is not None:
            simulation = bytes([0x11]) + struct.pack("<hhBB", 0, int(round(self.arguments.grade * 100)), 40, 51)
            await self.control(peer, point, simulation, 0x01, "set indoor bike simulation")
        await self.control(peer, point, ergo, 0x01, "set target power")

        in_a_row = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.arguments.watch
        while in_a_row < self.arguments.settle_count:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise Failure("settle", f"power did not settle within {self.arguments.tolerance} W of {erg} W in {self.arguments.watch} s")
            value = await self.within("indoor bike data", self.bike_data.get(), timeout=min(remaining, self.arguments.step_timeout))
            fields = parse_indoor_bike_data(value)
            emit("bike-data", hex=value.hex(), **fields)
            power = fields.get("power_w")
            in_a_row = in_a_row + 1 if power is not None and abs(power - erg) <= self.arguments.tolerance else 0
        emit("settled", target_w=erg)

        disconnected = loop.create_future()
        connection.on("disconnection", lambda reason: disconnected.done() or disconnected.set_result(reason))
        await self.within("disconnect", connection.disconnect())
        reason = await self.within("disconnect", disconnected)
        emit("disconnected", reason=int(reason))


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Bumble FTMS app: request control, ERG, watch the power settle.")
    parser.add_argument("transport", help="HCI transport moniker, or a bare TCP port meaning tcp-client:127.0.0.1:PORT")
    parser.add_argument("--name", default=None, help="the trainer's advertised name (default: the first FTMS advertiser)")
    parser.add_argument("--address", default="C6:C5:C4:C3:A9:01", help="our random static address")
    parser.add_argument("--erg", type=int, default=180, help="ERG target power, W")
    parser.add_argument("--grade", type=float, default=None, help="also send a simulation grade (%%) before the ERG target")
    parser.add_argument("--tolerance", type=float, default=10.0, help="W around the target that counts as settled")
    parser.add_argument("--settle-count", type=int, default=3, help="Indoor Bike Data values in a row within tolerance")
    parser.add_argument("--watch", type=float, default=60.0, help="seconds to wait for the power to settle")
    parser.add_argument("--write-before-control", action="store_true", help="first try ERG without control; expect 0x05")
    parser.add_argument("--scan-timeout", type=float, default=20.0, help="seconds to find the trainer")
    parser.add_argument("--step-timeout", type=float, default=15.0, help="seconds each step may take")
    add_common_options(parser)
    return parser.parse_args(argv)


async def run(arguments: argparse.Namespace) -> int:
    opened = await powered_central(arguments, "Bumble FTMS app", arguments.address, emit)
    if opened is None:
        return 1
    transport, device = opened
    async with transport:
        await asyncio.wait_for(device.power_on(), 15.0)
        app = FTMSApp(arguments, device)
        try:
            await app.run()
        except Failure as failure:
            emit("error", during=failure.during, message=failure.message)
            return 1
    return 0


def main() -> None:
    run_main(parse_arguments, run, report_crash_as_event)


if __name__ == "__main__":
    main()
