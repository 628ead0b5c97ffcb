#!/usr/bin/env python3
"""Bumble Nordic UART central: an interop peer for `bluetide uart serve` (SerialServer).

It finds a peripheral by advertised name, connects, asks for ATT MTU 247, finds the NUS service,
subscribes to TX (6E400003), writes N random bytes (seeded) to RX (6E400002) as Write Commands of
ATT MTU - 3 bytes, and collects what TX notifies until N bytes came back (an echoing server) or
the time runs out. Prints JSON event lines; the last is
{"event": "result", "sent": N, "received": M, "equal": true|false}. Exit 0 when equal, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import random

from bumble import hci
from bumble.core import UUID, AdvertisingData
from bumble.device import Peer
from bumble_common import add_common_options, address_text, emit_event, run_main, transport_moniker
from bumble_device import powered_central

NUS_SERVICE_UUID = UUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
NUS_RX_UUID = UUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
NUS_TX_UUID = UUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")

emit = emit_event


async def find(device, name: str, limit: float) -> hci.Address:
    found = asyncio.get_running_loop().create_future()

    def on_advertisement(advertisement) -> None:
        data = advertisement.data
        local = data.get(AdvertisingData.COMPLETE_LOCAL_NAME) or data.get(AdvertisingData.SHORTENED_LOCAL_NAME)
        if local == name and not found.done():
            found.set_result(advertisement.address)

    device.on("advertisement", on_advertisement)
    await device.start_scanning(filter_duplicates=True)
    try:
        return await asyncio.wait_for(found, limit)
    finally:
        device.remove_listener("advertisement", on_advertisement)
        await device.stop_scanning()


async def exchange(arguments: argparse.Namespace, device) -> int:
    address = await find(device, arguments.name, arguments.scan_timeout)
    emit("found", address=address_text(address))
    connection = await device.connect(address, own_address_type=hci.OwnAddressType.RANDOM, timeout=15)
    emit("connected", peer=address_text(connection.peer_address))
    peer = Peer(connection)
    mtu = await peer.request_mtu(247)
    emit("mtu", mtu=mtu)
    await peer.discover_services([NUS_SERVICE_UUID])
    service = peer.get_services_by_uuid(NUS_SERVICE_UUID)[0]
    await service.discover_characteristics()
    rx = service.get_characteristics_by_uuid(NUS_RX_UUID)[0]
    tx = service.get_characteristics_by_uuid(NUS_TX_UUID)[0]
    received = bytearray()
    enough = asyncio.get_running_loop().create_future()
    payload = random.Random(arguments.seed).randbytes(arguments.bytes)

    def on_value(value: bytes) -> None:
        received.extend(value)
        if len(received) >= len(payload) and not enough.done():
            enough.set_result(None)

    await peer.subscribe(tx, on_value, prefer_notify=True)
    emit("subscribed")
    size = mtu - 3
    for start in range(0, len(payload), size):
        await peer.write_value(rx, payload[start:start + size], with_response=False)
    emit("sent", bytes=len(payload))
    try:
        await asyncio.wait_for(enough, arguments.timeout)
    except asyncio.TimeoutError:
        pass
    equal = bytes(received[: len(payload)]) == payload and len(received) == len(payload)
    emit("result", sent=len(payload), received=len(received), equal=equal)
    await connection.disconnect()
    return 0 if equal else 1


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Bumble Nordic UART central: N random bytes through an echoing server.")
    parser.add_argument("transport", help="HCI transport moniker, or a bare TCP port meaning tcp-client:127.0.0.1:PORT")
    parser.add_argument("--name", required=True, help="advertised name of the server")
    parser.add_argument("--bytes", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--scan-timeout", type=float, default=20.0)
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for the echo")
    parser.add_argument("--address", default="C6:C5:C4:C3:C2:C7", help="own random static address")
    add_common_options(parser)
    arguments = parser.parse_args(argv)
    arguments.transport = transport_moniker(arguments.transport)
    return arguments


async def run(arguments: argparse.Namespace) -> int:
    opened = await powered_central(arguments, "Bumble NUS Central", arguments.address, emit)
    if opened is None:
        return 1
    transport, device = opened
    async with transport:
        await asyncio.wait_for(device.power_on(), 15.0)
        emit("ready")
        return await exchange(arguments, device)


def main() -> None:
    run_main(parse_arguments, run, lambda error: emit("error", during="run", message=repr(error)))


if __name__ == "__main__":
    main()
