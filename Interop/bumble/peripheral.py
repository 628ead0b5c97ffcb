#!/usr/bin/env python3
"""Bumble GATT peripheral used as an interop peer for Bluetide's tests.

It connects to an HCI controller (normally one of `controllers.py`), advertises
a name with a random static address, and offers:

* Heart Rate (0x180D): Heart Rate Measurement (0x2A37, notify) and Body Sensor
  Location (0x2A38, read).
* Battery (0x180F): Battery Level (0x2A19, read + notify).
* The Bluetide test service (128-bit UUIDs, see README.md) with a 300-byte
  readable value, an echo value (write with response, long writes allowed,
  readable), an indicate and a notify characteristic that send numbered
  sequences once subscribed, a write-only value (read gives ATT error 0x02)
  and a read-only value (write gives ATT error 0x03).

Every event is one JSON object per line on stdout (see README.md). The process
exits with status 0 when the link is disconnected, 3 when the timeout expires
first, 1 on a setup error.
"""

from __future__ import annotations

import argparse
import asyncio
import struct

from bumble import att
from bumble.core import AdvertisingData
from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble_common import address_text, emit_event, add_common_options, run_main
from bumble_device import serve_peripheral, report_crash_as_event

# --------------------------------------------------------------------------
# UUIDs of the Bluetide test service (documented in README.md).
# --------------------------------------------------------------------------
def bluetide_uuid(short: int) -> str:
    """Expand a 16-bit suffix into the Bluetide test UUID family."""
    return f"B1DE{short:04X}-0000-4000-8000-00000000B1DE"


TEST_SERVICE_UUID = bluetide_uuid(0x0001)
LONG_READ_UUID = bluetide_uuid(0x0002)
ECHO_UUID = bluetide_uuid(0x0003)
INDICATE_UUID = bluetide_uuid(0x0004)
NOTIFY_UUID = bluetide_uuid(0x0005)
WRITE_ONLY_UUID = bluetide_uuid(0x0006)
READ_ONLY_UUID = bluetide_uuid(0x0007)

HEART_RATE_SERVICE_UUID = "180D"
HEART_RATE_MEASUREMENT_UUID = "2A37"
BODY_SENSOR_LOCATION_UUID = "2A38"
BATTERY_SERVICE_UUID = "180F"
BATTERY_LEVEL_UUID = "2A19"

LONG_READ_LENGTH = 300
MAX_ECHO_LENGTH = 512
READ_ONLY_VALUE = b"read-only"
BODY_SENSOR_LOCATION_CHEST = 0x01

# Names used in the JSON output for each characteristic.
CHARACTERISTIC_NAMES = {
    HEART_RATE_MEASUREMENT_UUID: "heart-rate-measurement",
    BODY_SENSOR_LOCATION_UUID: "body-sensor-location",
    BATTERY_LEVEL_UUID: "battery-level",
    LONG_READ_UUID: "long-read",
    ECHO_UUID: "echo",
    INDICATE_UUID: "indicate",
    NOTIFY_UUID: "notify",
    WRITE_ONLY_UUID: "write-only",
    READ_ONLY_UUID: "read-only",
}


def long_read_value() -> bytes:
    """The deterministic 300-byte value: byte i is i % 256."""
    return bytes(i % 256 for i in range(LONG_READ_LENGTH))


def sequence_payload(index: int, total: int) -> bytes:
    """Payload of numbered notifications and indications: index u16 LE, total u16 LE."""
    return struct.pack("<HH", index, total)


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------
emit = emit_event


