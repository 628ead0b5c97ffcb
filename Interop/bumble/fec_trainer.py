#!/usr/bin/env python3
"""Bumble Tacx FE-C-over-BLE trainer: an interop peer for `bluetide ride` and its bridge.

It connects to an HCI controller (normally one of `controllers.py`), advertises the Tacx FE-C
service 6E40FEC1-B5A3-F393-E0A9-E50E24DCCA9E with its name, and serves:

* 6E40FEC2 (Notify): one 13-byte ANT message per value (A4 09 4E 05, 8-byte page, checksum),
  at 4 Hz: page 16 (general FE data: elapsed time, distance, speed, state) and page 25
  (trainer data: event count, cadence, accumulated and instantaneous power) in turn, or a page
  a page-70 request asked for (16, 25, 54 capabilities, 55 user data, 71 command status).
* 6E40FEC3 (Write, Write Without Response): commands as ANT messages, checksum by XOR or sum.
  Page 48 (basic resistance), 49 (target power: ERG), 50 (wind), 51 (track resistance: grade
  and Crr) and 55 (user data) are obeyed and confirmed in page 71; other pages are answered
  "not supported" there; frames that do not decode are counted and ignored, as a trainer does.

ERG changes the power it reports (first-order response, 1 s time constant); simulation drives
speed through rider physics at the rider's own power (--power).

Every event is one JSON object per line on stdout: ready, connected, subscribed, command
(page, name, values), ignored (a frame that did not decode), request (page 70), state (once a
second: power_w, cadence_rpm, speed_kmh, mode), disconnected, stopped, timeout, error. The
process runs until a signal, end of stdin (--exit-on-stdin-eof, exit 4) or --timeout (exit 3).
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

FEC_SERVICE_UUID = "6E40FEC1-B5A3-F393-E0A9-E50E24DCCA9E"
FEC_NOTIFY_UUID = "6E40FEC2-B5A3-F393-E0A9-E50E24DCCA9E"
FEC_WRITE_UUID = "6E40FEC3-B5A3-F393-E0A9-E50E24DCCA9E"

emit = emit_event

# Page 71 command status values.
STATUS_PASS, STATUS_FAIL, STATUS_NOT_SUPPORTED = 0, 1, 2
FE_STATE_IN_USE = 3
EQUIPMENT_TRAINER = 25


def frame(page: bytes) -> bytes:
    """An ANT broadcast-data message carrying `page` (8 bytes), XOR checksum."""
    body = bytes([0xA4, 0x09, 0x4E, 0x05]) + page
    checksum = 0
    for byte in body:
        checksum ^= byte
    return body + bytes([checksum])


def decode_frame(value: bytes) -> bytes | None:
    """The 8-byte page of a written ANT message, or None when it is not one (either checksum
    convention is accepted: XOR of every byte, or the sum of the bytes after the sync byte)."""
    if len(value) < 13 or value[0] != 0xA4 or value[1] != 0x09 or value[2] not in (0x4E, 0x4F):
        return None
    xor = 0
    for byte in value[:12]:
        xor ^= byte
    total = sum(value[1:12]) & 0xFF
    if value[12] not in (xor, total):
        return None
    return bytes(value[4:12])


class FECTrainer:
    """The FE-C GATT service, the trainer model and the event output."""

    def __init__(self, arguments: argparse.Namespace, device) -> None:
        self.arguments = arguments
        self.device = device
        self.finished = asyncio.get_running_loop().create_future()
        self.physics = TrainerPhysics(arguments.power, arguments.cadence)
        self.event_count = 0
        self.accumulated_power = 0
        self.slot = 0
        self.queued: list[int] = []
        self.last_command = 0xFF
        self.sequence = 0xFF
        self.command_status = 0xFF
        self.command_data = b"\xff\xff\xff\xff"
        self.user_data = bytes([55, 0x6C, 0x20, 0xFF, 0x0F, 0x0A, 0x43, 0x00])  # 83 kg rider, 8 kg bike, 67 cm wheel
        self.connection = None
        self.notify = Characteristic(FEC_NOTIFY_UUID, Characteristic.Properties.NOTIFY, Characteristic.Permissions.READABLE, b"")
        self.write = Characteristic(
            FEC_WRITE_UUID,
            Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
            Characteristic.Permissions.WRITEABLE,
            CharacteristicValue(write=self.on_write),
        )
        device.add_service(Service(FEC_SERVICE_UUID, [self.notify, self.write]))
        device.on("connection", self.on_connection)
        self.notify.on("subscription", lambda connection, notify, indicate: emit("subscribed", notify=notify))
        self.ticker = asyncio.get_running_loop().create_task(self.tick_loop())

    def stop(self) -> None:
        self.ticker.cancel()

    def on_connection(self, connection) -> None:
        self.connection = connection
        emit("connected", peer=address_text(connection.peer_address))
        connection.on("disconnection", lambda reason: self.on_disconnection(connection, reason))

    def on_disconnection(self, connection, reason: int) -> None:
        if self.connection is connection:
            self.connection = None
        emit("disconnected", reason=reason)

    # ---- commands --------------------------------------------------------
    def on_write(self, connection, value: bytes) -> None:
        page = decode_frame(bytes(value))
        if page is None:
            emit("ignored", hex=bytes(value).hex())
            return
        number = page[0]
        if number == 70:
            requested, times = page[6], page[5] & 0x7F
            emit("request", page=requested, times=max(times, 1))
            if requested in (16, 25, 54, 55, 71):
                self.queued += [requested] * min(max(times, 1), 4)
            return
        status = STATUS_PASS
        p = self.physics
        if number == 48:
            percent = page[7] * 0.5
            p.mode, p.resistance_fraction = "resistance", min(percent, 100.0) / 100.0
            emit("command", page=48, name="basic resistance", resistance_percent=percent)
        elif number == 49:
            watts = struct.unpack_from("<H", page, 6)[0] / 4.0
            p.mode, p.target_power_w = "erg", min(watts, 4000.0)
            emit("command", page=49, name="target power", target_power_w=watts)
        elif number == 50:
            cw = page[5] * 0.01 if page[5] != 0xFF else 0.51
            wind_kmh = page[6] - 127 if page[6] != 0xFF else 0
            p.wind_resistance_kg_per_m, p.wind_speed_m_s, p.mode = cw, wind_kmh / 3.6, "simulation"
            emit("command", page=50, name="wind resistance", wind_resistance=cw, wind_speed_kmh=wind_kmh)
        elif number == 51:
            raw_grade = struct.unpack_from("<H", page, 5)[0]
            grade = raw_grade * 0.01 - 200.0 if raw_grade != 0xFFFF else 0.0
            crr = page[7] * 5e-5 if page[7] != 0xFF else 0.004
            p.grade_percent, p.rolling_resistance, p.mode = grade, crr, "simulation"
            emit("command", page=51, name="track resistance", grade_percent=round(grade, 2), rolling_resistance=crr)
        elif number == 55:
            self.user_data = page
            weight = struct.unpack_from("<H", page, 1)[0] * 0.01
            emit("command", page=55, name="user configuration", rider_kg=weight)
        else:
            status = STATUS_NOT_SUPPORTED
            emit("command", page=number, name="unsupported")
        self.sequence = 0 if self.sequence == 0xFF else (self.sequence + 1) & 0xFF
        self.last_command, self.command_status, self.command_data = number, status, page[4:8]

    # ---- pages -----------------------------------------------------------
    def page(self, number: int) -> bytes:
        p = self.physics
        if number == 16:
            speed = min(int(round(p.speed_m_s * 1000)), 0xFFFE)
            return bytes([16, EQUIPMENT_TRAINER, int(p.elapsed_s * 4) & 0xFF, int(p.distance_m) & 0xFF]) + struct.pack(
                "<H", speed) + bytes([0xFF, FE_STATE_IN_USE << 4])
        if number == 25:
            watts = min(int(round(p.power_w)), 0xFFE)
            self.event_count = (self.event_count + 1) & 0xFF
            self.accumulated_power = (self.accumulated_power + watts) & 0xFFFF
            return bytes([25, self.event_count, min(int(round(p.cadence_rpm)), 254)]) + struct.pack(
                "<H", self.accumulated_power) + bytes([watts & 0xFF, (watts >> 8) & 0x0F, FE_STATE_IN_USE << 4])
        if number == 54:
            return bytes([54, 0xFF, 0xFF, 0xFF, 0xFF, 0xD0, 0x07, 0x07])  # 2000 N; basic, power, simulation
        if number == 55:
            return self.user_data
        return bytes([71, self.last_command, self.sequence, self.command_status]) + bytes(self.command_data).ljust(4, b"\xff")

    async def tick_loop(self) -> None:
        last = time.monotonic()
        next_state = last + 1.0
        while True:
            await asyncio.sleep(0.25)
            now = time.monotonic()
            self.physics.advance(now - last)
            last = now
            if self.queued:
                number = self.queued.pop(0)
            else:
                number = 16 if self.slot % 2 == 0 else 25
                self.slot += 1
            value = frame(self.page(number))
            connection = self.connection
            if connection is not None:
                try:
                    await self.device.notify_subscriber(connection, self.notify, value)
                except Exception as error:  # the link went down meanwhile
                    emit("notify-failed", message=repr(error))
            if now >= next_state:
                next_state += 1.0
                p = self.physics
                emit("state", power_w=round(p.power_w, 1), cadence_rpm=p.cadence_rpm, speed_kmh=round(p.speed_m_s * 3.6, 2), mode=p.mode)


parse_arguments = trainer_argument_parser("Bumble Tacx FE-C-over-BLE trainer (ERG, simulation, page 71 confirmations).", "Bumble Tacx", "C6:C5:C4:C3:FE:C1")


async def run(arguments: argparse.Namespace) -> int:
    # The 128-bit UUID (18 bytes) and a name of up to 11 bytes fill the 31 bytes (no room for
    # flags); Bumble's linked controllers answer scans with the advertising data, so the name
    # goes here.
    advertising = bytes(AdvertisingData([
        (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, bytes(UUID(FEC_SERVICE_UUID))),
        (AdvertisingData.COMPLETE_LOCAL_NAME, arguments.name.encode("utf-8")[:11]),
    ]))
    return await run_trainer(arguments, advertising, lambda device: FECTrainer(arguments, device))


def main() -> None:
    run_main(parse_arguments, run, report_crash_as_event)


if __name__ == "__main__":
    main()
