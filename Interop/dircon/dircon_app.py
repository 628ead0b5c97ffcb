"""A DIRCON (Wahoo Direct Connect) app, written from the protocol description, for the bridge's
tests: it connects to a trainer over TCP (or finds it over mDNS with avahi-browse first), discovers
its services and characteristics, subscribes to Indoor Bike Data and the Fitness Machine Control
Point, requests control, sets an ERG target and waits until the trainer's power settles there.

    python3 dircon_app.py --port PORT [--host 127.0.0.1] [--erg 180] [--timeout 40]
    python3 dircon_app.py --mdns NAME [--interface lo] [--erg 180]   # browse _wahoo-fitness-tnp._tcp for NAME

Prints one line per step (`services ...`, `control success`, `erg success`, `settled 180 W`) and
exits 0 when the power settled, 1 otherwise. Standard library only.
"""

import argparse
import os
import select
import socket
import struct
import subprocess
import sys
import time

BASE = "00001000800000805f9b34fb"
DISCOVER_SERVICES, DISCOVER_CHARACTERISTICS, READ, WRITE, ENABLE, NOTIFICATION = 1, 2, 3, 4, 5, 6


def uuid16(value):
    return bytes.fromhex("0000%04x" % value + BASE)


def short(uuid):
    text = uuid.hex()
    return int(text[4:8], 16) if text[8:] == BASE and text[:4] == "0000" else text


class Dircon:
    def __init__(self, host, port, timeout):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buffer = b""
        self.sequence = 0
        self.notifications = []

    def _read(self):
        while True:
            if len(self.buffer) >= 6:
                version, ident, seq, response, length = struct.unpack(">BBBBH", self.buffer[:6])
                if len(self.buffer) >= 6 + length:
                    payload = self.buffer[6 : 6 + length]
                    self.buffer = self.buffer[6 + length :]
                    if version != 1:
                        raise RuntimeError(f"version {version}")
                    return ident, seq, response, payload
            data = self.sock.recv(4096)
            if not data:
                raise RuntimeError("the trainer closed the connection")
            self.buffer += data

    def request(self, ident, payload=b""):
        self.sequence = (self.sequence + 1) & 0xFF
        self.sock.sendall(struct.pack(">BBBBH", 1, ident, self.sequence, 0, len(payload)) + payload)
        while True:
            got, seq, response, body = self._read()
            if got == NOTIFICATION:
                self.notifications.append(body)
                continue
            if got != ident or seq != self.sequence:
                raise RuntimeError(f"answer {got}/{seq} to request {ident}/{self.sequence}")
            if response != 0:
                raise RuntimeError(f"request {ident} refused: response code {response}")
            return body

    def notification(self, uuid):
        while True:
            for index, body in enumerate(self.notifications):
                if body[:16] == uuid:
                    return self.notifications.pop(index)[16:]
            got, _, _, body = self._read()
            if got == NOTIFICATION:
                self.notifications.append(body)


def indoor_bike_power(value):
    flags = value[0] | value[1] << 8
    at = 2
    for bit, size in ((0, 2), (1, 2), (2, 2), (3, 2), (4, 3), (5, 2)):
        present = not (flags & 1) if bit == 0 else flags & (1 << bit)
        if present:
            at += size
    if flags & (1 << 6):
        return struct.unpack_from("<h", value, at)[0]
    return None


def unescape(label):
    """avahi-browse -p writes a service name with `\\DDD` (decimal) for a space or any other byte
    outside letters and digits, and `\\.` / `\\\\` for a dot and a backslash."""
    out, i = bytearray(), 0
    raw = label.encode()
    while i < len(raw):
        if raw[i] == 0x5C and raw[i + 1 : i + 4].isdigit():
            out.append(int(raw[i + 1 : i + 4]))
            i += 4
        elif raw[i] == 0x5C and i + 1 < len(raw):
            out.append(raw[i + 1])
            i += 2
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8", "replace")


