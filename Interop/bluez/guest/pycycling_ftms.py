"""pycycling (a real FTMS client, from PyPI) against a Fitness Machine: what a training app does.

Runs in the guest with pycycling's own environment (/opt/pycycling/bin/python, Bleak 3.1):

  /opt/pycycling/bin/python pycycling_ftms.py --address C1:B1:7E:00:03:00 --erg 150 --grade 8
  /opt/pycycling/bin/python pycycling_ftms.py --name "Bluetide Bridge"     (found by name: Bleak's scan)

Steps, one JSON line each ({"step": ..., ...}): connect (Bleak finds the address by scanning, as
pycycling's users do), features, ranges, data (Indoor Bike Data notifications), request control,
ERG (Set Target Power, then the power reported until it is within 5 W of the target), simulation
(Set Indoor Bike Simulation Parameters with a climb, then the speed reported as it falls), reset.
Each control point request records the trainer's answer (Control Point indication). Exits 0 when
every step ran (the host checks the values); 1 on an error, which is printed as {"step": "error"}.
"""
import argparse
import asyncio
import json
import sys
import time

from bleak import BleakClient, BleakScanner
from pycycling.fitness_machine_service import FitnessMachineService


def emit(step: str, **fields) -> None:
    print(json.dumps({"step": step, **fields}), flush=True)


def flags(named_tuple) -> list[str]:
    """The names of a pycycling feature tuple's fields that are true."""
    return [name for name, value in named_tuple._asdict().items() if value]


async def run(args) -> None:
    started = time.monotonic()
    target = args.address
    if args.name:
        target = await BleakScanner.find_device_by_name(args.name, timeout=20)
        if target is None:
            raise RuntimeError(f"no device named {args.name!r} found by scanning for 20 s")
    async with BleakClient(target, timeout=30) as client:
        emit("connect", address=client.address, seconds=round(time.monotonic() - started, 1))
        ftms = FitnessMachineService(client)

        machine, target = await ftms.get_all_features()
        emit("features", machine=flags(machine), target=flags(target))
        power = await ftms.get_supported_power_range()
        resistance = await ftms.get_supported_resistance_level_range()
        emit("ranges", power=list(power), resistance=list(resistance))

        samples: asyncio.Queue = asyncio.Queue()
        answers: asyncio.Queue = asyncio.Queue()
        ftms.set_indoor_bike_data_handler(samples.put_nowait)
        ftms.set_control_point_response_handler(answers.put_nowait)
        await ftms.enable_control_point_indicate()
        await ftms.enable_indoor_bike_data_notify()

        async def next_sample() -> dict:
            sample = await asyncio.wait_for(samples.get(), timeout=10)
            return {"speed": sample.instant_speed, "cadence": sample.instant_cadence, "power": sample.instant_power,
                    "distance": sample.total_distance, "elapsed": sample.elapsed_time}

        emit("data", samples=[await next_sample() for _ in range(3)])

        async def request(call) -> dict:
            await call
            answer = await asyncio.wait_for(answers.get(), timeout=10)
            return {"request": answer.request_code_enum.name, "result": answer.result_code_enum.name}

        emit("request control", **await request(ftms.request_control()))

        answer = await request(ftms.set_target_power(args.erg))
        powers, deadline = [], time.monotonic() + args.settle
        while time.monotonic() < deadline:
            powers.append((await next_sample())["power"])
            if len(powers) >= 2 and all(abs(p - args.erg) <= 5 for p in powers[-2:]):
                break
        emit("erg", target=args.erg, powers=powers, **answer)

        before = (await next_sample())["speed"]
        answer = await request(ftms.set_simulation_parameters(
            wind_speed=0, grade=round(args.grade * 100), crr=40, cw=51))
        speeds = [before]
        deadline = time.monotonic() + args.settle
        while time.monotonic() < deadline and speeds[-1] > before - 5:
            speeds.append((await next_sample())["speed"])
        emit("simulation", grade=args.grade, speeds=speeds, **answer)

        emit("reset", **await request(ftms.reset()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    device = parser.add_mutually_exclusive_group(required=True)
    device.add_argument("--address")
    device.add_argument("--name")
    parser.add_argument("--erg", type=int, default=150, help="ERG target, W")
    parser.add_argument("--grade", type=float, default=8.0, help="simulated grade, %%")
    parser.add_argument("--settle", type=float, default=30.0, help="seconds to watch power or speed move")
    args = parser.parse_args()
    try:
        asyncio.run(run(args))
    except Exception as error:  # noqa: BLE001 - the host wants the reason as data
        emit("error", error=f"{type(error).__name__}: {error}")
        sys.exit(1)


if __name__ == "__main__":
    main()
