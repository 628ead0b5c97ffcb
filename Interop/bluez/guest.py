#!/usr/bin/env python3
"""Boots the Debian 12 BlueZ guest under qemu with its controller on a `bluetide controllers` port.

The guest's second serial port (ttyS1) is a TCP connection to HOST:PORT (one of the ports that
`bluetide controllers` prints); in the guest `btattach -P h4` makes it hci0 and bluetoothd runs on
it. Nothing sits between the guest's kernel and the controller: qemu copies the bytes.

  guest.py shell --hci 127.0.0.1:9000     a root shell on this terminal (Ctrl-A X quits qemu)
  guest.py agent --hci 127.0.0.1:9000     the tests' mode: JSON lines on stdin/stdout relayed to
                                          the guest's agent (see guest/agent.py); stdin's end
                                          stops the guest

The image comes from build-image.sh (default /var/cache/bluetide-bluez, or $BLUETIDE_BLUEZ_CACHE).
KVM is used when the CPU offers it, else qemu's software emulation (TCG). Only the standard library is used.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def image_dir() -> str:
    return os.environ.get("BLUETIDE_BLUEZ_CACHE", "/var/cache/bluetide-bluez")


def accelerator() -> str:
    """kvm when the CPU offers virtualisation (vmx/svm) and /dev/kvm opens, else tcg (software).

    A /dev/kvm without vmx/svm exists on some cloud machines, and qemu aborts on it, so the CPU
    flags are checked too. BLUETIDE_BLUEZ_ACCEL=kvm|tcg overrides."""
    chosen = os.environ.get("BLUETIDE_BLUEZ_ACCEL")
    if chosen in ("kvm", "tcg"):
        return chosen
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = set(cpuinfo.read().split())
    except OSError:
        flags = set()
    return "kvm" if {"vmx", "svm"} & flags and os.access("/dev/kvm", os.R_OK | os.W_OK) else "tcg"


def fail(message: str) -> None:
    print(json.dumps({"event": "error", "error": message}), flush=True)
    print(f"guest.py: {message}", file=sys.stderr, flush=True)
    sys.exit(2)


def qemu_command(args, share: str, mode: str, agent_socket: str | None, console: str | None) -> list[str]:
    images = args.image_dir
    for name in ("vmlinuz", "initrd.img", "rootfs.ext4"):
        if not os.path.exists(os.path.join(images, name)):
            fail(f"no guest image in {images} ({name} missing); build it with Interop/bluez/build-image.sh")
    host, _, port = args.hci.rpartition(":")
    if not host or not port.isdigit():
        fail(f"--hci {args.hci}: expected HOST:PORT of a bluetide controllers port, e.g. 127.0.0.1:9000")
    # no_timer_check: under software emulation on a busy host the kernel's early IO-APIC timer
    # check can miss its ticks and panic ("IO-APIC + timer doesn't work"); the timer is fine.
    append = (f"root=/dev/vda rw console=ttyS0 quiet panic=-1 no_timer_check init=/usr/local/sbin/bluetide-boot "
              f"bluetide.mode={mode}")
    command = [
        args.qemu, "-accel", args.accel, "-cpu", "host" if args.accel == "kvm" else "max", "-m", str(args.memory), "-smp", "1",
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        "-kernel", os.path.join(images, "vmlinuz"), "-initrd", os.path.join(images, "initrd.img"),
        "-append", append,
        "-drive", f"file={os.path.join(images, 'rootfs.ext4')},format=raw,if=virtio,snapshot=on",
        "-virtfs", f"local,path={share},mount_tag=bluetide,security_model=none,id=share",
    ]
    if args.swift_lib:
        command += ["-virtfs", f"local,path={args.swift_lib},mount_tag=swiftlib,security_model=none,readonly=on,id=swiftlib"]
    if mode == "shell":
        command += ["-serial", "mon:stdio"]
    else:
        command += ["-chardev", f"file,id=console,path={console}", "-serial", "chardev:console", "-monitor", "none"]
    command += ["-chardev", f"socket,id=hci,host={host},port={port},nodelay=on", "-serial", "chardev:hci"]
    if agent_socket:
        command += ["-chardev", f"socket,id=agent,path={agent_socket},server=on,wait=off", "-serial", "chardev:agent"]
    return command


def prepare_share(args, scratch: str) -> str:
    share = args.share or os.path.join(scratch, "share")
    os.makedirs(share, exist_ok=True)
    shutil.copytree(os.path.join(HERE, "guest"), os.path.join(share, "guest"), dirs_exist_ok=True)
    return share


def run_shell(args) -> None:
    with tempfile.TemporaryDirectory(prefix="bluez-guest-") as scratch:
        share = prepare_share(args, scratch)
        command = qemu_command(args, share, "shell", None, None)
        print(f"booting the guest (controller {args.hci}); Ctrl-A X quits", file=sys.stderr)
        sys.exit(subprocess.call(command))


def run_agent(args) -> None:
    with tempfile.TemporaryDirectory(prefix="bluez-guest-") as scratch:
        share = prepare_share(args, scratch)
        agent_socket = os.path.join(scratch, "agent.sock")
        console = args.console or os.path.join(scratch, "console.log")
        started = time.monotonic()
        qemu = subprocess.Popen(qemu_command(args, share, "agent", agent_socket, console),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        connection = None
        while connection is None and time.monotonic() - started < 15:
            if qemu.poll() is not None:
                break
            try:
                connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                connection.connect(agent_socket)
            except OSError:
                connection = None
                time.sleep(0.05)
        if connection is None:
            output = qemu.stdout.read().decode(errors="replace").strip() if qemu.poll() is not None else ""
            qemu.kill()
            fail(f"qemu did not start: {output or 'no agent socket within 15 s'}")

        def console_tail() -> list[str]:
            try:
                with open(console, errors="replace") as handle:
                    return handle.read().splitlines()[-30:]
            except OSError:
                return []

        def from_guest() -> None:
            buffer = b""
            while True:
                try:
                    chunk = connection.recv(65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    return
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    text = line.decode(errors="replace").strip()
                    if text.startswith("{"):
                        if '"hello"' in text:
                            message = json.loads(text)
                            message["boot_seconds"] = round(time.monotonic() - started, 2)
                            message["accelerator"] = args.accel
                            text = json.dumps(message)
                        print(text, flush=True)

        def watch_qemu() -> None:
            status = qemu.wait()
            print(json.dumps({"event": "exit", "status": status, "console": console_tail()}), flush=True)
            os._exit(1)

        def on_signal(_number, _frame) -> None:
            qemu.kill()
            qemu.wait()
            shutil.rmtree(scratch, ignore_errors=True)
            os._exit(143)
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        threading.Thread(target=from_guest, daemon=True).start()
        threading.Thread(target=watch_qemu, daemon=True).start()
        print(json.dumps({"event": "started", "pid": qemu.pid, "console": console, "share": share}), flush=True)
        for line in sys.stdin:
            if line.strip():
                connection.sendall(line.strip().encode() + b"\n")
        # Standard input ended: the test (or user) is done with the guest.
        qemu.kill()
        qemu.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["shell", "agent"])
    parser.add_argument("--hci", required=True, help="HOST:PORT of a bluetide controllers port (tcp-server)")
    parser.add_argument("--share", help="folder shared with the guest as /share (default: a temporary one)")
    parser.add_argument("--swift-lib", help="the Swift runtime folder to share as /opt/swiftlib (for /share/bin/bluetide)")
    parser.add_argument("--console", help="file for the guest's console (agent mode)")
    parser.add_argument("--image-dir", default=image_dir(), help="where build-image.sh put the image")
    parser.add_argument("--memory", type=int, default=768, help="guest memory, MiB")
    parser.add_argument("--qemu", default="qemu-system-x86_64")
    args = parser.parse_args()
    args.accel = accelerator()
    if shutil.which(args.qemu) is None:
        fail(f"{args.qemu} not found; install it: apt-get install qemu-system-x86")
    run_shell(args) if args.mode == "shell" else run_agent(args)


if __name__ == "__main__":
    main()
