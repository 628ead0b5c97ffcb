"""The guest's command agent: runs the host's commands and streams their output back.

Speaks JSON lines on a raw serial port (ttyS2, a socket on the host side):
  host -> guest  {"id": 1, "run": "shell command", "timeout": 60}   start a command (sh -c)
                 {"id": 1, "stdin": "text"}                          write to its standard input
                 {"id": 1, "kill": true}                             SIGTERM it (SIGKILL 3 s later)
  guest -> host  {"event": "hello", "uptime": 12.3}                  once, when the agent starts
                 {"id": 1, "line": "...", "stream": "stdout"}        each output line, as it comes
                 {"id": 1, "exit": 0}                                 when it ends (-9: timed out)
Only the Python standard library is used.
"""
import json
import os
import signal
import subprocess
import sys
import termios
import threading
import tty


class Agent:
    def __init__(self, port: str) -> None:
        self.fd = os.open(port, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.fd, termios.TCSANOW)
        attributes = termios.tcgetattr(self.fd)
        attributes[2] |= termios.CLOCAL  # the host end has no modem lines
        termios.tcsetattr(self.fd, termios.TCSANOW, attributes)
        self.lock = threading.Lock()
        self.processes: dict[int, subprocess.Popen] = {}

    def send(self, message: dict) -> None:
        data = (json.dumps(message) + "\n").encode()
        with self.lock:
            while data:
                data = data[os.write(self.fd, data):]

    def start(self, ident: int, command: str, timeout: float) -> None:
        process = subprocess.Popen(
            ["/bin/sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True, cwd="/tmp")
        self.processes[ident] = process
        readers = [threading.Thread(target=self.pump, args=(ident, stream, name), daemon=True)
                   for stream, name in ((process.stdout, "stdout"), (process.stderr, "stderr"))]
        for reader in readers:
            reader.start()

        def wait() -> None:
            try:
                status = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.terminate(process)
                process.wait()
                status = -9
            for reader in readers:
                reader.join(5)
            self.processes.pop(ident, None)
            self.send({"id": ident, "exit": status})

        threading.Thread(target=wait, daemon=True).start()

    def pump(self, ident: int, stream, name: str) -> None:
        for raw in iter(stream.readline, b""):
            self.send({"id": ident, "line": raw.decode(errors="replace").rstrip("\n"), "stream": name})

    @staticmethod
    def terminate(process: subprocess.Popen) -> None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            process.wait(3)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def handle(self, message: dict) -> None:
        ident = message.get("id", 0)
        if "run" in message:
            self.start(ident, message["run"], float(message.get("timeout", 120)))
        elif "stdin" in message and ident in self.processes:
            process = self.processes[ident]
            try:
                process.stdin.write(message["stdin"].encode())
                process.stdin.flush()
            except (BrokenPipeError, ValueError):
                pass
        elif message.get("kill") and ident in self.processes:
            threading.Thread(target=self.terminate, args=(self.processes[ident],), daemon=True).start()

    def serve(self) -> None:
        with open("/proc/uptime") as uptime:
            self.send({"event": "hello", "uptime": float(uptime.read().split()[0])})
        buffer = b""
        while True:
            chunk = os.read(self.fd, 4096)
            if not chunk:
                continue
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                line = line.strip()
                if not line:
                    continue
                try:
                    self.handle(json.loads(line))
                except (ValueError, OSError) as error:
                    self.send({"event": "error", "error": f"bad request {line[:80]!r}: {error}"})


if __name__ == "__main__":
    Agent(sys.argv[1] if len(sys.argv) > 1 else "/dev/ttyS2").serve()
