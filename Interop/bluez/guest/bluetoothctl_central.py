"""bluetoothctl (BlueZ's own client) as a user drives it, against an emulated heart-rate strap:
power on, scan until the strap shows up, connect, read Body Sensor Location, write 0x01 (reset
energy expended) to the Heart Rate Control Point, write 0x02 there too (refused by the strap with
ATT error 0x80: bluetoothctl says "Failed to write", btmon shows the ATT error code), subscribe to Heart Rate Measurement until a value arrives, disconnect.

  python3 bluetoothctl_central.py --address C1:B1:7E:00:00:01

Prints one JSON object per step ({"step": ..., "ok": ..., "detail": ...}); exits 0 when all passed.
bluetoothctl runs on a pseudo-terminal through pexpect (python3-pexpect), as if typed.
"""
import argparse
import json
import re
import sys
import time

from bluetoothctl_session import VALUE_LINE, Session
from btmon_trace import Monitor

BODY_SENSOR_LOCATION = "00002a38-0000-1000-8000-00805f9b34fb"
CONTROL_POINT = "00002a39-0000-1000-8000-00805f9b34fb"
MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
# btmon: "ATT: Error Response (0x01) ... Write Request (0x12) ... Error: Reserved (0x80)"
ATT_ERROR_0x80 = re.compile(r"ATT: Error Response[^\n]*\n[^\n]*Write Request \(0x12\)[^\n]*\n[^\n]*\n\s*Error:[^\n]*\(0x80\)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--timeout", type=float, default=30, help="seconds each step may take")
    args = parser.parse_args()
    address = args.address.upper()
    monitor = Monitor("/tmp/btmon.txt")
    session = Session(args.timeout)
    step = session.step

    step("start", None, [r"Agent registered"])
    if not step("power on", "power on", [r"Changing power on succeeded"], [r"Failed to set power on", r"No default controller"]):
        return 1
    if not step("scan", "scan on", [rf"Device {address}"]):
        return 1
    step("scan off", "scan off", [r"Discovery stopped"])
    if not step("connect", f"connect {address}", [r"Connection successful"], [r"Failed to connect"]):
        return 1
    step("services resolved", f"info {address}", [r"ServicesResolved: yes"], [r"Connected: no"])
    step("gatt menu", "menu gatt", [r"select-attribute"])
    session.select(BODY_SENSOR_LOCATION)
    step("read body sensor location", "read", [VALUE_LINE], [r"Failed to read"])
    session.select(CONTROL_POINT)
    # bluetoothctl prints nothing when a write succeeds, only "Failed to write: ..." when it fails.
    step("write 0x01 (accepted)", "write 0x01", [], [r"Failed to write[^\n]*"], timeout=3, absent_is_ok=True)
    # bluetoothctl names only the D-Bus error; the ATT error code itself is read from btmon's trace.
    if step("write 0x02 (refused)", "write 0x02", [r"Failed to write[^\n]*"]):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not ATT_ERROR_0x80.search(monitor.text()):
            time.sleep(0.2)
        match = ATT_ERROR_0x80.search(monitor.text())
        session.failures += match is None
        print(json.dumps({"step": "ATT error 0x80 on the air (btmon)", "ok": match is not None,
                          "detail": match.group(0) if match else monitor.text()[-500:]}), flush=True)
    session.select(MEASUREMENT)
    step("notify on", "notify on", [r"Notify started"], [r"Failed to start notify[^\n]*"])
    step("notification", None, [VALUE_LINE])
    step("notify off", "notify off", [r"Notify stopped"], [r"Failed to stop notify[^\n]*"])
    step("main menu", "back", [r"Return to main menu|# "])
    step("disconnect", f"disconnect {address}", [r"Successful disconnected"], [r"Failed to disconnect[^\n]*"])
    session.quit()
    monitor.stop()
    print(json.dumps({"step": "summary", "ok": session.failures == 0, "failures": session.failures}), flush=True)
    return 0 if session.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
