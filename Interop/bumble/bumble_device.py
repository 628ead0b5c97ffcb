"""How the Bumble interop scripts start a device: open the transport (reporting why not), build
the device, and serve a peripheral until it is done, or power a central. Every peer script
(peripheral.py, central.py, nus_peer.py, ring_peer.py, the trainers, ftms_app.py) starts this way;
the JSON event lines, options and main() are in bumble_common.py."""

import argparse
import asyncio
from typing import Awaitable, Callable, Optional

from bumble import hci
from bumble_common import address_text, emit_event, transport_moniker, wait_until_finished


class StepFailure(Exception):
    """A step of a script failed: `during` names the step for the error line."""

    def __init__(self, during: str, message: str) -> None:
        super().__init__(message)
        self.during = during
        self.message = message


async def open_reported_transport(text: str, emit: Callable[..., None] = emit_event):
    """The transport `text` names (a bare port means tcp-client:127.0.0.1:PORT), opened within
    10 s, or None after an `error` line (through `emit`) saying why."""
    from bumble.transport import open_transport

    try:
        return await asyncio.wait_for(open_transport(transport_moniker(text)), 10.0)
    except Exception as error:
        emit("error", during="transport", message=repr(error))
        return None


async def open_address_and_transport(arguments: argparse.Namespace, emit: Callable[..., None] = emit_event):
    """A script's start: its random static `--address` and its opened transport, or None after
    an error line."""
    try:
        address = hci.Address(arguments.address, hci.Address.RANDOM_DEVICE_ADDRESS)
    except Exception as error:
        emit("error", during="arguments", message=f"bad address: {error}")
        return None
    transport = await open_reported_transport(arguments.transport, emit)
    return None if transport is None else (address, transport)


def make_device(transport, name: str, address: hci.Address, advertising_data: Optional[bytes] = None,
                scan_response: Optional[bytes] = None, interval_ms: Optional[float] = None):
    """A Bumble device on `transport` named `name` at `address`, with the advertising data,
    scan response and advertising interval given (Bumble's defaults for those left out)."""
    from bumble.device import Device, DeviceConfiguration

    config = DeviceConfiguration()
    config.name = name
    config.address = address
    if interval_ms is not None:
        config.advertising_interval_min = interval_ms
        config.advertising_interval_max = interval_ms
    if advertising_data is not None:
        config.advertising_data = advertising_data
    if scan_response is not None:
        config.scan_response_data = scan_response
    return Device.from_config_with_hci(config, transport.source, transport.sink)


async def serve_peripheral(
    arguments: argparse.Namespace,
    advertising_data: bytes,
    make_peer: Callable,
    scan_response: Optional[bytes] = None,
    interval_ms: float = 50.0,
    auto_restart: bool = False,
    public: bool = False,
    advertise: Optional[Callable[[], Awaitable[None]]] = None,
    ready_fields: Callable = lambda peer: {},
) -> int:
    """A peripheral script's run: opens `--transport` at the random static `--address`, builds
    the device named `--name`, lets `make_peer(device)` add its services (an object with a
    `finished` future, and optionally `stop()`), powers on, advertises (from the public address
    with `public`; `advertise` replaces Bumble's own start_advertising), reports `ready` with
    `ready_fields(peer)`, and waits until the peer finishes, a signal, end of stdin or
    `--timeout` (see wait_until_finished)."""
    opened = await open_address_and_transport(arguments)
    if opened is None:
        return 1
    address, transport = opened
    async with transport:
        device = make_device(transport, arguments.name, address, advertising_data, scan_response, interval_ms)
        peer = make_peer(device)
        own_type = hci.OwnAddressType.PUBLIC if public else hci.OwnAddressType.RANDOM
        try:
            await asyncio.wait_for(device.power_on(), 15.0)
            start = advertise() if advertise else device.start_advertising(own_address_type=own_type, auto_restart=auto_restart)
            await asyncio.wait_for(start, 10.0)
        except Exception as error:
            emit_event("error", during="power on / advertising", message=repr(error))
            return 1
        own = device.public_address if public else device.random_address
        emit_event("ready", name=arguments.name, address=address_text(own), **ready_fields(peer))
        code = await wait_until_finished(peer.finished, arguments)
        if hasattr(peer, "stop"):
            peer.stop()
        return code


async def powered_central(arguments: argparse.Namespace, name: str, address_text_value: str, emit: Callable[..., None]):
    """A central script's start: the transport `arguments.transport` opened and a device named
    `name` at the random static `address_text_value` built on it, or None after an error line.
    The caller powers it on inside `async with transport:`."""
    try:
        address = hci.Address(address_text_value, hci.Address.RANDOM_DEVICE_ADDRESS)
    except Exception as error:
        emit("error", during="arguments", message=f"bad address: {error}")
        return None
    transport = await open_reported_transport(arguments.transport, emit)
    if transport is None:
        return None
    return transport, make_device(transport, name, address)


def report_crash_as_event(error: Exception) -> None:
    """A crash as an `error` event line (what run_main reports for the event-line scripts)."""
    emit_event("error", during="run", message=repr(error))
