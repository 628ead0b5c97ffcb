#!/usr/bin/env python3
"""Bumble central for Bluetide's authorisation interop test.

Connects from the random static `--address` to `--peer`, discovers its services and reads the
characteristic `--uuid` once, then once more for every `read` line on stdin. Every event is one
JSON line on stdout: ready, connected, read (value, or the ATT error code), error. Exit status:
0 once stdin ends (the link is closed first), 1 on a setup error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Interop", "bumble"))

from bumble import hci  # noqa: E402
from bumble.device import Device, DeviceConfiguration, Peer  # noqa: E402
from bumble_common import (  # noqa: E402
    add_common_options,
    address_text,
    emit_event,
    open_address_and_transport,
    run_main,
)


def parse_arguments(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("transport", help="HCI transport, or a bare TCP port of controllers.py")
    parser.add_argument("--address", default="C9:C8:C7:C6:C5:C3", help="our random static address")
    parser.add_argument("--peer", required=True, help="address to connect to, e.g. C0:00:00:00:00:01/R")
    parser.add_argument("--uuid", required=True, help="the characteristic to read")
    add_common_options(parser)
    return parser.parse_args(argv)


async def read_once(characteristic) -> None:
    try:
        value = await asyncio.wait_for(characteristic.read_value(), 25.0)
        emit_event("read", value=bytes(value).decode(errors="replace"))
    except asyncio.TimeoutError:
        emit_event("read", error="no answer within 25 s")
    except Exception as error:  # Bumble raises ATT_Error (a ProtocolError) with the code
        emit_event("read", error=repr(error), code=getattr(error, "error_code", None))


async def run(arguments: argparse.Namespace) -> int:
    opened = await open_address_and_transport(arguments)
    if opened is None:
        return 1
    address, transport = opened
    async with transport:
        config = DeviceConfiguration()
        config.address = address
        device = Device.from_config_with_hci(config, transport.source, transport.sink)
        try:
            await asyncio.wait_for(device.power_on(), 15.0)
        except Exception as error:
            emit_event("error", during="power on", message=repr(error))
            return 1
        emit_event("ready", address=address_text(device.random_address))
        upper = arguments.peer.upper()
        kind = hci.Address.PUBLIC_DEVICE_ADDRESS if upper.endswith("/P") else hci.Address.RANDOM_DEVICE_ADDRESS
        try:
            connection = await asyncio.wait_for(
                device.connect(hci.Address(upper.split("/")[0], kind), own_address_type=hci.OwnAddressType.RANDOM), 15.0)
            emit_event("connected", handle=connection.handle)
            peer = Peer(connection)
            await asyncio.wait_for(peer.discover_services(), 15.0)
            await asyncio.wait_for(peer.discover_characteristics(), 15.0)
            found = peer.get_characteristics_by_uuid(arguments.uuid)
            if not found:
                emit_event("error", during="discovery", message=f"{arguments.uuid} not found")
                return 1
        except Exception as error:
            emit_event("error", during="connect", message=repr(error))
            return 1

        await read_once(found[0])
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                break
            if line.decode().strip() == "read":
                await read_once(found[0])
        try:
            await asyncio.wait_for(connection.disconnect(), 5.0)
        except Exception:
            pass
        return 0


def main() -> None:
    run_main(parse_arguments, run, lambda error: emit_event("error", during="run", message=repr(error)))


if __name__ == "__main__":
    main()
