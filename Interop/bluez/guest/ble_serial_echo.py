"""ble-serial (from PyPI, /opt/ble-serial) against a looped-back serial module: its pty moves data.

  python3 ble_serial_echo.py --address C1:B1:7E:00:04:00 --bytes 5120

Starts `ble-serial -d ADDRESS -p /tmp/ttyBLE` (it finds the HM-10's FFE1 characteristic by
itself), waits for its "Running main loop" line, opens the pty raw, writes BYTES bytes (every byte
value, in a pattern that shows reordering or loss), reads until as many came back (the module
echoes them as notifications), then stops ble-serial. One JSON line each: {"step": "ready"},
{"step": "echo", "sent", "received", "equal", "first_difference", "seconds"}, {"step": "stopped",
"status"}. Exits 0 when the echo was exact. Only the standard library (the guest's Python 3.11).
"""
import argparse
import json
import os
import select
import signal
import subprocess
import sys
import termios
import threading
import time
import tty

BLE_SERIAL = "/opt/ble-serial/bin/ble-serial"


def emit(step: str, **fields) -> None:
    print(json.dumps({"step": step, **fields}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", required=True)
    parser.add_argument("--bytes", type=int, default=5120)
    parser.add_argument("--port", default="/tmp/ttyBLE")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds for the connection and for the echo")
    args = parser.parse_args()

    process = subprocess.Popen(
        [BLE_SERIAL, "-d", args.address, "-p", args.port, "-t", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    log: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        for raw in iter(process.stdout.readline, b""):
            line = raw.decode(errors="replace").rstrip()
            log.append(line)
            if "Running main loop" in line:
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    status = 1
    try:
        if not ready.wait(args.timeout) or process.poll() is not None or not os.path.exists(args.port):
            emit("error", error="ble-serial did not start its pty", log=log[-10:])
            return
        emit("ready", port=args.port, target=os.path.realpath(args.port), log=log[-3:])
        fd = os.open(args.port, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(fd, termios.TCSANOW)
        payload = bytes((i * 7 + i // 256) % 256 for i in range(args.bytes))
        received = bytearray()
        started = time.monotonic()
        deadline = started + args.timeout
        sent = 0
        while len(received) < len(payload) and time.monotonic() < deadline:
            writable = [fd] if sent < len(payload) else []
            readable, can_write, _ = select.select([fd], writable, [], 0.5)
            if readable:
                received += os.read(fd, 4096)
            if can_write:
                sent += os.write(fd, payload[sent:sent + 256])
        seconds = round(time.monotonic() - started, 2)
        difference = next((i for i, (a, b) in enumerate(zip(payload, received)) if a != b), None)
        equal = bytes(received) == payload
        emit("echo", sent=sent, received=len(received), equal=equal, first_difference=difference, seconds=seconds)
        os.close(fd)
        status = 0 if equal else 1
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        emit("stopped", status=process.returncode, log=log[-4:])
    sys.exit(status)


if __name__ == "__main__":
    main()
