"""What the Bumble trainer peers (ftms_trainer.py, fec_trainer.py) share: a rider-and-trainer
model that follows ERG targets and simulation parameters, and the peripheral's start and end.

The model is deliberately simple and deterministic (no randomness): in ERG mode the reported
power moves towards the target with a first-order lag (time constant `ERG_TIME_CONSTANT_S`), in
simulation and free mode towards the rider's own power; speed is the steady speed at which that
power balances gravity, rolling resistance and air drag for the current grade and wind.
"""

from __future__ import annotations

import argparse
import math

from bumble.core import AdvertisingData
from bumble_common import add_common_options
from bumble_device import serve_peripheral

GRAVITY = 9.81
ERG_TIME_CONSTANT_S = 1.0


class TrainerPhysics:
    """Power, cadence, speed and distance of a rider on a smart trainer."""

    def __init__(self, rider_power_w: float = 200.0, cadence_rpm: float = 90.0, mass_kg: float = 83.0) -> None:
        self.rider_power_w = rider_power_w
        self.cadence_rpm = cadence_rpm
        self.mass_kg = mass_kg
        self.mode = "free"  # free | erg | simulation | resistance
        self.target_power_w = 0.0
        self.resistance_fraction = 0.0
        self.grade_percent = 0.0
        self.rolling_resistance = 0.004
        self.wind_resistance_kg_per_m = 0.51
        self.wind_speed_m_s = 0.0
        self.power_w = rider_power_w
        self.speed_m_s = self.steady_speed(rider_power_w)
        self.distance_m = 0.0
        self.elapsed_s = 0.0
        self.energy_j = 0.0

    def wanted_power(self) -> float:
        if self.mode == "erg":
            return self.target_power_w
        if self.mode == "resistance":
            # A heavier load makes the rider push harder at the same cadence: up to 2x.
            return self.rider_power_w * (1.0 + self.resistance_fraction)
        return self.rider_power_w

    def steady_speed(self, power_w: float) -> float:
        """The speed (m/s) at which `power_w` balances the road's resistance (bisection)."""
        slope = math.atan(self.grade_percent / 100.0)
        def needed(v: float) -> float:
            air = self.wind_resistance_kg_per_m * (v + self.wind_speed_m_s) * abs(v + self.wind_speed_m_s)
            road = self.mass_kg * GRAVITY * (self.rolling_resistance * math.cos(slope) + math.sin(slope))
            return v * (air + road)
        low, high = 0.0, 30.0
        if needed(high) < power_w:
            return high
        for _ in range(60):
            middle = (low + high) / 2
            if needed(middle) < power_w:
                low = middle
            else:
                high = middle
        return low

    def advance(self, dt: float) -> None:
        if dt <= 0:
            return
        wanted = self.wanted_power()
        self.power_w += (wanted - self.power_w) * (1.0 - math.exp(-dt / ERG_TIME_CONSTANT_S))
        target_speed = self.steady_speed(self.power_w)
        self.speed_m_s += (target_speed - self.speed_m_s) * (1.0 - math.exp(-dt / 3.0))
        self.distance_m += self.speed_m_s * dt
        self.elapsed_s += dt
        self.energy_j += self.power_w * dt


def add_trainer_options(parser: argparse.ArgumentParser, name: str, address: str) -> None:
    """The options both trainer peers take (besides add_common_options)."""
    parser.add_argument("transport", help="HCI transport moniker, or a bare TCP port meaning tcp-client:127.0.0.1:PORT")
    parser.add_argument("--name", default=name, help="advertised name")
    parser.add_argument("--address", default=address, help="random static address (top two bits 11)")
    parser.add_argument("--power", type=float, default=200.0, help="the rider's own power, W (free and simulation modes)")
    parser.add_argument("--cadence", type=float, default=90.0, help="the rider's cadence, rpm")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before giving up (exit 3)")


def trainer_argument_parser(description: str, name: str, address: str):
    """parse_arguments() of a trainer script: the trainer options with these defaults, and the
    common ones."""

    def parse_arguments(argv: list[str]) -> argparse.Namespace:
        parser = argparse.ArgumentParser(description=description)
        add_trainer_options(parser, name, address)
        add_common_options(parser)
        return parser.parse_args(argv)

    return parse_arguments


async def run_trainer(arguments: argparse.Namespace, advertising_data: bytes, make_peer) -> int:
    """A trainer script's run: serves `make_peer(device)` (an object with a `finished` future and
    a `stop()` method) with `advertising_data` and the name in the scan response, advertising again
    after each disconnection, until it finishes, a signal, end of stdin or the timeout."""
    scan_response = bytes(AdvertisingData([(AdvertisingData.COMPLETE_LOCAL_NAME, arguments.name.encode("utf-8"))]))
    return await serve_peripheral(arguments, advertising_data, make_peer, scan_response=scan_response, auto_restart=True)
