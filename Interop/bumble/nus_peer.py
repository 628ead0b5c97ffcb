#!/usr/bin/env python3
"""Bumble Nordic UART Service peripheral: an interop peer for `bluetide uart` and BluetideSerial.

It connects to an HCI controller (normally one of `controllers.py`), advertises the NUS service
UUID (6E400001-B5A3-F393-E0A9-E50E24DCCA9E) with a random static address and its name in the
scan response, and serves:

* RX 6E400002 (Write + Write Without Response): what the central sends.
* TX 6E400003 (Notify): what the peripheral sends. With --echo (the default) every RX write
  comes back on TX, cut to ATT MTU - 3 bytes; --greeting TEXT is notified once the central
  subscribes.

Every event is one JSON object per line on stdout: ready, connected, mtu, subscribed, received
(bytes so far), disconnected, stopped, timeout, error. The process exits 0 when the link is
disconnected, 3 when --timeout expires first, 4 on a signal or end of stdin, 1 on a setup error.
"""

from __future__ import annotations

import argparse
import asyncio

from bumble.core import AdvertisingData, UUID
from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble_common import add_common_options, address_text, emit_event, run_main
from bumble_device import serve_peripheral, report_crash_as_event

NUS_SERVICE_UUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
NUS_RX_UUID = "6E400002-B5A3-F393-E0A9-E50E24DCCA9E"
NUS_TX_UUID = "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"

emit = emit_event


class UARTPeer:
    """The NUS GATT database, the echo and the event output."""

    def __init__(self, arguments: argparse.Namespace, device: Device) -> None:
        self.arguments = arguments
        self.device = device
        self.finished = asyncio.get_running_loop().create_future()
        self.received = 0
        # Echoes go out in order, one at a time, from one queue.
        self.outgoing: asyncio.Queue = asyncio.Queue()
        self.connection = None
        self.tx = Characteristic(
            NUS_TX_UUID, Characteristic.Properties.NOTIFY, Characteristic.Permissions.READABLE, b""
        )
        self.rx = Characteristic(
            NUS_RX_UUID,
            Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
            Characteristic.Permissions.WRITEABLE,
            CharacteristicValue(write=self.on_rx_write),
        )
        device.add_service(Service(NUS_SERVICE_UUID, [self.rx, self.tx]))
        device.on("connection", self.on_connection)
        self.tx.on("subscription", self.on_subscription)
        self.sender = asyncio.get_running_loop().create_task(self.send_loop())

    def stop(self) -> None:
        self.sender.cancel()

    def on_connection(self, connection) -> None:
        self.connection = connection
        emit("connected", peer=address_text(connection.peer_address))
        connection.on("disconnection", self.on_disconnection)
        connection.on("connection_att_mtu_update", lambda: emit("mtu", mtu=connection.att_mtu))

    def on_disconnection(self, reason: int) -> None:
        emit("disconnected", reason=reason, received=self.received)
        if not self.finished.done():
            self.finished.set_result(0)

    def on_subscription(self, connection, notify_enabled: bool, indicate_enabled: bool) -> None:
        emit("subscribed", notify=notify_enabled)
        if notify_enabled and self.arguments.greeting:
            self.outgoing.put_nowait(self.arguments.greeting.encode("utf-8"))

    def on_rx_write(self, connection, value: bytes) -> None:
        self.received += len(value)
        emit("received", bytes=len(value), total=self.received)
        if self.arguments.echo:
            self.outgoing.put_nowait(bytes(value))

    async def send_loop(self) -> None:
        while True:
            data = await self.outgoing.get()
            connection = self.connection
            if connection is None:
                continue
            size = max(connection.att_mtu - 3, 20)
            for start in range(0, len(data), size):
                await self.device.notify_subscriber(connection, self.tx, data[start:start + size])


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Bumble Nordic UART Service peripheral (echo).")
    parser.add_argument("transport", help="HCI transport moniker, or a bare TCP port meaning tcp-client:127.0.0.1:PORT")
    parser.add_argument("--name", default="Bumble UART", help="advertised name (in the scan response)")
    parser.add_argument("--address", default="C6:C5:C4:C3:C2:C3", help="random static address (top two bits 11)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before giving up if nobody disconnects (exit 3)")
    parser.add_argument("--no-echo", dest="echo", action="store_false", help="do not send RX writes back on TX")
    parser.add_argument("--greeting", default="", help="text notified once the central subscribes")
    add_common_options(parser)
    return parser.parse_args(argv)


async def run(arguments: argparse.Namespace) -> int:
    # The 128-bit service UUID (18 bytes) and a name of up to 11 bytes fill the 31 bytes of
    # legacy advertising data (no room for flags); the name is in the scan response too.
    name = arguments.name.encode("utf-8")
    fields = [(AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, bytes(UUID(NUS_SERVICE_UUID)))]
    if len(name) <= 11:
        fields.append((AdvertisingData.COMPLETE_LOCAL_NAME, name))
    else:
        fields.insert(0, (AdvertisingData.FLAGS, bytes([0x06])))
    scan_response = bytes(AdvertisingData([(AdvertisingData.COMPLETE_LOCAL_NAME, name)]))
    return await serve_peripheral(
        arguments, bytes(AdvertisingData(fields)), lambda device: UARTPeer(arguments, device), scan_response=scan_response)


def main() -> None:
    run_main(parse_arguments, run, report_crash_as_event)


if __name__ == "__main__":
    main()
