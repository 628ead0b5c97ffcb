"""Carries random bytes both ways between two serial ports that are joined over BLE (e.g.
`bluetide uart serve --pty A` and `bluetide uart NAME --pty B`): N bytes written to A must come
out of B and N other bytes written to B out of A, complete and in order, at the same time.
Prints one JSON line: {"a_to_b": {...}, "b_to_a": {...}} with sent, received, equal.

Usage: python3 pty_pair.py PORT_A PORT_B [BYTES] [SEED] [TIMEOUT_SECONDS]
"""
import json
import random
import sys
import threading
import time

import serial  # pyserial


def main() -> None:
    path_a, path_b = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 20_000
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 28
    limit = float(sys.argv[5]) if len(sys.argv) > 5 else 120.0
    rng = random.Random(seed)
    data = {"a_to_b": rng.randbytes(count), "b_to_a": rng.randbytes(count)}
    port_a = serial.Serial(path_a, 115200, timeout=0.5)
    port_b = serial.Serial(path_b, 115200, timeout=0.5)
    got = {"a_to_b": bytearray(), "b_to_a": bytearray()}

    def write(port, payload) -> None:
        for start in range(0, len(payload), 1000):
            port.write(payload[start:start + 1000])
        port.flush()

    def read(port, key) -> None:
        deadline = time.monotonic() + limit
        while len(got[key]) < count and time.monotonic() < deadline:
            got[key] += port.read(4096)

    threads = [
        threading.Thread(target=read, args=(port_b, "a_to_b")),
        threading.Thread(target=read, args=(port_a, "b_to_a")),
        threading.Thread(target=write, args=(port_a, data["a_to_b"])),
        threading.Thread(target=write, args=(port_b, data["b_to_a"])),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result = {}
    for key in ("a_to_b", "b_to_a"):
        result[key] = {"sent": count, "received": len(got[key]), "equal": bytes(got[key]) == data[key]}
    print(json.dumps(result), flush=True)
    sys.exit(0 if all(r["equal"] for r in result.values()) else 1)


if __name__ == "__main__":
    main()
