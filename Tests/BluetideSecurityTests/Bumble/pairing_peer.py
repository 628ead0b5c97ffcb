#!/usr/bin/env python3
"""Bumble peer for Bluetide's pairing interop tests.

As `--role peripheral` it advertises `--name` from the random static `--address` and serves
the Bluetide security test service:

* B1DE0101-0000-4000-8000-00000000B1DE: read needs an encrypted link ("encrypted")
* B1DE0102-0000-4000-8000-00000000B1DE: read needs an authenticated link ("authenticated")

As `--role central` it connects to `--peer` and pairs (`--pair`), or asks only to encrypt
(`--encrypt`, with a bond in `--keystore`), then reads the two values above from the peer.

Pairing follows `--io` (no-io, display, display-yes-no, keyboard, keyboard-display), `--sc` /
`--legacy`, `--mitm` / `--no-mitm`, `--bonding`; `--passkey N` fixes the passkey it displays,
`--refuse-pairing` answers pairing requests with Pairing Failed 0x05. The user's part comes from stdin lines
`passkey NNNNNN` and `confirm yes|no`; what it shows goes to stdout. Every event is one JSON
line on stdout: ready, connected, display (passkey), compare (number), pairing (keys), pairing
failed (reason), encryption, read, disconnected, error. Exit status: 0 after the link is gone,
3 on the timeout, 1 on a setup error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Interop", "bumble"))

from bumble import hci  # noqa: E402
from bumble.core import AdvertisingData  # noqa: E402
from bumble.device import Device, DeviceConfiguration, Peer  # noqa: E402
from bumble.gatt import Characteristic, CharacteristicValue, Service  # noqa: E402
from bumble.keys import JsonKeyStore  # noqa: E402
from bumble.pairing import PairingConfig, PairingDelegate  # noqa: E402
from bumble_common import (  # noqa: E402
    add_common_options,
    address_text,
    emit_event,
    open_address_and_transport,
    run_main,
)

SERVICE_UUID = "B1DE0100-0000-4000-8000-00000000B1DE"
ENCRYPTED_UUID = "B1DE0101-0000-4000-8000-00000000B1DE"
AUTHENTICATED_UUID = "B1DE0102-0000-4000-8000-00000000B1DE"

IO = {
    "no-io": PairingDelegate.NO_OUTPUT_NO_INPUT,
    "display": PairingDelegate.DISPLAY_OUTPUT_ONLY,
    "display-yes-no": PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
    "keyboard": PairingDelegate.KEYBOARD_INPUT_ONLY,
    "keyboard-display": PairingDelegate.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT,
}


class StdinAnswers:
    """Lines from stdin (`passkey N`, `confirm yes|no`), read by a background task."""

    def __init__(self) -> None:
        self.passkeys: asyncio.Queue = asyncio.Queue()
        self.confirms: asyncio.Queue = asyncio.Queue()
        self.closed = asyncio.get_running_loop().create_future()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                if not self.closed.done():
                    self.closed.set_result(None)
                return
            words = line.decode().split()
            if len(words) == 2 and words[0] == "passkey":
                await self.passkeys.put(int(words[1]))
            elif len(words) == 2 and words[0] == "confirm":
                await self.confirms.put(words[1] == "yes")


class Delegate(PairingDelegate):
    def __init__(self, io: int, answers: StdinAnswers, wait: float, passkey: int | None = None, refuse: bool = False) -> None:
        super().__init__(io_capability=io)
        self.answers = answers
        self.wait = wait
        self.passkey = passkey
        self.refuse = refuse

    async def accept(self) -> bool:
        if self.refuse:
            emit_event("pairing refused")
        return not self.refuse

    async def generate_passkey(self) -> int:
        if self.passkey is not None:
            return self.passkey
        return await super().generate_passkey()

    async def confirm(self, auto: bool = False) -> bool:
        return True

    async def compare_numbers(self, number: int, digits: int) -> bool:
        emit_event("compare", number=number)
        try:
            return await asyncio.wait_for(self.answers.confirms.get(), self.wait)
        except asyncio.TimeoutError:
            return False

    async def get_number(self) -> int | None:
        emit_event("enter passkey")
        try:
            return await asyncio.wait_for(self.answers.passkeys.get(), self.wait)
        except asyncio.TimeoutError:
            return None

    async def display_number(self, number: int, digits: int) -> None:
        emit_event("display", passkey=number)


def parse_address(text: str) -> hci.Address:
    """`AA:BB:CC:DD:EE:FF/R` (random, the default) or `.../P` (public)."""
    upper = text.upper()
    kind = hci.Address.PUBLIC_DEVICE_ADDRESS if upper.endswith("/P") else hci.Address.RANDOM_DEVICE_ADDRESS
    return hci.Address(upper.split("/")[0], kind)


def keys_authenticated(keys) -> bool:
    """Whether the LTK came from an authenticated (MITM-protected) method."""
    for name in ("ltk", "ltk_central", "ltk_peripheral"):
        value = getattr(keys, name, None)
        if value is not None:
            return bool(value.authenticated)
    return False


def keys_summary(keys) -> dict:
    summary = {}
    for name in ("ltk", "ltk_central", "ltk_peripheral", "irk", "csrk"):
        value = getattr(keys, name, None)
        if value is not None:
            summary[name] = value.value.hex()
    if getattr(keys, "address", None) is not None:
        summary["identity"] = address_text(keys.address)
    return summary


def parse_arguments(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("transport", help="HCI transport, or a bare TCP port of controllers.py")
    parser.add_argument("--role", choices=["peripheral", "central"], required=True)
    parser.add_argument("--address", default="F1:F2:F3:F4:F5:F6", help="our random static address")
    parser.add_argument("--name", default="Bluetide Pairing Peer")
    parser.add_argument("--peer", help="(central) address to connect to, e.g. C0:00:00:00:00:01/R")
    parser.add_argument("--io", choices=sorted(IO), default="no-io")
    parser.add_argument("--legacy", action="store_true", help="LE legacy pairing only")
    parser.add_argument("--no-mitm", action="store_true")
    parser.add_argument("--no-bonding", action="store_true")
    parser.add_argument("--keystore", help="JSON key store file (bonds survive restarts)")
    parser.add_argument("--pair", action="store_true", help="(central) pair after connecting")
    parser.add_argument("--encrypt", action="store_true", help="(central) encrypt with the stored bond")
    parser.add_argument("--request-security", action="store_true", help="(peripheral) send a Security Request on connect")
    parser.add_argument("--passkey", type=int, help="(display) show this passkey instead of a random one")
    parser.add_argument("--refuse-pairing", action="store_true", help="answer every pairing request with Pairing Failed 0x05")
    parser.add_argument("--answer-timeout", type=float, default=20.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    add_common_options(parser)
    return parser.parse_args(argv)


async def run(arguments: argparse.Namespace) -> int:
    opened = await open_address_and_transport(arguments)
    if opened is None:
        return 1
    address, transport = opened
    answers = StdinAnswers()
    asyncio.get_running_loop().create_task(answers.run())
    async with transport:
        config = DeviceConfiguration()
        config.name = arguments.name
        config.address = address
        config.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LOCAL_NAME, arguments.name.encode("utf-8")),
        ]))
        device = Device.from_config_with_hci(config, transport.source, transport.sink)
        if arguments.keystore:
            device.keystore = JsonKeyStore(namespace=None, filename=arguments.keystore)
        delegate = Delegate(IO[arguments.io], answers, arguments.answer_timeout, arguments.passkey, arguments.refuse_pairing)
        device.pairing_config_factory = lambda connection: PairingConfig(
            sc=not arguments.legacy, mitm=not arguments.no_mitm, bonding=not arguments.no_bonding, delegate=delegate,
            identity_address_type=PairingConfig.AddressType.RANDOM)
        device.add_service(Service(SERVICE_UUID, [
            Characteristic(ENCRYPTED_UUID, Characteristic.Properties.READ,
                           Characteristic.Permissions.READ_REQUIRES_ENCRYPTION, CharacteristicValue(read=lambda c: b"encrypted")),
            Characteristic(AUTHENTICATED_UUID, Characteristic.Properties.READ,
                           Characteristic.Permissions.READ_REQUIRES_AUTHENTICATION, CharacteristicValue(read=lambda c: b"authenticated")),
        ]))
        finished = asyncio.get_running_loop().create_future()

        def on_connection(connection) -> None:
            emit_event("connected", peer=address_text(connection.peer_address), handle=connection.handle)
            connection.on("pairing", lambda keys: emit_event("pairing", keys=keys_summary(keys), authenticated=keys_authenticated(keys)))
            connection.on("pairing_failure", lambda reason: emit_event("pairing failed", reason=int(reason)))
            connection.on("connection_encryption_change", lambda *args: emit_event(
                "encryption", encrypted=bool(connection.encryption), authenticated=connection.authenticated))
            connection.on("disconnection", lambda reason: (
                emit_event("disconnected", reason=int(reason)), finished.done() or finished.set_result(0)))
            if arguments.role == "peripheral" and arguments.request_security:
                device.request_pairing(connection)

        device.on("connection", on_connection)
        try:
            await asyncio.wait_for(device.power_on(), 15.0)
            if arguments.role == "peripheral":
                await asyncio.wait_for(device.start_advertising(own_address_type=hci.OwnAddressType.RANDOM, auto_restart=False), 10.0)
        except Exception as error:
            emit_event("error", during="power on", message=repr(error))
            return 1
        emit_event("ready", address=address_text(device.random_address))

        if arguments.role == "central":
            try:
                connection = await asyncio.wait_for(device.connect(parse_address(arguments.peer), own_address_type=hci.OwnAddressType.RANDOM), 15.0)
                if arguments.pair:
                    await asyncio.wait_for(connection.pair(), arguments.timeout)
                elif arguments.encrypt:
                    await asyncio.wait_for(connection.encrypt(), 15.0)
                peer = Peer(connection)
                await asyncio.wait_for(peer.discover_services(), 15.0)
                await asyncio.wait_for(peer.discover_characteristics(), 15.0)
                for uuid in (ENCRYPTED_UUID, AUTHENTICATED_UUID):
                    found = peer.get_characteristics_by_uuid(uuid)
                    if not found:
                        emit_event("read", uuid=uuid, error="not found")
                        continue
                    try:
                        value = await asyncio.wait_for(found[0].read_value(), 15.0)
                        emit_event("read", uuid=uuid, value=bytes(value).decode(errors="replace"))
                    except Exception as error:
                        emit_event("read", uuid=uuid, error=repr(error))
                await connection.disconnect()
            except Exception as error:
                emit_event("error", during="central", message=repr(error))
                return 1

        done, _ = await asyncio.wait([finished, answers.closed], timeout=arguments.timeout, return_when=asyncio.FIRST_COMPLETED)
        if finished in done:
            return 0
        if done:
            emit_event("stopped", reason="stdin closed")
            return 4
        emit_event("timeout", seconds=arguments.timeout)
        return 3


def main() -> None:
    run_main(parse_arguments, run, lambda error: emit_event("error", during="run", message=repr(error)))


if __name__ == "__main__":
    main()
