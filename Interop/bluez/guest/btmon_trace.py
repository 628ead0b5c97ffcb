"""btmon in the background, and what its trace says about pairing and encryption on each LE
connection: the SMP PDUs, the LTK requests and replies, LE Start Encryption, Encryption Change.

  monitor = Monitor("/tmp/trace.txt")   # starts btmon, writing its decoded text there
  ...
  monitor.connections()                 # one dict per LE connection, in order (see Connection)
  monitor.summary()                     # {"event": "btmon", "connections": [...]} for a JSON line
  monitor.excerpt()                     # the security-related lines, for a failure message
  monitor.stop()

  python3 btmon_trace.py CAPTURE.btsnoop   # the same summary of a btsnoop file (e.g. Bluetide's
                                           # +snoop:FILE capture), decoded by `btmon -r`

btmon prints one block per packet: a header line at column 0 ("< HCI Command: ...", "> ACL Data
RX: ...", "@ MGMT Event: ...") and its decoded fields indented below it.
"""
import json
import re
import shutil
import subprocess
import sys
import time

# Opcodes as btmon prints them in command headers ("(0x08|0x001a)"): names are cut to fit.
START_ENCRYPTION = "(0x08|0x0019)"
LTK_REPLY = "(0x08|0x001a)"
LTK_NEGATIVE_REPLY = "(0x08|0x001b)"
SECURITY_LINE = re.compile(
    r"SMP: |Long Term Key|Start Encryption|\(0x08\|0x001[9ab]\)|Encryption Change|Encryption:|Key Refresh|Reason:"
    r"|Connection Complete|Disconnect Complete|Authentication requirement|IO capability")


class Trace:
    """btmon's decoded text in the file at `path`."""

    def __init__(self, path: str) -> None:
        self.path = path

    def text(self) -> str:
        with open(self.path, errors="replace") as handle:
            return handle.read()

    def blocks(self) -> list[tuple[str, str]]:
        """(header, body) of each packet btmon decoded."""
        result = []
        for line in self.text().splitlines():
            if line[:1] in "<>@=" and line[:2] != "  ":
                result.append([line, ""])
            elif result:
                result[-1][1] += line.strip() + "\n"
        return [(header, body) for header, body in result]

    def connections(self) -> list[dict]:
        """Per LE connection (from each successful LE (Enhanced) Connection Complete): the peer,
        the SMP PDUs seen (`smp`: how many of each kind, sent or received; `pairing_pdus`: their kinds, Security Request
        aside; `pairing_requests`: how many Pairing Requests), LTK requests and replies, LE Start Encryption
        commands, and each Encryption Change ("enabled" or the failure status)."""
        found: list[dict] = []
        for header, body in self.blocks():
            if "LE Meta Event" in header and "Connection Complete" in body and "Status: Success" in body:
                address = re.search(r"Peer address: ([0-9A-F:]{17})", body)
                found.append({"peer": address.group(1) if address else None, "smp": [], "pairing_failed": [],
                              "ltk_requests": 0, "ltk_replies": 0, "ltk_negative_replies": 0,
                              "start_encryption": 0, "encryption_changes": []})
                continue
            if not found:
                continue
            current = found[-1]
            if "ACL Data" in header:
                for pdu in re.findall(r"SMP: ([A-Za-z ]+?) \(0x", body):
                    current["smp"].append(pdu)
                reason = re.search(r"SMP: Pairing Failed[\s\S]*?Reason: ([^\n]+)", body)
                if reason:
                    current["pairing_failed"].append(reason.group(1))
            elif "LE Meta Event" in header and "LE Long Term Key Request (0x05)" in body:
                current["ltk_requests"] += 1
            elif header.startswith("< HCI Command") and START_ENCRYPTION in header:
                current["start_encryption"] += 1
            elif header.startswith("< HCI Command") and LTK_REPLY in header:
                current["ltk_replies"] += 1
            elif header.startswith("< HCI Command") and LTK_NEGATIVE_REPLY in header:
                current["ltk_negative_replies"] += 1
            elif "HCI Event: Encryption Change" in header:
                enabled = "Status: Success" in body and "Encryption: Enabled" in body
                status = re.search(r"Status: ([^\n]+)", body)
                current["encryption_changes"].append("enabled" if enabled else (status.group(1) if status else body.strip()))
        for connection in found:
            pdus = connection["smp"]
            connection["pairing_requests"] = pdus.count("Pairing Request")
            # Everything but a peripheral's Security Request (which a bonded link answers by encrypting).
            connection["pairing_pdus"] = sorted({pdu for pdu in pdus if pdu != "Security Request"})
            connection["smp"] = {pdu: pdus.count(pdu) for pdu in pdus}  # counts, in order of first sight
        return found

    def summary(self) -> dict:
        return {"event": "btmon", "connections": self.connections()}

    def excerpt(self, count: int = 30) -> str:
        """The last `count` security-related lines of the trace, joined with " | "."""
        lines = [line.strip() for line in self.text().splitlines() if SECURITY_LINE.search(line)]
        return " | ".join(lines[-count:])


class Monitor(Trace):
    """btmon running live (the monitor socket), writing its text to `path`."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.log = open(path, "w+")
        self.process = subprocess.Popen(["stdbuf", "-oL", "btmon", "--no-pager"], stdout=self.log, stderr=subprocess.STDOUT)
        time.sleep(0.3)  # btmon opens the monitor socket before the first packet of interest

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(3)
        except subprocess.TimeoutExpired:
            self.process.kill()


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: btmon_trace.py CAPTURE.btsnoop", file=sys.stderr)
        return 2
    text_path = "/tmp/btmon-read.txt"
    # btmon takes a short read() for the end of the file, and reads from the 9p shared folder
    # come in pieces: read a local copy.
    capture = "/tmp/btmon-read.btsnoop"
    shutil.copyfile(sys.argv[1], capture)
    with open(text_path, "w") as text:
        status = subprocess.run(["stdbuf", "-oL", "btmon", "--no-pager", "-r", capture],
                                stdout=text, stderr=subprocess.STDOUT).returncode
    trace = Trace(text_path)
    summary = trace.summary()
    if status != 0:
        summary["btmon_status"] = status
        print(f"btmon_trace.py: btmon -r {sys.argv[1]} ended with status {status} after {len(trace.text())} characters;"
              f" the summary covers what it decoded", file=sys.stderr)
    print(json.dumps(summary), flush=True)
    return 0 if summary["connections"] else 1


if __name__ == "__main__":
    sys.exit(main())
