#!/usr/bin/env python3
"""Run Bumble central <-> Bumble peripheral over controllers.py, without Swift.

    python3 selftest.py [--mtu 517] [--legacy-reports]

Starts the three scripts from this folder, checks the central's summary against the
peripheral's database, prints PASS or the problems, and stops every process it started.
Exit status 0 on success.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def uuid(short: int) -> str:
    return f"B1DE{short:04X}-0000-4000-8000-00000000B1DE"


def read_line(process: subprocess.Popen, deadline: float, wanted) -> str:
    """Read stdout lines until `wanted(line)`; fail at `deadline` (monotonic seconds)."""
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"process {process.args[2]} closed its output")
        line = line.strip()
        if wanted(line):
            return line
    raise RuntimeError("timed out")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mtu", type=int, default=517)
    parser.add_argument("--legacy-reports", action="store_true")
    arguments = parser.parse_args()

    python = sys.executable
    started: list[subprocess.Popen] = []

    def start(script: str, *script_arguments: str) -> subprocess.Popen:
        process = subprocess.Popen(
            [python, "-u", os.path.join(HERE, script), *script_arguments, "--exit-on-stdin-eof"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        return process

    problems: list[str] = []
    try:
        deadline = time.monotonic() + 90
        controllers = start(
            "controllers.py", "0", "0", *(["--legacy-reports"] if arguments.legacy_reports else [])
        )
        ready = read_line(controllers, deadline, lambda l: l.startswith("READY"))
        central_port, peripheral_port = ready.split()[1:3]

        peripheral = start("peripheral.py", peripheral_port, "--name", "Selftest Peer")
        read_line(peripheral, deadline, lambda l: '"ready"' in l)

        central = start(
            "central.py", central_port, "--name", "Selftest Peer", "--mtu", str(arguments.mtu),
            "--write-short", uuid(3), "--write-long", uuid(3),
            "--subscribe", f"{uuid(5)}=5", "--subscribe", f"{uuid(4)}=3",
            "--subscribe", "2A37=3", "--subscribe", "2A19=1",
            "--read-denied", uuid(6), "--write-denied", uuid(7),
        )
        summary = json.loads(read_line(central, deadline, lambda l: '"summary"' in l))

        def check(condition: bool, message: str) -> None:
            if not condition:
                problems.append(message)

        check(summary["ok"], "central reported a failure")
        check(
            summary["reads"].get(uuid(2)) == bytes(i % 256 for i in range(300)).hex(),
            "300-byte value",
        )
        writes = summary["writes"].get(uuid(3), [])
        check([w["kind"] for w in writes] == ["short", "long"], "writes made")
        check(all(w.get("readback_matches") for w in writes), "echo read-back")
        counts = {k: v["count"] for k, v in summary["subscriptions"].items()}
        check(
            counts == {uuid(5): 5, uuid(4): 3, "2A37": 3, "2A19": 1},
            f"notification counts {counts}",
        )
        check(summary["read_denied"].get(uuid(6)) == 2, "read of write-only gives 0x02")
        check(summary["write_denied"].get(uuid(7)) == 3, "write of read-only gives 0x03")
        check(central.wait(timeout=30) == 0, "central exit status")
        check(peripheral.wait(timeout=30) == 0, "peripheral exit status")
    except Exception as error:  # report and clean up
        problems.append(repr(error))
    finally:
        for process in reversed(started):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    if problems:
        print("FAIL: " + "; ".join(problems))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
