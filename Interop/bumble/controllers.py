#!/usr/bin/env python3
"""Start N Bumble virtual controllers joined by one in-process link.

Each controller listens for one HCI host on a TCP port (H4 framing). Unlike
`python -m bumble.apps.controllers`, this launcher accepts any number of
controllers, gives each a distinct public address (00:00:00:00:00:01, ...),
can turn off the extended-advertising feature bit (so scanners get legacy
LE Advertising Reports), and prints one line

    READY <port> <port> ...

on stdout once every port listens. A port given as 0 is chosen by the
operating system; the READY line carries the real port numbers, in the order
the ports were given. See README.md in this folder.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket

from bumble import hci
from bumble.controller import Controller
from bumble.core import PhysicalTransport
from bumble.link import LocalLink
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket
from bumble_common import stdin_eof_future, add_common_options, run_main


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Run linked Bumble virtual controllers on TCP ports."
    )
    parser.add_argument(
        "ports",
        metavar="PORT",
        type=int,
        nargs="+",
        help="TCP port for each controller (0 = let the OS pick a free one)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="interface to listen on (default 127.0.0.1; '_' or '0.0.0.0' for all)",
    )
    parser.add_argument(
        "--legacy-reports",
        action="store_true",
        help="clear the LE Extended Advertising feature bit so scanners receive "
        "legacy LE Advertising Reports (0x02) instead of extended ones (0x0D)",
    )
    parser.add_argument(
        "--le-acl-length",
        type=int,
        default=None,
        help="LE ACL data packet length reported by LE Read Buffer Size "
        "(Bumble's default is 27)",
    )
    add_common_options(parser)
    return parser.parse_args(argv)


class ConnectionAddressLink(LocalLink):
    """A LocalLink that stamps LE ACL data with the address the sender used for the link.

    Bumble 0.0.236's LocalLink marks every LE ACL packet as coming from the sender's *random*
    address. When a side connected with its public address (or never set a random one), the
    receiver finds no connection for that address and drops the data ("no connection for ...")
    even though the connection itself completed. LL control PDUs already use the connection's own
    address; this does the same for ACL data, so public-address links carry data too.
    """

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.LE:
            super().send_acl_data(sender_controller, destination_address, transport, data)
            return
        connection = sender_controller.le_connections.get(destination_address)
        if connection is None:
            super().send_acl_data(sender_controller, destination_address, transport, data)
            return
        source_address = connection.self_address
        destination_controller = self.find_le_controller(destination_address)
        if destination_controller is None:
            return
        asyncio.get_running_loop().call_soon(
            lambda: destination_controller.on_link_acl_data(
                source_address, transport, data
            )
        )


def make_listening_socket(host: str, port: int) -> socket.socket:
    """Bind a TCP socket (port 0 = any free port) so the real port is known."""
    bind_host = "" if host in ("_", "0.0.0.0") else host
    # IPPROTO_TCP (not 0) so asyncio sets TCP_NODELAY on accepted connections: without it,
    # Nagle + delayed ACK add ~40 ms to every ACL packet forwarded to a host.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((bind_host, port))
    sock.listen(1)
    sock.setblocking(False)
    return sock




async def run(arguments: argparse.Namespace) -> int:
    link = ConnectionAddressLink()
    transports = []
    controllers = []
    ports: list[int] = []
    for index, requested_port in enumerate(arguments.ports):
        try:
            sock = make_listening_socket(arguments.host, requested_port)
        except OSError as error:
            print(
                f"ERROR cannot listen on port {requested_port}: {error}",
                flush=True,
            )
            return 1
        ports.append(sock.getsockname()[1])
        transport = await open_tcp_server_transport_with_socket(sock)
        transports.append(transport)
        controller = Controller(
            f"C{index}",
            host_source=transport.source,
            host_sink=transport.sink,
            link=link,
            public_address=f"00:00:00:00:00:{index + 1:02X}",
        )
        if arguments.legacy_reports:
            controller.le_features = (
                controller.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
            )
        if arguments.le_acl_length is not None:
            controller.le_acl_data_packet_length = arguments.le_acl_length
        controllers.append(controller)

    print("READY " + " ".join(str(port) for port in ports), flush=True)

    stop = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(
            signal_number, lambda: stop.done() or stop.set_result(None)
        )
    waiters = [stop]
    if arguments.exit_on_stdin_eof:
        waiters.append(stdin_eof_future())
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)

    for transport in transports:
        await transport.close()
    return 0


def main() -> None:
    run_main(parse_arguments, run)


if __name__ == "__main__":
    main()