# --------------------------------------------------------------------------
# The peripheral
# --------------------------------------------------------------------------
class TestPeripheral:
    """Owns the Bumble device, its GATT database and the event output."""

    def __init__(self, arguments: argparse.Namespace, device: Device) -> None:
        self.arguments = arguments
        self.device = device
        self.finished = asyncio.get_running_loop().create_future()
        self.echo_value = b""
        self.write_only_value = b""
        self.battery_level = arguments.battery_level
        self.tasks: set[asyncio.Task] = set()
        self.characteristics: dict[str, Characteristic] = {}
        self._build_database()
        device.on("connection", self.on_connection)
        device.on("characteristic_subscription", self.on_subscription)

    # ---- database -------------------------------------------------------
    def _characteristic(
        self, uuid: str, properties, permissions, value
    ) -> Characteristic:
        characteristic = Characteristic(uuid, properties, permissions, value)
        self.characteristics[uuid] = characteristic
        return characteristic

    def _build_database(self) -> None:
        P = Characteristic.Properties
        readable = Characteristic.READABLE
        writeable = Characteristic.WRITEABLE

        heart_rate = Service(
            HEART_RATE_SERVICE_UUID,
            [
                self._characteristic(
                    HEART_RATE_MEASUREMENT_UUID, P.NOTIFY, 0, bytes([0x00, 60])
                ),
                self._characteristic(
                    BODY_SENSOR_LOCATION_UUID,
                    P.READ,
                    readable,
                    bytes([BODY_SENSOR_LOCATION_CHEST]),
                ),
            ],
        )
        battery = Service(
            BATTERY_SERVICE_UUID,
            [
                self._characteristic(
                    BATTERY_LEVEL_UUID,
                    P.READ | P.NOTIFY,
                    readable,
                    CharacteristicValue(read=lambda _: bytes([self.battery_level])),
                )
            ],
        )
        test_service = Service(
            TEST_SERVICE_UUID,
            [
                self._characteristic(
                    LONG_READ_UUID, P.READ, readable, long_read_value()
                ),
                self._characteristic(
                    ECHO_UUID,
                    P.READ | P.WRITE,
                    readable | writeable,
                    CharacteristicValue(
                        read=lambda _: self.echo_value, write=self.on_echo_write
                    ),
                ),
                self._characteristic(INDICATE_UUID, P.INDICATE, 0, b""),
                self._characteristic(NOTIFY_UUID, P.NOTIFY, 0, b""),
                self._characteristic(
                    WRITE_ONLY_UUID,
                    P.WRITE,
                    writeable,
                    CharacteristicValue(
                        read=self.refuse_read, write=self.on_write_only_write
                    ),
                ),
                self._characteristic(
                    READ_ONLY_UUID,
                    P.READ,
                    readable,
                    CharacteristicValue(
                        read=lambda _: READ_ONLY_VALUE, write=self.refuse_write
                    ),
                ),
            ],
        )
        self.device.add_services([heart_rate, battery, test_service])

    def handles(self) -> dict[str, int]:
        """Value handle of each characteristic, by its JSON name."""
        return {
            CHARACTERISTIC_NAMES[uuid]: characteristic.handle
            for uuid, characteristic in self.characteristics.items()
        }

    # ---- attribute callbacks ---------------------------------------------
    def on_echo_write(self, connection, value: bytes) -> None:
        if len(value) > MAX_ECHO_LENGTH:
            raise att.ATT_Error(att.ErrorCode.INVALID_ATTRIBUTE_LENGTH)
        self.echo_value = bytes(value)
        emit(
            "written",
            characteristic="echo",
            uuid=ECHO_UUID,
            length=len(value),
            hex=value.hex(),
        )

    def on_write_only_write(self, connection, value: bytes) -> None:
        self.write_only_value = bytes(value)
        emit(
            "written",
            characteristic="write-only",
            uuid=WRITE_ONLY_UUID,
            length=len(value),
            hex=value.hex(),
        )

    @staticmethod
    def refuse_read(connection) -> bytes:
        # Bumble's server does not enforce the READABLE permission itself.
        raise att.ATT_Error(att.ErrorCode.READ_NOT_PERMITTED)

    @staticmethod
    def refuse_write(connection, value: bytes) -> None:
        # Bumble's server does not enforce the WRITEABLE permission itself.
        raise att.ATT_Error(att.ErrorCode.WRITE_NOT_PERMITTED)

    # ---- connection events -------------------------------------------------
    def on_connection(self, connection) -> None:
        emit(
            "connected",
            peer=address_text(connection.peer_address),
            handle=connection.handle,
            role="peripheral",
        )
        connection.on(
            "disconnection", lambda reason: self.on_disconnection(connection, reason)
        )
        connection.on(
            "connection_att_mtu_update",
            lambda: emit("mtu", mtu=connection.att_mtu),
        )

    def on_disconnection(self, connection, reason: int) -> None:
        emit("disconnected", handle=connection.handle, reason=int(reason))
        if not self.finished.done():
            self.finished.set_result(0)

    def on_subscription(
        self, connection, characteristic, notify_enabled: bool, indicate_enabled: bool
    ) -> None:
        uuid = characteristic.uuid.to_hex_str("-")
        name = CHARACTERISTIC_NAMES.get(uuid, uuid)
        emit(
            "subscribed",
            characteristic=name,
            uuid=uuid,
            notify=bool(notify_enabled),
            indicate=bool(indicate_enabled),
        )
        job = None
        if uuid == NOTIFY_UUID and notify_enabled:
            job = self.send_notifications(
                connection, characteristic, self.arguments.notify_count, name
            )
        elif uuid == INDICATE_UUID and indicate_enabled:
            job = self.send_indications(
                connection, characteristic, self.arguments.indicate_count, name
            )
        elif uuid == HEART_RATE_MEASUREMENT_UUID and notify_enabled:
            job = self.send_heart_rate(connection, characteristic)
        elif uuid == BATTERY_LEVEL_UUID and notify_enabled:
            job = self.send_battery(connection, characteristic)
        if job is not None:
            task = asyncio.ensure_future(self.guard(job, name))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def guard(self, job, name: str) -> None:
        try:
            await job
        except Exception as error:  # reported, never fatal for the peripheral
            emit("error", during=f"sending to {name}", message=repr(error))

    async def send_notifications(self, connection, characteristic, count, name):
        for index in range(count):
            await self.device.notify_subscriber(
                connection, characteristic, sequence_payload(index, count)
            )
        emit("sent", characteristic=name, kind="notify", count=count)

    async def send_indications(self, connection, characteristic, count, name):
        for index in range(count):
            # Returns once the client's Handle Value Confirmation has arrived.
            await self.device.indicate_subscriber(
                connection, characteristic, sequence_payload(index, count)
            )
        emit("sent", characteristic=name, kind="indicate", count=count)

    async def send_heart_rate(self, connection, characteristic):
        count = self.arguments.heart_rate_count
        for index in range(count):
            # Flags 0x00: 8-bit heart rate, no contact/energy/RR fields.
            await self.device.notify_subscriber(
                connection, characteristic, bytes([0x00, (60 + index) % 256])
            )
        emit(
            "sent", characteristic="heart-rate-measurement", kind="notify", count=count
        )

    async def send_battery(self, connection, characteristic):
        await self.device.notify_subscriber(
            connection, characteristic, bytes([self.battery_level])
        )
        emit("sent", characteristic="battery-level", kind="notify", count=1)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Bumble test GATT peripheral.")
    parser.add_argument(
        "transport",
        help="HCI transport moniker, or a bare TCP port meaning "
        "tcp-client:127.0.0.1:PORT",
    )
    parser.add_argument("--name", default="Bluetide Peer", help="advertised name")
    parser.add_argument(
        "--address",
        default="C6:C5:C4:C3:C2:C1",
        help="random static address (the top two bits must be 11)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds to run before giving up if nobody disconnects (exit 3)",
    )
    parser.add_argument(
        "--notify-count", type=int, default=5, help="notifications per subscription"
    )
    parser.add_argument(
        "--indicate-count", type=int, default=3, help="indications per subscription"
    )
    parser.add_argument(
        "--heart-rate-count",
        type=int,
        default=3,
        help="heart rate measurements per subscription",
    )
    parser.add_argument("--battery-level", type=int, default=87)
    parser.add_argument(
        "--public",
        action="store_true",
        help="advertise with the controller's public address instead of --address",
    )
    parser.add_argument(
        "--advertising-interval",
        type=float,
        default=50.0,
        help="advertising interval in milliseconds",
    )
    add_common_options(parser)
    return parser.parse_args(argv)




async def run(arguments: argparse.Namespace) -> int:
    advertising = bytes(AdvertisingData([
        (AdvertisingData.FLAGS, bytes([0x06])),  # LE General Discoverable, BR/EDR not supported
        (AdvertisingData.COMPLETE_LOCAL_NAME, arguments.name.encode("utf-8")),
    ]))
    return await serve_peripheral(
        arguments, advertising, lambda device: TestPeripheral(arguments, device), interval_ms=arguments.advertising_interval,
        public=arguments.public, ready_fields=lambda peripheral: {"handles": peripheral.handles()})


def main() -> None:
    run_main(parse_arguments, run, report_crash_as_event)


if __name__ == "__main__":
    main()
