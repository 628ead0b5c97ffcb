"""bluetoothctl pairs with a peripheral as a user would, through its agent, then reads and writes
values that need a secured link; or, with --bonded, connects to a device it already bonded with
and checks that the link is encrypted from the bond without pairing again.

  python3 bluetoothctl_pair.py --address C1:B1:7E:00:03:00 --agent KeyboardDisplay \\
      --read B1DE0301-...=encrypted --write B1DE0301-...=01
  python3 bluetoothctl_pair.py --address C1:B1:7E:00:03:00 --bonded --read B1DE0301-...=encrypted

Pairing: power on, the agent (`agent CAPABILITY`, `default-agent`), scan until the device shows,
`pair ADDRESS`, answering the agent as a user would: a passkey to show is printed as
{"step": "passkey shown", "passkey": 123456} (type it on the peripheral), a number to compare is
confirmed ({"step": "confirm", "passkey": ...}), an authorisation accepted. Then `connect`, the
gatt menu: each --read UUID=TEXT reads and compares the value with TEXT, each --write UUID=HEX
writes; `disconnect`.

Each step prints one JSON line ({"step": ..., "ok": ..., "detail": ...}); then what btmon saw on
each connection ({"step": "btmon", "connections": [...]}) and a check of it: with pairing, SMP
Pairing Request and an encrypted link; with --bonded, LE Start Encryption with the stored key and
no SMP pairing at all. Exits 0 when every step passed.
"""
import argparse
import json
import re
import sys

from bluetoothctl_session import VALUE_LINE, Session, report
from btmon_trace import Monitor

# What bluetoothctl's agent asks or shows while pairing (BlueZ 5.66 wording).
PASSKEY_SHOWN = r"\[agent\] Passkey: (\d+)"
CONFIRM = r"\[agent\] Confirm passkey (\d+) \(yes/no\): "
AUTHORIZE = r"\[agent\] (?:Accept pairing|Authorize service[^\n]*) \(yes/no\): "
ENTER = r"\[agent\] Enter passkey \(number in 0-999999\): "


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--agent", default="KeyboardDisplay",
                        help="bluetoothctl's agent capability: KeyboardDisplay, DisplayYesNo, DisplayOnly, KeyboardOnly, NoInputNoOutput")
    parser.add_argument("--bonded", action="store_true", help="the device is bonded already: connect, expect no pairing")
    parser.add_argument("--read", action="append", default=[], metavar="UUID=TEXT", help="read UUID, expect TEXT (UTF-8)")
    parser.add_argument("--write", action="append", default=[], metavar="UUID=HEX", help="write HEX to UUID (with response)")
    parser.add_argument("--timeout", type=float, default=30, help="seconds each step may take")
    args = parser.parse_args()
    address = args.address.upper()
    monitor = Monitor("/tmp/btmon-pair.txt")
    session = Session(args.timeout)
    step = session.step

    def finish() -> int:
        session.quit()
        connections = monitor.connections()
        report("btmon", True, connections=connections)
        check_trace(session, connections, args.bonded, monitor)
        monitor.stop()
        report("summary", session.failures == 0, failures=session.failures)
        return 0 if session.failures == 0 else 1

    step("start", None, [r"Agent registered"])
    if not step("power on", "power on", [r"Changing power on succeeded"], [r"Failed to set power on", r"No default controller"]):
        return finish()
    step("agent off", "agent off", [r"Agent unregistered|No agent is registered"])
    step(f"agent {args.agent}", f"agent {args.agent}", [r"Agent registered"], [r"Failed to register agent[^\n]*|Invalid argument"])
    step("default agent", "default-agent", [r"Default agent request successful"], [r"Failed to request default agent[^\n]*"])
    if args.bonded:
        step("bonded already", f"info {address}", [r"Bonded: yes"], [r"Bonded: no", r"Device [^\n]* not available"])
    else:
        if not step("scan", "scan on", [rf"Device {address}"]):
            return finish()
        step("scan off", "scan off", [r"Discovery stopped"])
        if not pair(session, address, monitor):
            return finish()
        step("paired and bonded", f"info {address}", [r"Paired: yes[\s\S]*Bonded: yes"], [r"Paired: no", r"Bonded: no"])
    if not step("connect", f"connect {address}", [r"Connection successful"], [r"Failed to connect[^\n]*"]):
        return finish()
    # bluetoothd reports the end of service discovery as "[CHG] Device ... ServicesResolved: yes",
    # which may have come already (during pairing); `info` does not show it.
    session.wait_for([r"(?!)"], 1)  # read what is pending
    states = re.findall(r"ServicesResolved: (yes|no)", session.text)
    if states and states[-1] == "yes":
        report("services resolved", True, detail="already")
    else:
        step("services resolved", None, [r"ServicesResolved: yes"], [r"Connected: no"])
    step("gatt menu", "menu gatt", [r"select-attribute"])
    for item in args.read:
        uuid, _, text = item.partition("=")
        if not session.select(uuid, address):
            continue
        started_at = len(session.text)
        if step(f"read {uuid}", "read", [VALUE_LINE], [r"Failed to read[^\n]*"]):
            match = re.search(VALUE_LINE, session.text[started_at:])
            value = bytes.fromhex(match.group(1).replace(" ", "")) if match else b""
            ok = value == text.encode()
            session.failures += not ok
            report(f"value of {uuid}", ok, value=value.decode(errors="replace"), expected=text)
    for item in args.write:
        uuid, _, data = item.partition("=")
        if not session.select(uuid, address):
            continue
        octets = " ".join(f"0x{data[i:i + 2]}" for i in range(0, len(data), 2))
        # bluetoothctl prints nothing when a write succeeds, only "Failed to write: ..." when it fails.
        step(f"write {data} to {uuid}", f'write "{octets}"', [], [r"Failed to write[^\n]*"], timeout=3, absent_is_ok=True)
    step("main menu", "back", [r"Return to main menu|# "])
    step("disconnect", f"disconnect {address}", [r"Successful disconnected"], [r"Failed to disconnect[^\n]*"])
    return finish()


