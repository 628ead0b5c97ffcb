#!/usr/bin/env python3
"""Bumble GATT central used as an interop peer for Bluetide's tests.

It connects to an HCI controller (normally one of `controllers.py`), finds a
peripheral by advertised name or connects straight to an address, then runs a
fixed GATT client script:

  connect -> exchange MTU -> discover services, characteristics, descriptors
  -> read every readable characteristic (long reads included) and descriptor
  -> write the short / long values asked for on the command line (and read
     them back when readable) -> subscribe and count notifications and
     indications -> try the reads and writes expected to be refused and record
     the ATT error codes -> disconnect.

Each step prints one JSON object on stdout; the last line is a summary. Every
wait has a timeout. On a failure it prints {"step": "error", ...} and exits
with status 1 (2 for bad arguments). See README.md in this folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

from bumble import att, hci
from bumble.core import UUID, AdvertisingData
from bumble.device import Device, Peer
from bumble.gatt import Characteristic
from bumble_common import json_line, address_text, stdin_eof_future, add_common_options, run_main
from bumble_device import StepFailure, powered_central

def emit(step: str, **fields) -> None:
    """Print one JSON step line and flush so a harness sees it at once."""
    json_line("step", step, **fields)


def uuid_text(uuid: UUID) -> str:
    """`180D` for 16-bit UUIDs, upper-case dashed form for 128-bit ones."""
    return uuid.to_hex_str("-")


def normalize_uuid(text: str) -> str:
    """Canonical text of a UUID given on the command line."""
    return uuid_text(UUID(text))




def parse_address(text: str) -> hci.Address:
    """`AA:BB:CC:DD:EE:FF/R` (random, the default) or `.../P` (public)."""
    upper = text.upper()
    address_type = hci.Address.RANDOM_DEVICE_ADDRESS
    if upper.endswith("/P"):
        address_type = hci.Address.PUBLIC_DEVICE_ADDRESS
        upper = upper[:-2]
    elif upper.endswith("/R"):
        upper = upper[:-2]
    return hci.Address(upper, address_type)


def property_names(properties: int) -> list[str]:
    names = []
    for flag in Characteristic.Properties:
        if flag.name is not None and properties & flag.value:
            names.append(flag.name.lower().replace("_", "-"))
    return names


def default_short_value() -> bytes:
    return b"bluetide-short"


def long_value(length: int) -> bytes:
    """Deterministic long value: byte i is (i * 7 + 3) % 256."""
    return bytes((i * 7 + 3) % 256 for i in range(length))


def parse_subscription(text: str) -> tuple[str, int | None]:
    """`UUID` or `UUID=COUNT`."""
    if "=" in text:
        uuid, count = text.split("=", 1)
        return normalize_uuid(uuid), int(count)
    return normalize_uuid(text), None


# --------------------------------------------------------------------------
class TestCentral:
    """Runs the GATT client script and accumulates the summary."""

    def __init__(self, arguments: argparse.Namespace, device: Device) -> None:
        self.arguments = arguments
        self.device = device
        self.step_timeout = arguments.step_timeout
        self.summary: dict = {
            "ok": False,
            "peer": None,
            "mtu": None,
            "services": [],
            "characteristic_count": 0,
            "descriptor_count": 0,
            "reads": {},
            "read_errors": {},
            "descriptor_reads": {},
            "writes": {},
            "subscriptions": {},
            "read_denied": {},
            "write_denied": {},
            "disconnect_reason": None,
        }

    async def within(self, during: str, awaitable, timeout: float | None = None):
        """Await with the step timeout, turning a timeout into a StepFailure."""
        limit = self.step_timeout if timeout is None else timeout
        try:
            return await asyncio.wait_for(awaitable, limit)
        except asyncio.TimeoutError as error:
            raise StepFailure(during, f"timed out after {limit} s") from error

    # ---- connect ---------------------------------------------------------
    async def find_by_name(self, name: str) -> hci.Address:
        found = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement) -> None:
            data = advertisement.data
            local_name = data.get(AdvertisingData.COMPLETE_LOCAL_NAME) or data.get(
                AdvertisingData.SHORTENED_LOCAL_NAME
            )
            if local_name == name and not found.done():
                found.set_result(advertisement.address)

        self.device.on("advertisement", on_advertisement)
        try:
            await self.within("scan", self.device.start_scanning(filter_duplicates=True))
            address = await self.within(
                "scan", found, timeout=self.arguments.scan_timeout
            )
        finally:
            self.device.remove_listener("advertisement", on_advertisement)
            if self.device.is_scanning:
                await self.within("scan", self.device.stop_scanning())
        emit("found", name=name, address=address_text(address))
        return address

    async def connect(self):
        if self.arguments.address:
            target = parse_address(self.arguments.address)
        else:
            target = await self.find_by_name(self.arguments.name)
        connection = await self.within(
            "connect",
            self.device.connect(
                target,
                own_address_type=(
                    hci.OwnAddressType.PUBLIC
                    if self.arguments.public
                    else hci.OwnAddressType.RANDOM
                ),
                timeout=self.arguments.connect_timeout,
            ),
            timeout=self.arguments.connect_timeout + 3.0,
        )
        self.summary["peer"] = address_text(connection.peer_address)
        emit(
            "connected",
            peer=address_text(connection.peer_address),
            handle=connection.handle,
            role="central",
        )
        return connection

    # ---- GATT script -----------------------------------------------------
    async def exchange_mtu(self, peer: Peer) -> None:
        mtu = await self.within("mtu", peer.request_mtu(self.arguments.mtu))
        self.summary["mtu"] = mtu
        emit("mtu", requested=self.arguments.mtu, mtu=mtu)

    async def discover(self, peer: Peer) -> None:
        await self.within("discover services", peer.discover_services())
        services = []
        characteristic_count = 0
        descriptor_count = 0
        for service in peer.services:
            await self.within(
                "discover characteristics", service.discover_characteristics()
            )
            characteristics = []
            for characteristic in service.characteristics:
                await self.within(
                    "discover descriptors", characteristic.discover_descriptors()
                )
                characteristic_count += 1
                descriptor_count += len(characteristic.descriptors)
                characteristics.append(
                    {
                        "uuid": uuid_text(characteristic.uuid),
                        "handle": characteristic.handle,
                        "properties": property_names(characteristic.properties),
                        "descriptors": [
                            {"uuid": uuid_text(d.type), "handle": d.handle}
                            for d in characteristic.descriptors
                        ],
                    }
                )
            services.append(
                {
                    "uuid": uuid_text(service.uuid),
                    "handle": service.handle,
                    "end_handle": service.end_group_handle,
                    "characteristics": characteristics,
                }
            )
        self.summary["services"] = [service["uuid"] for service in services]
        self.summary["characteristic_count"] = characteristic_count
        self.summary["descriptor_count"] = descriptor_count
        emit("discovered", services=services)

    def find_characteristic(self, peer: Peer, uuid: str):
        for service in peer.services:
            for characteristic in service.characteristics:
                if uuid_text(characteristic.uuid) == uuid:
                    return characteristic
        raise StepFailure("lookup", f"characteristic {uuid} not found on the peer")

    async def read_all(self, peer: Peer) -> None:
        for service in peer.services:
            for characteristic in service.characteristics:
                if not characteristic.properties & Characteristic.Properties.READ:
                    continue
                uuid = uuid_text(characteristic.uuid)
                try:
                    value = await self.within(
                        f"read {uuid}", peer.read_value(characteristic)
                    )
                except att.ATT_Error as error:
                    self.summary["read_errors"][uuid] = error.error_code
                    emit(
                        "read",
                        uuid=uuid,
                        handle=characteristic.handle,
                        att_error=error.error_code,
                    )
                    continue
                self.summary["reads"][uuid] = value.hex()
                emit(
                    "read",
                    uuid=uuid,
                    handle=characteristic.handle,
                    length=len(value),
                    hex=value.hex(),
                )
            if self.arguments.no_descriptor_reads:
                continue
            for characteristic in service.characteristics:
                for descriptor in characteristic.descriptors:
                    try:
                        value = await self.within(
                            f"read descriptor {descriptor.handle}",
                            peer.read_value(descriptor),
                        )
                    except att.ATT_Error as error:
                        emit(
                            "descriptor-read",
                            uuid=uuid_text(descriptor.type),
                            handle=descriptor.handle,
                            att_error=error.error_code,
                        )
                        continue
                    self.summary["descriptor_reads"][str(descriptor.handle)] = (
                        value.hex()
                    )
                    emit(
                        "descriptor-read",
                        uuid=uuid_text(descriptor.type),
                        handle=descriptor.handle,
                        length=len(value),
                        hex=value.hex(),
                    )

    async def write(self, peer: Peer, uuid: str, value: bytes, kind: str) -> None:
        characteristic = self.find_characteristic(peer, uuid)
        try:
            await self.within(
                f"write {uuid}",
                peer.write_value(characteristic, value, with_response=True),
            )
        except att.ATT_Error as error:
            raise StepFailure(
                f"write {uuid}", f"ATT error 0x{error.error_code:02X}"
            ) from error
        record = {"kind": kind, "length": len(value), "hex": value.hex()}
        if characteristic.properties & Characteristic.Properties.READ:
            readback = await self.within(
                f"read back {uuid}", peer.read_value(characteristic)
            )
            record["readback_hex"] = readback.hex()
            record["readback_matches"] = readback == value
        self.summary["writes"].setdefault(uuid, []).append(record)
        emit("write", uuid=uuid, handle=characteristic.handle, **record)

    async def subscribe(self, peer: Peer, uuid: str, expected: int | None) -> None:
        characteristic = self.find_characteristic(peer, uuid)
        properties = characteristic.properties
        if properties & Characteristic.Properties.NOTIFY:
            kind = "notify"
        elif properties & Characteristic.Properties.INDICATE:
            kind = "indicate"
        else:
            raise StepFailure(f"subscribe {uuid}", "neither notify nor indicate")
        values: list[bytes] = []
        enough = asyncio.get_running_loop().create_future()
        wanted = expected if expected is not None else self.arguments.default_count

        def on_value(value: bytes) -> None:
            values.append(bytes(value))
            if len(values) >= wanted and not enough.done():
                enough.set_result(None)

        await self.within(
            f"subscribe {uuid}",
            peer.subscribe(characteristic, on_value, prefer_notify=True),
        )
        emit("subscribed", uuid=uuid, handle=characteristic.handle, kind=kind)
        if wanted > 0:
            try:
                await asyncio.wait_for(asyncio.shield(enough), self.step_timeout)
            except asyncio.TimeoutError:
                self.record_subscription(uuid, kind, values, expected)
                raise StepFailure(
                    f"receive {uuid}",
                    f"got {len(values)} of {wanted} {kind} values "
                    f"within {self.step_timeout} s",
                )
        self.record_subscription(uuid, kind, values, expected)
        emit(
            "received",
            uuid=uuid,
            kind=kind,
            count=len(values),
            values=[value.hex() for value in values],
        )

    def record_subscription(self, uuid, kind, values, expected) -> None:
        self.summary["subscriptions"][uuid] = {
            "kind": kind,
            "count": len(values),
            "expected": expected,
            "values": [value.hex() for value in values],
        }

    async def read_denied(self, peer: Peer, uuid: str) -> None:
        characteristic = self.find_characteristic(peer, uuid)
        code = None
        try:
            value = await self.within(
                f"read {uuid}", peer.gatt_client.read_value(characteristic, no_long_read=True)
            )
            emit("read-denied", uuid=uuid, att_error=None, hex=value.hex())
        except att.ATT_Error as error:
            code = error.error_code
            emit("read-denied", uuid=uuid, att_error=code)
        self.summary["read_denied"][uuid] = code

    async def write_denied(self, peer: Peer, uuid: str) -> None:
        characteristic = self.find_characteristic(peer, uuid)
        code = None
        try:
            await self.within(
                f"write {uuid}",
                peer.write_value(characteristic, b"\x01", with_response=True),
            )
        except att.ATT_Error as error:
            code = error.error_code
        emit("write-denied", uuid=uuid, att_error=code)
        self.summary["write_denied"][uuid] = code

    async def run(self) -> None:
        connection = await self.connect()
        disconnected = asyncio.get_running_loop().create_future()
        connection.on(
            "disconnection",
            lambda reason: disconnected.done() or disconnected.set_result(reason),
        )
        peer = Peer(connection)
        script = asyncio.ensure_future(self.script(peer))
        done, _ = await asyncio.wait(
            [script, disconnected], return_when=asyncio.FIRST_COMPLETED
        )
        if script not in done:
            script.cancel()
            raise StepFailure(
                "gatt", f"peer disconnected early (reason {disconnected.result()})"
            )
        script.result()  # re-raise a step failure
        await self.within("disconnect", connection.disconnect())
        reason = await self.within("disconnect", disconnected)
        self.summary["disconnect_reason"] = int(reason)
        emit("disconnected", reason=int(reason))

    async def script(self, peer: Peer) -> None:
        arguments = self.arguments
        await self.exchange_mtu(peer)
        await self.discover(peer)
        if not arguments.no_read_all:
            await self.read_all(peer)
        for uuid in arguments.write_short:
            await self.write(peer, normalize_uuid(uuid), arguments.short_value, "short")
        for uuid in arguments.write_long:
            await self.write(
                peer, normalize_uuid(uuid), long_value(arguments.long_length), "long"
            )
        for text in arguments.subscribe:
            uuid, expected = parse_subscription(text)
            await self.subscribe(peer, uuid, expected)
        for uuid in arguments.read_denied:
            await self.read_denied(peer, normalize_uuid(uuid))
        for uuid in arguments.write_denied:
            await self.write_denied(peer, normalize_uuid(uuid))


# --------------------------------------------------------------------------


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Bumble test GATT central.")
    parser.add_argument(
        "transport",
        help="HCI transport moniker, or a bare TCP port meaning "
        "tcp-client:127.0.0.1:PORT",
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--name", help="scan for this advertised name")
    target.add_argument(
        "--address", help="connect to AA:BB:CC:DD:EE:FF/R (random) or .../P (public)"
    )
    parser.add_argument(
        "--own-address",
        default="F0:F0:F0:F0:F0:F0",
        help="this central's random static address",
    )
    parser.add_argument(
        "--public",
        action="store_true",
        help="connect with the controller's public address instead of --own-address",
    )
    parser.add_argument("--mtu", type=int, default=517, help="ATT MTU to request")
    parser.add_argument(
        "--write-short",
        action="append",
        default=[],
        metavar="UUID",
        help="write the short value to this characteristic (repeatable)",
    )
    parser.add_argument(
        "--write-long",
        action="append",
        default=[],
        metavar="UUID",
        help="write the long value to this characteristic (repeatable)",
    )
    parser.add_argument(
        "--short-hex",
        default=default_short_value().hex(),
        help="short value as hex (default: ASCII 'bluetide-short')",
    )
    parser.add_argument(
        "--long-length",
        type=int,
        default=400,
        help="length of the long value, byte i = (i*7+3) %% 256 (default 400)",
    )
    parser.add_argument(
        "--subscribe",
        action="append",
        default=[],
        metavar="UUID[=COUNT]",
        help="subscribe and wait for COUNT values (repeatable)",
    )
    parser.add_argument(
        "--default-count",
        type=int,
        default=1,
        help="values to wait for when --subscribe gives no COUNT",
    )
    parser.add_argument(
        "--read-denied",
        action="append",
        default=[],
        metavar="UUID",
        help="read this characteristic and record the ATT error (repeatable)",
    )
    parser.add_argument(
        "--write-denied",
        action="append",
        default=[],
        metavar="UUID",
        help="write this characteristic and record the ATT error (repeatable)",
    )
    parser.add_argument(
        "--no-read-all", action="store_true", help="skip reading every readable value"
    )
    parser.add_argument(
        "--no-descriptor-reads", action="store_true", help="skip descriptor reads"
    )
    parser.add_argument(
        "--step-timeout", type=float, default=10.0, help="seconds allowed per step"
    )
    parser.add_argument(
        "--scan-timeout", type=float, default=15.0, help="seconds allowed to find --name"
    )
    parser.add_argument(
        "--connect-timeout", type=float, default=15.0, help="seconds allowed to connect"
    )
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds allowed for everything"
    )
    add_common_options(parser)
    arguments = parser.parse_args(argv)
    try:
        arguments.short_value = bytes.fromhex(arguments.short_hex)
        if arguments.address:
            parse_address(arguments.address)
        for uuid in (
            arguments.write_short
            + arguments.write_long
            + arguments.read_denied
            + arguments.write_denied
        ):
            normalize_uuid(uuid)
        for text in arguments.subscribe:
            parse_subscription(text)
    except Exception as error:
        emit("error", during="arguments", message=str(error))
        sys.stdout.flush()
        os._exit(2)
    return arguments




async def run(arguments: argparse.Namespace) -> int:
    opened = await powered_central(arguments, "Bluetide Test Central", arguments.own_address, emit)
    if opened is None:
        return 1
    transport, device = opened
    async with transport:
        central = TestCentral(arguments, device)
        try:
            await asyncio.wait_for(device.power_on(), 15.0)
            own = device.public_address if arguments.public else device.random_address
            emit("ready", address=address_text(own))
            work = asyncio.ensure_future(central.run())
            waiters = [work]
            if arguments.exit_on_stdin_eof:
                waiters.append(stdin_eof_future())
            done, _ = await asyncio.wait(
                waiters, timeout=arguments.timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if work not in done:
                work.cancel()
                reason = "stdin closed" if done else f"timed out after {arguments.timeout} s"
                raise StepFailure("run", reason)
            work.result()
        except StepFailure as failure:
            emit("error", during=failure.during, message=failure.message)
            emit("summary", **central.summary)
            return 1
        except Exception as error:
            emit("error", during="run", message=repr(error))
            emit("summary", **central.summary)
            return 1
        central.summary["ok"] = True
        emit("summary", **central.summary)
        return 0


def main() -> None:
    run_main(parse_arguments, run, lambda error: emit("error", during="run", message=repr(error)))


if __name__ == "__main__":
    main()
