"""Helpers shared by the Bumble interop scripts (controllers.py, peripheral.py, central.py)."""

import asyncio
import os
import sys
import threading

from bumble import hci


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
