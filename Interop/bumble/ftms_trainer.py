#!/usr/bin/env python3
"""Bumble FTMS indoor-bike trainer: an interop peer for `bluetide ride`.

It connects to an HCI controller (normally one of `controllers.py`), advertises the Fitness
Machine service (0x1826, with its service data: machine available, indoor bike) and serves:

* Fitness Machine Feature (0x2ACC, read): cadence, total distance, resistance level, power;
  targets: resistance, power, indoor bike simulation.
* Indoor Bike Data (0x2AD2, notify) once a second: speed, cadence, total distance, power.
* Training Status (0x2AD3, read/notify), Supported Resistance Level Range (0x2AD6) and
  Supported Power Range (0x2AD8: 0-1500 W) (read).
* Fitness Machine Control Point (0x2AD9, write/indicate) as real trainers do it: every write is
  answered by an indication `80 op result`; before Request Control (`00`) every other request
  is refused with 0x05 (control not permitted); Reset releases control; a target outside the
  supported range is refused with 0x03; unknown opcodes with 0x02.
* Fitness Machine Status (0x2ADA, notify): reset, target power / resistance / simulation
  changed, started.

ERG (Set Target Power) changes the power it reports (first-order response, 1 s time
constant); simulation parameters drive speed through rider physics at the rider's own power.

Every event is one JSON object per line on stdout: ready, connected, subscribed, request (the
decoded write and the result code sent back), state (once a second: power_w, cadence_rpm,
speed_kmh, mode, control), disconnected, stopped, timeout, error. The process runs until a
signal, end of stdin (--exit-on-stdin-eof, exit 4) or --timeout (exit 3).
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import time

from bumble.core import UUID, AdvertisingData
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble_common import address_text, emit_event, run_main
from bumble_device import report_crash_as_event
from trainer_common import TrainerPhysics, run_trainer, trainer_argument_parser

emit = emit_event

FITNESS_MACHINE = UUID.from_16_bits(0x1826)
FEATURE = UUID.from_16_bits(0x2ACC)
INDOOR_BIKE_DATA = UUID.from_16_bits(0x2AD2)
TRAINING_STATUS = UUID.from_16_bits(0x2AD3)
RESISTANCE_RANGE = UUID.from_16_bits(0x2AD6)
POWER_RANGE = UUID.from_16_bits(0x2AD8)
CONTROL_POINT = UUID.from_16_bits(0x2AD9)
STATUS = UUID.from_16_bits(0x2ADA)

SUCCESS, NOT_SUPPORTED, INVALID_PARAMETER, FAILED, NOT_PERMITTED = 1, 2, 3, 4, 5
MIN_POWER, MAX_POWER = 0, 1500
MAX_RESISTANCE_TENTHS = 200

# Machine features: cadence (1), total distance (2), resistance level (7), power (14).
MACHINE_FEATURES = (1 << 1) | (1 << 2) | (1 << 7) | (1 << 14)
# Target settings: resistance (2), power (3), indoor bike simulation (13).
TARGET_FEATURES = (1 << 2) | (1 << 3) | (1 << 13)


class FTMSTrainer:
    """The Fitness Machine service, the control point's rules and the trainer model."""

    def __init__(self, arguments: argparse.Namespace, device) -> None:
        self.arguments = arguments
        self.device = device
        self.finished = asyncio.get_running_loop().create_future()
        self.physics = TrainerPhysics(arguments.power, arguments.cadence)
        self.controller = None  # the connection that holds control
        self.connection = None
        self.training_status = 0x01  # idle
        readable = Characteristic.Permissions.READABLE
        self.bike_data = Characteristic(INDOOR_BIKE_DATA, Characteristic.Properties.NOTIFY, readable, b"")
        self.status = Characteristic(STATUS, Characteristic.Properties.NOTIFY, readable, b"")
        self.training = Characteristic(
            TRAINING_STATUS, Characteristic.Properties.READ | Characteristic.Properties.NOTIFY, readable,
            CharacteristicValue(read=lambda connection: bytes([0x00, self.training_status])))
        self.control_point = Characteristic(
            CONTROL_POINT, Characteristic.Properties.WRITE | Characteristic.Properties.INDICATE,
            Characteristic.Permissions.WRITEABLE, CharacteristicValue(write=self.on_write))
        device.add_service(Service(FITNESS_MACHINE, [
            Characteristic(FEATURE, Characteristic.Properties.READ, readable, struct.pack("<II", MACHINE_FEATURES, TARGET_FEATURES)),
            self.bike_data,
            self.training,
            Characteristic(RESISTANCE_RANGE, Characteristic.Properties.READ, readable, struct.pack("<hhH", 0, MAX_RESISTANCE_TENTHS, 1)),
            Characteristic(POWER_RANGE, Characteristic.Properties.READ, readable, struct.pack("<hhH", MIN_POWER, MAX_POWER, 1)),
            self.control_point,
            self.status,
        ]))
        device.on("connection", self.on_connection)
        for characteristic, name in ((self.bike_data, "indoor-bike-data"), (self.control_point, "control-point"), (self.status, "status")):
            characteristic.on("subscription", lambda connection, notify, indicate, name=name: emit(
                "subscribed", characteristic=name, notify=notify, indicate=indicate))
        self.outgoing: asyncio.Queue = asyncio.Queue()
        loop = asyncio.get_running_loop()
        self.tasks = [loop.create_task(self.tick_loop()), loop.create_task(self.send_loop())]

    def stop(self) -> None:
        for task in self.tasks:
            task.cancel()

    def on_connection(self, connection) -> None:
        self.connection = connection
        emit("connected", peer=address_text(connection.peer_address))
        connection.on("disconnection", lambda reason: self.on_disconnection(connection, reason))

    def on_disconnection(self, connection, reason: int) -> None:
        if self.controller is connection:
            self.controller = None
        if self.connection is connection:
            self.connection = None
        emit("disconnected", reason=reason)

    # ---- control point -----------------------------------------------------
    def on_write(self, connection, value: bytes) -> None:
        value = bytes(value)
        opcode = value[0] if value else 0xFF
        result, name, fields, statuses = self.handle(connection, value)
        emit("request", opcode=opcode, name=name, result=result, hex=value.hex(), **fields)
        # The indication goes after the write response: queued, sent by the sender task.
        self.outgoing.put_nowait((connection, self.control_point, bytes([0x80, opcode, result]), True))
        for status in statuses:
            self.outgoing.put_nowait((connection, self.status, status, False))

    def handle(self, connection, value: bytes):
        """(result code, request name, fields for the event, status notifications)."""
        if not value:
            return INVALID_PARAMETER, "empty", {}, []
        opcode, parameter = value[0], value[1:]
        p = self.physics
        if opcode == 0x00:
            if self.controller is not None and self.controller is not connection:
                return NOT_PERMITTED, "request control", {}, []
            self.controller = connection
            return SUCCESS, "request control", {}, []
        names = {0x01: "reset", 0x04: "set target resistance level", 0x05: "set target power", 0x07: "start or resume",
                 0x08: "stop or pause", 0x11: "set indoor bike simulation"}
        if opcode not in names:
            return NOT_SUPPORTED, f"opcode 0x{opcode:02x}", {}, []
        name = names[opcode]
        if self.controller is not connection:
            return NOT_PERMITTED, name, {}, []
        if opcode == 0x01:
            p.mode, self.controller, self.training_status = "free", None, 0x01
            return SUCCESS, name, {}, [bytes([0x01])]
        if opcode == 0x04:
            if len(parameter) < 1:
                return INVALID_PARAMETER, name, {}, []
            tenths = parameter[0] if len(parameter) == 1 else struct.unpack_from("<h", parameter)[0]
            if not 0 <= tenths <= MAX_RESISTANCE_TENTHS:
                return INVALID_PARAMETER, name, {"resistance_tenths": tenths}, []
            p.mode, p.resistance_fraction = "resistance", tenths / MAX_RESISTANCE_TENTHS
            return SUCCESS, name, {"resistance_tenths": tenths}, [bytes([0x07, tenths & 0xFF])]
        if opcode == 0x05:
            if len(parameter) < 2:
                return INVALID_PARAMETER, name, {}, []
            watts = struct.unpack_from("<h", parameter)[0]
            if not MIN_POWER <= watts <= MAX_POWER:
                return INVALID_PARAMETER, name, {"target_power_w": watts}, []
            p.mode, p.target_power_w, self.training_status = "erg", float(watts), 0x0C
            return SUCCESS, name, {"target_power_w": watts}, [bytes([0x08]) + struct.pack("<h", watts)]
        if opcode == 0x07:
            return SUCCESS, name, {}, [bytes([0x04])]
        if opcode == 0x08:
            if len(parameter) < 1 or parameter[0] not in (1, 2):
                return INVALID_PARAMETER, name, {}, []
            return SUCCESS, name, {"control": parameter[0]}, [bytes([0x02, parameter[0]])]
        # 0x11: wind (0.001 m/s), grade (0.01 %), Crr (0.0001), Cw (0.01 kg/m).
        if len(parameter) < 6:
            return INVALID_PARAMETER, name, {}, []
        wind, grade, crr, cw = struct.unpack_from("<hhBB", parameter)
        p.wind_speed_m_s, p.grade_percent = wind / 1000.0, grade / 100.0
        p.rolling_resistance, p.wind_resistance_kg_per_m, p.mode = crr / 10000.0, cw / 100.0, "simulation"
        self.training_status = 0x0D
        return SUCCESS, name, {"grade_percent": grade / 100.0}, [bytes([0x12]) + bytes(parameter[:6])]

    async def send_loop(self) -> None:
        while True:
            connection, characteristic, value, indicate = await self.outgoing.get()
            try:
                if indicate:
                    await self.device.indicate_subscriber(connection, characteristic, value)
                else:
                    await self.device.notify_subscriber(connection, characteristic, value)
            except Exception as error:  # not subscribed, or the link went down
                emit("send-failed", characteristic=str(characteristic.uuid), message=repr(error))

    # ---- data --------------------------------------------------------------
    def indoor_bike_data(self) -> bytes:
        p = self.physics
        flags = (1 << 2) | (1 << 4) | (1 << 6)  # speed (More Data clear), cadence, total distance, power
        speed = min(int(round(p.speed_m_s * 360)), 0xFFFF)
        distance = min(int(p.distance_m), 0xFFFFFF)
        return struct.pack("<HHH", flags, speed, int(round(p.cadence_rpm * 2))) + distance.to_bytes(3, "little") + struct.pack(
            "<h", int(round(p.power_w)))

    async def tick_loop(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            self.physics.advance(now - last)
            last = now
            if self.connection is not None:
                self.outgoing.put_nowait((self.connection, self.bike_data, self.indoor_bike_data(), False))
            p = self.physics
            emit("state", power_w=round(p.power_w, 1), cadence_rpm=p.cadence_rpm, speed_kmh=round(p.speed_m_s * 3.6, 2),
                 mode=p.mode, control=self.controller is not None)


parse_arguments = trainer_argument_parser("Bumble FTMS indoor-bike trainer (control handshake, indications, ERG).", "Bumble FTMS", "C6:C5:C4:C3:F7:01")


async def run(arguments: argparse.Namespace) -> int:
    advertising = bytes(AdvertisingData([
        (AdvertisingData.FLAGS, bytes([0x06])),
        (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, bytes(FITNESS_MACHINE)),
        # Service data: flags (machine available), machine type (indoor bike, bit 5).
        (AdvertisingData.SERVICE_DATA_16_BIT_UUID, bytes(FITNESS_MACHINE) + bytes([0x01]) + struct.pack("<H", 1 << 5)),
        # The name here too (it fits): Bumble's linked controllers answer scans with the
        # advertising data.
        (AdvertisingData.COMPLETE_LOCAL_NAME, arguments.name.encode("utf-8")[:14]),
    ]))
    return await run_trainer(arguments, advertising, lambda device: FTMSTrainer(arguments, device))


def main() -> None:
    run_main(parse_arguments, run, report_crash_as_event)


if __name__ == "__main__":
    main()
