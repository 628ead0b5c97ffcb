"""Helpers shared by the Bumble interop scripts (controllers.py, peripheral.py, central.py)."""

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import threading
import time
from typing import Awaitable, Callable, Optional

from bumble import hci


START = time.monotonic()


def json_line(key: str, value: str, **fields) -> None:
    """Print one JSON line {key: value, "t": seconds since start, **fields} and flush, so a
    harness sees it at once."""
    record = {key: value, "t": round(time.monotonic() - START, 3)}
    record.update(fields)
    sys.stdout.write(json.dumps(record, sort_keys=True) + "\n")
    sys.stdout.flush()


def stdin_eof_future() -> asyncio.Future:
    """A future that completes when stdin reaches end of file.

    A daemon thread does the blocking read, so it never holds up the interpreter's exit
    (an executor thread would: asyncio.run waits for those at shutdown).
    """
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def read_until_eof() -> None:
        # os.read on the raw descriptor, not sys.stdin: a daemon thread blocked inside the
        # buffered reader holds its lock, and the interpreter aborts (SIGABRT) if it exits
        # meanwhile.
        try:
            while os.read(0, 1024):
                pass
        except (OSError, ValueError):
            pass
        try:
            loop.call_soon_threadsafe(lambda: future.done() or future.set_result(None))
        except RuntimeError:
            pass  # the loop has already closed

    threading.Thread(target=read_until_eof, name="stdin-eof", daemon=True).start()
    return future


_START = time.monotonic()


def emit_event(event: str, **fields) -> None:
    """Print one JSON line {"event": ..., "t": seconds since start, ...fields} and flush, so a
    harness sees it at once."""
    record = {"event": event, "t": round(time.monotonic() - _START, 3)}
    record.update(fields)
    sys.stdout.write(json.dumps(record, sort_keys=True) + "\n")
    sys.stdout.flush()


async def wait_until_finished(finished: asyncio.Future, arguments: argparse.Namespace) -> int:
    """The end of a peripheral script: waits for `finished` (its result is the exit status),
    SIGTERM/SIGINT (4), end of stdin with --exit-on-stdin-eof (4) or `arguments.timeout`
    seconds (3), and reports a stop or a timeout as an event line."""
    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signal_number, lambda: finished.done() or finished.set_result(4))
    waiters = [finished]
    if arguments.exit_on_stdin_eof:
        waiters.append(stdin_eof_future())
    done, _ = await asyncio.wait(waiters, timeout=arguments.timeout, return_when=asyncio.FIRST_COMPLETED)
    if finished in done:
        code = finished.result()
        if code == 4:
            emit_event("stopped", reason="signal")
        return code
    if done:
        emit_event("stopped", reason="stdin closed")
        return 4
    emit_event("timeout", seconds=arguments.timeout)
    return 3


async def open_address_and_transport(arguments: argparse.Namespace):
    """A peripheral script's start: its random static `--address` and its opened transport
    (a bare port means tcp-client:127.0.0.1:PORT), or None after an error event line."""
    from bumble.transport import open_transport

    try:
        address = hci.Address(arguments.address, hci.Address.RANDOM_DEVICE_ADDRESS)
    except Exception as error:
        emit_event("error", during="arguments", message=f"bad address: {error}")
        return None
    try:
        transport = await asyncio.wait_for(open_transport(transport_moniker(arguments.transport)), 10.0)
    except Exception as error:
        emit_event("error", during="transport", message=repr(error))
        return None
    return address, transport


def address_text(address: hci.Address) -> str:
    """`AA:BB:CC:DD:EE:FF/P` for public addresses, `/R` for random ones."""
    text = address.to_string(with_type_qualifier=False)
    is_public = address.address_type in (
        hci.Address.PUBLIC_DEVICE_ADDRESS,
        hci.Address.PUBLIC_IDENTITY_ADDRESS,
    )
    return text + ("/P" if is_public else "/R")


def transport_moniker(text: str) -> str:
    """A bare port number means `tcp-client:127.0.0.1:<port>`."""
    return f"tcp-client:127.0.0.1:{text}" if text.isdigit() else text


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """The options every interop script takes: --exit-on-stdin-eof and --log-level."""
    parser.add_argument(
        "--exit-on-stdin-eof",
        action="store_true",
        help="exit when stdin reaches end of file (so the script dies with the "
        "process that started it)",
    )
    parser.add_argument(
        "--log-level",
        default=os.environ.get("BUMBLE_LOGLEVEL", "WARNING"),
        help="Python log level for Bumble's own messages on stderr",
    )


def run_main(
    parse_arguments: Callable[[list], argparse.Namespace],
    run: Callable[[argparse.Namespace], Awaitable[int]],
    on_crash: Optional[Callable[[Exception], None]] = None,
) -> None:
    """main() of an interop script: parse sys.argv, log on stderr at --log-level, run, report
    a crash through `on_crash` (exit status 1), then leave at once: a stdin watcher thread may
    still be blocked in read()."""
    arguments = parse_arguments(sys.argv[1:])
    logging.basicConfig(
        level=arguments.log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        code = asyncio.run(run(arguments))
    except Exception as error:  # reported as a JSON line, not a traceback the harness cannot read
        if on_crash is None:
            raise
        on_crash(error)
        code = 1
    sys.stdout.flush()
    os._exit(code)
