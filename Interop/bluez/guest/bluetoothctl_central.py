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
import subprocess
import sys
import time

import pexpect

BODY_SENSOR_LOCATION = "00002a38-0000-1000-8000-00805f9b34fb"
CONTROL_POINT = "00002a39-0000-1000-8000-00805f9b34fb"
MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
# btmon: "ATT: Error Response (0x01) ... Write Request (0x12) ... Error: Reserved (0x80)"
ATT_ERROR_0x80 = re.compile(r"ATT: Error Response[^\n]*\n[^\n]*Write Request \(0x12\)[^\n]*\n[^\n]*\n\s*Error:[^\n]*\(0x80\)")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x01\x02\r]")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--timeout", type=float, default=30, help="seconds each step may take")
    args = parser.parse_args()
    address = args.address.upper()
    monitor_log = open("/tmp/btmon.txt", "w+")
    monitor = subprocess.Popen(["stdbuf", "-oL", "btmon", "--no-pager"], stdout=monitor_log, stderr=subprocess.STDOUT)

    def monitor_text() -> str:
        with open("/tmp/btmon.txt", errors="replace") as handle:
            return handle.read()

    child = pexpect.spawn("bluetoothctl", encoding="utf-8", timeout=args.timeout, dimensions=(50, 400))
    session = {"text": "", "mark": 0}
    failures = 0

    def wait_for(patterns: list[str], timeout: float) -> tuple[int, str]:
        """Index of the first pattern found in the output since the mark (-1 on timeout or exit),
        and that output; the mark moves past the match."""
        deadline = time.monotonic() + timeout
        while True:
            window = session["text"][session["mark"]:]
            found = [(match.end(), index) for index, pattern in enumerate(patterns)
                     if (match := re.search(pattern, window))]
            if found:
                end, index = min(found)
                session["mark"] += end
                return index, window[:end]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return -1, window
            try:
                session["text"] += ANSI.sub("", child.read_nonblocking(4096, timeout=min(remaining, 0.5)))
            except pexpect.TIMEOUT:
                pass
            except pexpect.EOF:
                return -1, window + " [bluetoothctl exited]"

    def step(name: str, command: str | None, expect: list[str], bad: list[str] = (),
             timeout: float | None = None, absent_is_ok: bool = False) -> bool:
        """Sends `command` and waits for one of `expect` (passed) or `bad` (failed). With
        `absent_is_ok`, seeing none of `bad` within `timeout` passes (a silent success)."""
        nonlocal failures
        started = time.monotonic()
        session["mark"] = len(session["text"])
        if command is not None:
            child.sendline(command)
        index, seen = wait_for(list(expect) + list(bad), timeout or args.timeout)
        if index < 0:
            ok = absent_is_ok
            detail = seen if ok else f"no answer within {timeout or args.timeout:.0f} s; output: {seen[-400:]}"
        else:
            ok = index < len(expect)
            detail = seen
        failures += not ok
        print(json.dumps({"step": name, "ok": ok, "seconds": round(time.monotonic() - started, 2),
                          "detail": detail.strip()[-500:]}), flush=True)
        return ok

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
    value_line = r"Value:[^\n]*\n(?:[^\n]*# )?\s*((?:[0-9a-f]{2} )+)"
    step("select body sensor location", f"select-attribute {BODY_SENSOR_LOCATION}", [BODY_SENSOR_LOCATION + r"[^\n]*\n[\s\S]*?char[0-9a-f]{4}\]# "], [r"No attribute"])
    step("read body sensor location", "read", [value_line], [r"Failed to read"])
    step("select control point", f"select-attribute {CONTROL_POINT}", [CONTROL_POINT + r"[^\n]*\n[\s\S]*?char[0-9a-f]{4}\]# "], [r"No attribute"])
    # bluetoothctl prints nothing when a write succeeds, only "Failed to write: ..." when it fails.
    step("write 0x01 (accepted)", "write 0x01", [], [r"Failed to write[^\n]*"], timeout=3, absent_is_ok=True)
    # bluetoothctl names only the D-Bus error; the ATT error code itself is read from btmon's trace.
    if step("write 0x02 (refused)", "write 0x02", [r"Failed to write[^\n]*"]):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not ATT_ERROR_0x80.search(monitor_text()):
            time.sleep(0.2)
        match = ATT_ERROR_0x80.search(monitor_text())
        failures += match is None
        print(json.dumps({"step": "ATT error 0x80 on the air (btmon)", "ok": match is not None,
                          "detail": match.group(0) if match else monitor_text()[-500:]}), flush=True)
    step("select measurement", f"select-attribute {MEASUREMENT}", [MEASUREMENT + r"[^\n]*\n[\s\S]*?char[0-9a-f]{4}\]# "], [r"No attribute"])
    step("notify on", "notify on", [r"Notify started"], [r"Failed to start notify[^\n]*"])
    step("notification", None, [value_line])
    step("notify off", "notify off", [r"Notify stopped"], [r"Failed to stop notify[^\n]*"])
    step("main menu", "back", [r"Return to main menu|# "])
    step("disconnect", f"disconnect {address}", [r"Successful disconnected"], [r"Failed to disconnect[^\n]*"])
    child.sendline("quit")
    try:
        child.expect(pexpect.EOF, timeout=10)
    except pexpect.TIMEOUT:
        child.terminate(force=True)
    monitor.terminate()
    print(json.dumps({"step": "summary", "ok": failures == 0, "failures": failures}), flush=True)
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
