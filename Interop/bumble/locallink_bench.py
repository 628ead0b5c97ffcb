#!/usr/bin/env python3
"""Bumble's bench app with both sides in ONE process, on Bumble's in-process LocalLink.

The one-process counterpart of `bluetide bench loopback`: two Bumble controllers on a
`bumble.link.LocalLink`, a bench central (GATT client) on one and a bench peripheral (GATT
server) on the other, all in one asyncio loop, with no TCP and no HCI transport between host
and controller. Bumble's own Central, Peripheral, Sender/Receiver/Ping/Pong classes run
unchanged; only `open_transport` is replaced, so `local:central` and `local:peripheral` name
the two in-process controllers. The GATT `can_receive` fix of bench.py applies.

Options are Bumble's bench group options (`--scenario` is the central's; the peripheral runs
its peer: send -> receive, ping -> pong), followed by the command `both`:
  python3 locallink_bench.py --att-mtu 517 --packet-size 500 --packet-count 1000 \\
      --start-delay 0 both
  python3 locallink_bench.py --scenario ping --pace 30 --packet-count 100 \\
      --packet-size 100 --start-delay 0 both
The figures are printed by Bumble's classes, as with the two-process bench.
"""

from __future__ import annotations

import asyncio
import os
import sys
import types

import click

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as bench_wrapper  # noqa: E402  (the GATT can_receive fix)
import bumble.apps.bench as bench  # noqa: E402
from bumble.controller import Controller  # noqa: E402
from bumble.link import LocalLink  # noqa: E402

PEER = {"send": "receive", "receive": "send", "ping": "pong", "pong": "ping"}


class InProcessTransport:
    """What `open_transport` returns: an async context manager that yields (source, sink),
    here the same in-process controller for both."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    async def __aenter__(self):
        return (self.controller, self.controller)

    async def __aexit__(self, *exc) -> None:
        return None


def install_local_link() -> None:
    names = {"local:central": "C0", "local:peripheral": "C1"}
    controllers: dict[str, Controller] = {}
    links: list[LocalLink] = []

    async def open_local(name: str):
        if name not in names:
            raise ValueError(f"{name}: only local:central and local:peripheral exist in this process")
        # Made inside the running loop (Bumble's controller needs one), on one shared link.
        if not links:
            links.append(LocalLink())
        if name not in controllers:
            controllers[name] = Controller(names[name], link=links[0])
        return InProcessTransport(controllers[name])

    bench.open_transport = open_local


@bench.bench.command()
@click.pass_context
def both(ctx):
    """Run the central and the peripheral in this process, on a LocalLink."""
    central_scenario = ctx.obj["scenario"] or "send"
    peripheral_ctx = types.SimpleNamespace(obj=dict(ctx.obj, scenario=PEER[central_scenario]))
    central = bench.Central(
        "local:central", bench.DEFAULT_PERIPHERAL_ADDRESS,
        bench.create_scenario_factory(ctx, "send"), bench.create_mode_factory(ctx, "gatt-client"),
        None, None, False, False, False, None, None, None, None, None, None, None, None,
        False, ctx.obj["extended_data_length"], ctx.obj["role_switch"], ctx.obj["le_scan"],
        ctx.obj["le_advertise"], ctx.obj["classic_page_scan"], ctx.obj["classic_inquiry_scan"])
    peripheral = bench.Peripheral(
        "local:peripheral",
        bench.create_scenario_factory(peripheral_ctx, "receive"), bench.create_mode_factory(peripheral_ctx, "gatt-server"),
        False, False, ctx.obj["extended_data_length"], ctx.obj["role_switch"], ctx.obj["le_scan"],
        ctx.obj["le_advertise"], ctx.obj["classic_page_scan"], ctx.obj["classic_inquiry_scan"])

    async def run_both():
        serving = asyncio.create_task(peripheral.run())
        await asyncio.sleep(0.2)  # let it advertise
        await central.run()
        serving.cancel()

    asyncio.run(run_both())


def main() -> None:
    bench_wrapper.patch_gatt_sender()
    install_local_link()
    bench.main()


if __name__ == "__main__":
    main()
