"""pyftms (the library behind Home Assistant's FTMS integration, from PyPI) against a Fitness Machine.

pyftms 0.4 needs Python >= 3.12, so it lives in the guest's Debian 13 root (Python 3.13); run it as

  sh /share/guest/in-trixie.sh /opt/pyftms/bin/python /share/guest/pyftms_check.py --address C1:B1:7E:00:03:00 --erg 150
  ... pyftms_check.py --name "Bluetide Bridge"     (picked by name from pyftms's FTMS discovery)

Steps, one JSON line each ({"step": ..., ...}), the way Home Assistant uses the library: find
(pyftms's own FTMS discovery, by address), connect (pyftms reads Device Information, features,
settings and ranges), data (its update events), ERG (`set_target_power`: pyftms sends Request
Control first by itself, then the target; its result code; the power reported until within 5 W),
simulation (`set_indoor_bike_simulation`, its result code, the speed reported after it), reset.
Exits 0 when every step ran (the host checks the values); 1 on an error ({"step": "error"}).
"""
import argparse
import asyncio
import json
import sys
import time

from pyftms import IndoorBikeSimulationParameters, discover_ftms_devices, get_client, get_client_from_address


def emit(step: str, **fields) -> None:
    print(json.dumps({"step": step, **fields}, default=str), flush=True)


async def run(args) -> None:
    updates: asyncio.Queue = asyncio.Queue()
    others: list[dict] = []

    def on_event(event) -> None:
        if event.event_id == "update":
            updates.put_nowait(dict(event.event_data))
        else:
            others.append({"event": str(event.event_id), "data": getattr(event, "event_data", None),
                           "source": str(getattr(event, "event_source", ""))})

    started = time.monotonic()
    if args.address:
        machine = await get_client_from_address(args.address, scan_timeout=20, timeout=10, on_ftms_event=on_event)
    else:
        machine = None
        async for device, machine_type in discover_ftms_devices(discover_time=20):
            if device.name == args.name:
                machine = get_client(device, machine_type, timeout=10, on_ftms_event=on_event)
                break
        if machine is None:
            raise RuntimeError(f"pyftms found no FTMS device named {args.name!r} in 20 s")
    emit("find", address=machine.address, name=machine.name, type=machine.machine_type.name,
         seconds=round(time.monotonic() - started, 1))
    async with machine:
        emit("connect", device_info=dict(machine.device_info), supported_settings=list(machine.supported_settings),
             supported_properties=list(machine.supported_properties),
             ranges={name: list(value) for name, value in machine.supported_ranges.items()})

        async def next_update() -> dict:
            return await asyncio.wait_for(updates.get(), timeout=10)

        # Update events carry only what changed; the machine's properties hold the latest values.
        def sample() -> dict:
            return {name: getattr(machine, name) for name in
                    ("speed_instant", "cadence_instant", "power_instant", "distance_total", "time_elapsed")}

        samples = []
        while len(samples) < 3:
            await next_update()
            if machine.power_instant is not None:  # the first events can come before any Indoor Bike Data
                samples.append(sample())
        emit("data", samples=samples)

        result = await machine.set_target_power(args.erg)
        powers, deadline = [], time.monotonic() + args.settle
        while time.monotonic() < deadline:
            await next_update()
            powers.append(machine.power_instant)
            if len(powers) >= 2 and all(abs(p - args.erg) <= 5 for p in powers[-2:]):
                break
        emit("erg", target=args.erg, result=result.name, powers=powers)

        result = await machine.set_indoor_bike_simulation(IndoorBikeSimulationParameters(
            wind_speed=0, grade=args.grade, rolling_resistance=0.004, wind_resistance=0.51))
        emit("simulation", grade=args.grade, result=result.name,
             supported=("indoor_bike_simulation" in machine.supported_settings))

        result = await machine.reset()
        emit("reset", result=result.name, events=others)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    device = parser.add_mutually_exclusive_group(required=True)
    device.add_argument("--address")
    device.add_argument("--name")
    parser.add_argument("--erg", type=int, default=150, help="ERG target, W")
    parser.add_argument("--grade", type=float, default=8.0, help="simulated grade, %%")
    parser.add_argument("--settle", type=float, default=30.0, help="seconds to watch the power move")
    args = parser.parse_args()
    try:
        asyncio.run(run(args))
    except Exception as error:  # noqa: BLE001 - the host wants the reason as data
        emit("error", error=f"{type(error).__name__}: {error}")
        sys.exit(1)


if __name__ == "__main__":
    main()
