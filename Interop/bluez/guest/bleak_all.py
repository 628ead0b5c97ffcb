"""Bleak (the guest's BlueZ over D-Bus) against emulated peripherals: for each device, connect,
read every readable characteristic and every descriptor, subscribe to every characteristic that
notifies or indicates, then disconnect; all of it `--rounds` times.

  python3 bleak_all.py --device C1:B1:7E:00:00:01=heart-rate --device ... --rounds 3

Prints one JSON object per device and round, then {"event": "summary", ...}; exits 0 only when
every connection, read and subscription succeeded.
"""
import argparse
import asyncio
import json
import time

from bleak import BleakClient, BleakScanner

NOTIFY_WAIT_S = 1.5


def emit(message: dict) -> None:
    print(json.dumps(message), flush=True)


async def visit(address: str, name: str, round_number: int) -> dict:
    result = {"event": "device", "round": round_number, "name": name, "address": address,
              "connected": False, "reads": 0, "read_errors": [], "descriptor_reads": 0,
              "subscriptions": 0, "subscribe_errors": [], "notifications": 0, "error": None}
    started = time.monotonic()
    try:
        device = await BleakScanner.find_device_by_address(address, timeout=20)
        if device is None:
            result["error"] = "not found by scanning within 20 s"
            return result
        async with BleakClient(device, timeout=30) as client:
            result["connected"] = True
            received = {"count": 0}

            def on_value(_characteristic, _data: bytearray) -> None:
                received["count"] += 1

            subscribed = []
            for service in client.services:
                for characteristic in service.characteristics:
                    label = f"{characteristic.uuid} (handle {characteristic.handle})"
                    if "read" in characteristic.properties:
                        try:
                            await client.read_gatt_char(characteristic)
                            result["reads"] += 1
                        except Exception as error:  # noqa: BLE001 - every failure is reported
                            result["read_errors"].append(f"{label}: {error}")
                    for descriptor in characteristic.descriptors:
                        try:
                            await client.read_gatt_descriptor(descriptor.handle)
                            result["descriptor_reads"] += 1
                        except Exception as error:  # noqa: BLE001
                            result["read_errors"].append(f"descriptor {descriptor.uuid} of {label}: {error}")
                    if {"notify", "indicate"} & set(characteristic.properties):
                        try:
                            await client.start_notify(characteristic, on_value)
                            subscribed.append(characteristic)
                            result["subscriptions"] += 1
                        except Exception as error:  # noqa: BLE001
                            result["subscribe_errors"].append(f"{label}: {error}")
            await asyncio.sleep(NOTIFY_WAIT_S)
            for characteristic in subscribed:
                try:
                    await client.stop_notify(characteristic)
                except Exception as error:  # noqa: BLE001
                    result["subscribe_errors"].append(f"stop {characteristic.uuid}: {error}")
            result["notifications"] = received["count"]
    except Exception as error:  # noqa: BLE001
        result["error"] = f"{type(error).__name__}: {error}"
    result["seconds"] = round(time.monotonic() - started, 2)
    return result


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", action="append", required=True, help="ADDRESS=NAME")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    devices = [entry.split("=", 1) for entry in args.device]
    failures = 0
    connections = 0
    for round_number in range(1, args.rounds + 1):
        for address, name in devices:
            result = await visit(address, name, round_number)
            ok = result["connected"] and not result["error"] and not result["read_errors"] and not result["subscribe_errors"]
            connections += result["connected"]
            failures += not ok
            result["ok"] = ok
            emit(result)
    emit({"event": "summary", "attempts": args.rounds * len(devices), "connections": connections, "failures": failures})
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