def pair(session: Session, address: str, monitor: Monitor) -> bool:
    """`pair ADDRESS`, answering the agent until "Pairing successful" or a failure."""
    session.mark = len(session.text)
    session.send(f"pair {address}")
    outcomes = [r"Pairing successful", r"Failed to pair[^\n]*", PASSKEY_SHOWN, CONFIRM, AUTHORIZE, ENTER]
    seen_before: set[str] = set()  # bluetoothctl prints a pending question again after other output
    while True:
        index, seen = session.wait_for(outcomes, session.timeout)
        if index == 0:
            report("pair", True, detail=seen.strip()[-300:])
            return True
        question = re.search(outcomes[index], seen).group(0) if index >= 2 else ""
        if index in (2, 3, 4) and question in seen_before:
            continue
        seen_before.add(question)
        if index == 2:
            report("passkey shown", True, passkey=int(re.search(PASSKEY_SHOWN, seen).group(1)))
        elif index == 3:
            report("confirm", True, passkey=int(re.search(CONFIRM, seen).group(1)))
            session.send("yes")
        elif index == 4:
            report("authorize", True)
            session.send("yes")
        else:
            if index == 5:
                session.send("")  # this script cannot type a passkey: pairing fails, and says so below
                seen += " [the agent was asked to type a passkey; use an agent that displays]"
            session.failures += 1
            what = "no answer" if index < 0 else "failed"
            report("pair", False, detail=f"{what}: {seen.strip()[-300:]}; btmon: {monitor.excerpt(12)}")
            return False


def check_trace(session: Session, connections: list[dict], bonded: bool, monitor: Monitor) -> None:
    """Pairing on the first connection, or (bonded) encryption from the stored key and no SMP."""
    first = connections[0] if connections else None
    if first is None:
        ok, detail = False, "btmon saw no LE connection"
    elif bonded:
        ok = not first["pairing_pdus"] and first["start_encryption"] >= 1 and "enabled" in first["encryption_changes"]
        detail = f"SMP {first['smp']}, LE Start Encryption x{first['start_encryption']}, Encryption Change {first['encryption_changes']}"
    else:
        ok = first["pairing_requests"] == 1 and not first["pairing_failed"] and "enabled" in first["encryption_changes"]
        detail = f"SMP {first['smp']}, failures {first['pairing_failed']}, Encryption Change {first['encryption_changes']}"
    if not ok:
        detail += f"; trace: {monitor.excerpt()}"
    session.failures += not ok
    report("encrypted from the bond, no pairing (btmon)" if bonded else "paired and encrypted (btmon)", ok, detail=detail)


if __name__ == "__main__":
    sys.exit(main())
