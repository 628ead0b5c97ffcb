"""bluetoothctl on a pseudo-terminal (pexpect), driven step by step as if typed.

  session = Session(timeout=30)
  session.step("power on", "power on", [r"Changing power on succeeded"], [r"Failed to set power on"])

Each step sends a command (or nothing), waits for one of the expected patterns (passed) or of the
bad ones (failed) in the output that follows, and prints one JSON line
({"step": ..., "ok": ..., "seconds": ..., "detail": ...}). `failures` counts the failed steps.
"""
import json
import re
import time

import pexpect

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x01\x02\r]")
# A characteristic's value as `read` prints it: "Value:" then a hex dump line.
VALUE_LINE = r"Value:[^\n]*\n(?:[^\n]*# )?\s*((?:[0-9a-f]{2} )+)"


def report(name: str, ok: bool, **fields) -> None:
    print(json.dumps({"step": name, "ok": ok, **fields}), flush=True)


class Session:
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.child = pexpect.spawn("bluetoothctl", encoding="utf-8", timeout=timeout, dimensions=(50, 400))
        self.text = ""
        self.mark = 0
        self.failures = 0

    def send(self, line: str) -> None:
        self.child.sendline(line)

    def wait_for(self, patterns: list[str], timeout: float) -> tuple[int, str]:
        """Index of the first pattern found in the output since the mark (-1 on timeout or exit),
        and that output; the mark moves past the match."""
        deadline = time.monotonic() + timeout
        while True:
            window = self.text[self.mark:]
            found = [(match.end(), index) for index, pattern in enumerate(patterns)
                     if (match := re.search(pattern, window))]
            if found:
                end, index = min(found)
                self.mark += end
                return index, window[:end]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return -1, window
            try:
                self.text += ANSI.sub("", self.child.read_nonblocking(4096, timeout=min(remaining, 0.5)))
            except pexpect.TIMEOUT:
                pass
            except pexpect.EOF:
                return -1, window + " [bluetoothctl exited]"

    def step(self, name: str, command: str | None, expect: list[str], bad: list[str] = (),
             timeout: float | None = None, absent_is_ok: bool = False) -> bool:
        """Sends `command` and waits for one of `expect` (passed) or `bad` (failed). With
        `absent_is_ok`, seeing none of `bad` within `timeout` passes (a silent success)."""
        started = time.monotonic()
        self.mark = len(self.text)
        if command is not None:
            self.send(command)
        index, seen = self.wait_for(list(expect) + list(bad), timeout or self.timeout)
        if index < 0:
            ok = absent_is_ok
            detail = seen if ok else f"no answer within {timeout or self.timeout:.0f} s; output: {seen[-400:]}"
        else:
            ok = index < len(expect)
            detail = seen
        self.failures += not ok
        report(name, ok, seconds=round(time.monotonic() - started, 2), detail=detail.strip()[-500:])
        return ok

    def select(self, uuid: str, device: str | None = None) -> bool:
        """`select-attribute` in the gatt menu: of characteristic UUID, on `device` (an address)
        when given: a UUID alone picks the first match among every device bluetoothd knows,
        bonded ones included, so the attribute's path is looked up with `list-attributes`."""
        target = uuid
        if device is not None:
            self.mark = len(self.text)
            self.send(f"list-attributes {device}")
            self.wait_for([r"(?!)"], 1.5)  # the listing has no end marker: take what came in 1.5 s
            node = "dev_" + device.upper().replace(":", "_")
            path = re.search(rf"(/org/bluez/hci\d+/{node}/service[0-9a-f]+/char[0-9a-f]+)\s*\n\s*{uuid}", self.text[self.mark:])
            if path is None:
                self.failures += 1
                report(f"select {uuid}", False, detail=f"not among {device}'s attributes: {self.text[self.mark:][-400:]}")
                return False
            target = path.group(1)
        return self.step(f"select {uuid}", f"select-attribute {target}",
                         [re.escape(target) + r"[^\n]*\n[\s\S]*?char[0-9a-f]{4}\]# " if device else
                          uuid + r"[^\n]*\n[\s\S]*?char[0-9a-f]{4}\]# "], [r"No attribute"])

    def quit(self) -> None:
        self.send("quit")
        try:
            self.child.expect(pexpect.EOF, timeout=10)
        except pexpect.TIMEOUT:
            self.child.terminate(force=True)
