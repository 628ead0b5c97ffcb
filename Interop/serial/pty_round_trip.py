"""Sends random bytes through a serial port whose far end echoes them (e.g. `bluetide uart
--pty PATH` to an echoing HM-10 or Nordic UART device) and checks they come back complete and in
order. Prints one JSON line: {"sent": N, "received": N, "equal": true, "first_difference": null}.

Usage: python3 pty_round_trip.py PORT [BYTES] [SEED]
"""
import json
import random
import sys
import threading
import time

import serial  # pyserial


def main() -> None:
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    data = random.Random(seed).randbytes(count)
    port = serial.Serial(path, 115200, timeout=1)

    def write() -> None:
        # Pieces of 1000 bytes, as a program streaming to a serial port would send them.
        for start in range(0, len(data), 1000):
            port.write(data[start:start + 1000])
        port.flush()

    writer = threading.Thread(target=write)
    writer.start()
    received = bytearray()
    last_progress = time.monotonic()
    while len(received) < len(data) and time.monotonic() - last_progress < 20:
        chunk = port.read(len(data) - len(received))
        if chunk:
            received += chunk
            last_progress = time.monotonic()
    writer.join()
    port.close()
    difference = next((i for i, (a, b) in enumerate(zip(received, data)) if a != b), None)
    print(json.dumps({
        "sent": len(data), "received": len(received), "equal": bytes(received) == data,
        "first_difference": difference,
    }), flush=True)


if __name__ == "__main__":
    main()
