#!/usr/bin/env python3
"""Run Bumble's bench app (`python -m bumble.apps.bench`) with its GATT sender fixed.

Bumble 0.0.236's `Sender` (the `send` scenario) asks its packet I/O `can_receive()`
after queuing the packets, but the GATT client and server I/O classes do not have that
method: the run dies with AttributeError before the ACK, and the controller is left
with a stale link. This wrapper gives both GATT classes a `can_receive()` that answers
True (they do receive: the ACK comes back as a notification or a write), then hands
every argument to the bench app unchanged. Other scenarios behave exactly as stock.

Extra option, taken out before Bumble parses the rest:
  --exit-on-stdin-eof   exit when standard input closes (so the process dies with
                        the test that started it)

Examples (with `python3 controllers.py 0 0` -> READY A B):
  python3 bench.py --packet-count 300 --packet-size 500 central tcp-client:127.0.0.1:A
  python3 bench.py --scenario send peripheral tcp-client:127.0.0.1:B
"""

from __future__ import annotations

import os
import sys
import threading

import bumble.apps.bench as bench


def _answers_true(_self) -> bool:
    return True


def patch_gatt_sender() -> None:
    """Adds the missing `can_receive()` to the GATT packet I/O classes, where it is missing."""
    for name in ("GattClient", "GattServer"):
        io_class = getattr(bench, name)
        if not hasattr(io_class, "can_receive"):
            io_class.can_receive = _answers_true


def exit_on_stdin_eof() -> None:
    """Ends the process (without cleanup: it is orphaned) once stdin reaches end of file."""

    def watch() -> None:
        # os.read on the raw descriptor, not sys.stdin: a daemon thread blocked inside the
        # buffered reader holds its lock, and the interpreter aborts when it exits meanwhile.
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        os._exit(3)

    threading.Thread(target=watch, name="stdin-eof", daemon=True).start()


def main() -> None:
    arguments = sys.argv[1:]
    if "--exit-on-stdin-eof" in arguments:
        arguments = [a for a in arguments if a != "--exit-on-stdin-eof"]
        exit_on_stdin_eof()
    patch_gatt_sender()
    sys.argv = [sys.argv[0]] + arguments
    bench.main()


if __name__ == "__main__":
    main()