def browse(name, timeout, interface=None):
    """Follows avahi-browse until `name` is resolved on IPv4 (on `interface` when given): each
    line is read as avahi reports it, no polling; gives up after `timeout` seconds.

    The pipe is read with os.read into our own line buffer: a buffered readline after select
    would leave lines that arrived in one chunk in the file object's buffer, where select cannot
    see them, and wait for more output that may never come."""
    deadline = time.monotonic() + timeout
    browser = subprocess.Popen(["avahi-browse", "-rp", "_wahoo-fitness-tnp._tcp"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    descriptor = browser.stdout.fileno()
    pending, seen, ended = b"", [], False
    try:
        while True:
            while b"\n" in pending:
                raw, pending = pending.split(b"\n", 1)
                line = raw.decode("utf-8", "replace")
                seen.append(line)
                parts = line.split(";")
                if len(parts) < 10 or parts[0] != "=" or parts[2] != "IPv4" or unescape(parts[3]) != name:
                    continue
                if interface and parts[1] != interface:
                    continue
                print(f"found {name} on {parts[1]} at {parts[7]}:{parts[8]} txt {' '.join(parts[9:])}", flush=True)
                return parts[7], int(parts[8])
            if ended:
                errors = browser.stderr.read().decode("utf-8", "replace").strip()
                raise RuntimeError(f"avahi-browse ended before finding {name}: {errors}")
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([descriptor], [], [], left)[0]:
                break
            chunk = os.read(descriptor, 65536)
            if chunk:
                pending += chunk
            else:
                ended, pending = True, pending + (b"\n" if pending else b"")
    finally:
        browser.kill()
        browser.wait()
    shown = "; ".join(seen[-6:]) or "nothing"
    raise RuntimeError(f"no {name} over mDNS within {timeout:g} s (avahi-browse said {len(seen)} lines, the last: {shown})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int)
    parser.add_argument("--mdns")
    parser.add_argument("--interface", help="with --mdns: take only the answer seen on this interface (lo)")
    parser.add_argument("--erg", type=int, default=180)
    parser.add_argument("--timeout", type=float, default=40)
    args = parser.parse_args()
    host, port = browse(args.mdns, args.timeout, args.interface) if args.mdns else (args.host, args.port)
    app = Dircon(host, port, args.timeout)
    services = app.request(DISCOVER_SERVICES)
    print("services", [short(services[i : i + 16]) for i in range(0, len(services), 16)], flush=True)
    table = app.request(DISCOVER_CHARACTERISTICS, uuid16(0x1826))[16:]
    characteristics = {short(table[i : i + 16]): table[i + 16] for i in range(0, len(table), 17)}
    if not characteristics.get(0x2AD9, 0) & 0x02:
        raise RuntimeError(f"no writable control point: {characteristics}")
    power_range = app.request(READ, uuid16(0x2AD8))[16:]
    print("power range", struct.unpack("<hhH", power_range), flush=True)
    app.request(ENABLE, uuid16(0x2AD2) + b"\x01")
    app.request(ENABLE, uuid16(0x2AD9) + b"\x01")
    for name, command in (("control", b"\x00"), ("erg", b"\x05" + struct.pack("<h", args.erg))):
        app.request(WRITE, uuid16(0x2AD9) + command)
        answer = app.notification(uuid16(0x2AD9))
        if answer[:2] != bytes([0x80, command[0]]) or answer[2] != 1:
            print(f"{name} refused: {answer.hex()}", flush=True)
            return 1
        print(f"{name} success", flush=True)
    deadline = time.time() + args.timeout
    near = 0
    while time.time() < deadline:
        power = indoor_bike_power(app.notification(uuid16(0x2AD2)))
        near = near + 1 if power is not None and abs(power - args.erg) <= 5 else 0
        if near >= 3:
            print(f"settled {power} W", flush=True)
            return 0
    print("power did not settle", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
