#!/usr/bin/env bash
# Builds the Debian 12 (bookworm) guest that the BlueZ interop tests boot under qemu:
# debootstrap from Debian's packages (kernel, BlueZ, D-Bus, Python with python3-dbus/python3-gi),
# Bleak from PyPI installed offline into the image, and a boot stub that mounts the shared folder
# (tag "bluetide", this repo's Interop/bluez/guest plus the run's files) and runs its init. The guest's
# scripts live in the shared folder, so editing them needs no rebuild.
#
# The real clients our users run, from PyPI, each in the environment it needs (wheels downloaded
# on the host, pinned with every dependency, installed offline):
#   /opt/colmi        colmi-r02-client (Python 3.11, its own older Bleak 0.22)
#   /opt/pycycling    pycycling (Python 3.11, Bleak 3.1)
#   /opt/ble-serial   ble-serial (Python 3.11, Bleak 3.1)
#   /opt/trixie       a Debian 13 (trixie) root with Python 3.13, and in it /opt/pyftms: pyftms
#                     0.4 needs Python >= 3.12 (bookworm has 3.11, and the last pyftms for 3.11 is
#                     0.2.20, a different API). guest/in-trixie.sh enters it with the guest's
#                     D-Bus socket, so pyftms talks to the guest's bluetoothd (BlueZ 5.66).
# colmi-r02-client 0.1.0 asks for Python < 3.13, so it cannot share trixie's 3.13 with pyftms.
#
# The Debian mirror is the one this machine's apt uses (/etc/apt/sources.list, sources.list.d/*.list
# and deb822 *.sources): the first "deb" entry of a Debian suite debootstrap knows.
# BLUETIDE_BLUEZ_MIRROR=URL overrides it.
#
# Output (in $BLUETIDE_BLUEZ_CACHE, default /var/cache/bluetide-bluez):
#   vmlinuz, initrd.img, rootfs.ext4, and stamp (the inputs' hash; a matching stamp skips the build).
# Usage: Interop/bluez/build-image.sh [--force | --print-mirror]
#   --print-mirror: print the Debian mirror it would use and exit (BLUETIDE_APT_ETC stands for /etc/apt).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${BLUETIDE_BLUEZ_CACHE:-/var/cache/bluetide-bluez}"
suite=bookworm
bleak_version=3.1.0
packages=linux-image-amd64,bluez,dbus,python3,python3-dbus,python3-gi,python3-pexpect,python3-pip,python3-venv,libsqlite3-0,libstdc++6,kmod,util-linux,procps
# The Debian 13 root for pyftms: only its Python.
client_suite=trixie
client_packages=python3,python3-venv
# The clients' environments: every wheel pinned (what pip resolved for these clients), so a new
# upload to PyPI cannot change the image. "ENV PYTHON: PINS" per line.
client_envs=(
    "colmi 3.11: colmi-r02-client==0.1.0 asyncclick==8.4.2.1 bleak==0.22.3 dbus-fast==2.46.4 typing-extensions==4.16.0"
    "pycycling 3.11: pycycling==0.4.1 bleak==3.1.0 dbus-fast==5.2.0 typing-extensions==4.16.0"
    "ble-serial 3.11: ble-serial==3.0.0 bleak==3.1.0 coloredlogs==15.0.1 humanfriendly==10.0 dbus-fast==5.2.0 typing-extensions==4.16.0"
    "pyftms 3.13: pyftms==0.4.15 bleak==3.1.0 bleak-retry-connector==4.7.1 bluetooth-adapters==2.4.0 aiooui==0.1.11 usb-devices==0.5.1 uart-devices==0.1.1 dbus-fast==5.2.0 typing-extensions==4.16.0"
)

# The mirror: BLUETIDE_BLUEZ_MIRROR, else the first Debian "deb" source of this machine's apt.
apt_mirror() {
    local etc="${BLUETIDE_APT_ETC:-/etc/apt}"
    python3 - "$etc/sources.list" "$etc"/sources.list.d/* <<'PY'
import os, sys
# Suites debootstrap knows (a vendor's "nodistro" or "cloud-sdk-bookworm" is no Debian suite).
scripts = "/usr/share/debootstrap/scripts"
known = set(os.listdir(scripts)) if os.path.isdir(scripts) else {
    "bullseye", "bookworm", "trixie", "forky", "sid", "oldstable", "stable", "testing", "unstable"}
def entries(path):
    text = open(path, errors="replace").read()
    if path.endswith(".sources"):  # deb822: paragraphs of "Field: value"
        for paragraph in text.split("\n\n"):
            fields, last = {}, None
            for line in paragraph.splitlines():
                if line.startswith("#") or not line.strip():
                    continue
                if line[0] in " \t" and last:
                    fields[last] += " " + line.strip()
                    continue
                key, _, value = line.partition(":")
                last = key.strip().lower()
                fields[last] = value.strip()
            if fields.get("enabled", "yes").lower() == "no":
                continue
            for kind in fields.get("types", "").split():
                for uri in fields.get("uris", "").split():
                    for suite in fields.get("suites", "").split():
                        yield kind, uri, suite
    elif path.endswith(".list") or os.path.basename(path) == "sources.list":
        for line in text.splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) >= 3 and words[0].startswith("deb"):
                if words[1].startswith("["):  # [option=value ...]
                    while words and not words[1].endswith("]"):
                        words.pop(1)
                    words.pop(1)
                if len(words) >= 3:
                    yield words[0], words[1], words[2]
for path in sys.argv[1:]:
    if not os.path.isfile(path):
        continue
    for kind, uri, suite in entries(path):
        if kind == "deb" and uri.split(":", 1)[0] in ("http", "https", "file") and suite in known:
            print(uri.rstrip("/"))
            sys.exit(0)
sys.exit(1)
PY
}
if [[ -n "${BLUETIDE_BLUEZ_MIRROR:-}" ]]; then
    mirror="$BLUETIDE_BLUEZ_MIRROR"
elif ! mirror="$(apt_mirror)"; then
    echo "build-image: no Debian \"deb\" source in /etc/apt/sources.list or /etc/apt/sources.list.d/; set BLUETIDE_BLUEZ_MIRROR to a Debian mirror's URL (the folder with dists/ and pool/)" >&2
    exit 2
fi
if [[ "${1:-}" == "--print-mirror" ]]; then
    echo "$mirror"
    exit 0
fi

# The stamp covers everything that goes into the image, so editing the guest files rebuilds it.
stamp="$( { echo "$suite $mirror $bleak_version $packages $client_suite $client_packages"; cat "$here/build-image.sh"; } | sha256sum | cut -c1-16)"
if [[ "${1:-}" != "--force" && -f "$cache/stamp" && "$(cat "$cache/stamp")" == "$stamp" \
      && -f "$cache/rootfs.ext4" && -f "$cache/vmlinuz" && -f "$cache/initrd.img" ]]; then
    echo "bluez guest image is up to date in $cache (stamp $stamp)"
    exit 0
fi
for tool in debootstrap mkfs.ext4 python3; do
    command -v "$tool" >/dev/null || { echo "build-image: $tool is missing; install it (apt-get install debootstrap e2fsprogs python3)" >&2; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "build-image: debootstrap needs root; run as root" >&2; exit 1; }

started=$(date +%s)
mkdir -p "$cache"
work="$(mktemp -d "$cache/build.XXXXXX")"
trap 'umount -l "$work/root/proc" 2>/dev/null || true; rm -rf "$work"' EXIT
root="$work/root"

echo "== debootstrap $suite ($packages) and $client_suite ($client_packages) from $mirror"
# The two roots are made at once (mostly waiting for downloads); trixie's goes into the guest's /opt/trixie.
debootstrap --variant=minbase --include="$client_packages" "$client_suite" "$work/trixie" "$mirror" >"$work/debootstrap-$client_suite.log" 2>&1 &
client_root_pid=$!
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { wait "$client_root_pid" || true; tail -20 "$work/debootstrap.log" >&2; echo "build-image: debootstrap $suite failed (log above)" >&2; exit 1; }
wait "$client_root_pid" \
    || { tail -20 "$work/debootstrap-$client_suite.log" >&2; echo "build-image: debootstrap $client_suite failed (log above)" >&2; exit 1; }
mv "$work/trixie" "$root/opt/trixie"

echo "== Bleak $bleak_version from PyPI (downloaded on the host, installed offline in the image)"
mkdir -p "$root/tmp/wheels"
python3 -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --python-version 3.11 --platform manylinux_2_36_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    -d "$root/tmp/wheels" "bleak==$bleak_version"
env -u PIP_FIND_LINKS -u PIP_CERT PIP_CONFIG_FILE=/dev/null chroot "$root" python3 -m pip install --quiet --disable-pip-version-check --no-index --break-system-packages \
    --find-links /tmp/wheels "bleak==$bleak_version"
rm -rf "$root/tmp/wheels"

echo "== the clients from PyPI (downloaded on the host, each installed offline in its own environment)"
for line in "${client_envs[@]}"; do
    name="${line%% *}"; rest="${line#* }"; python="${rest%%:*}"; read -r -a pins <<<"${rest#*: }"
    if [[ "$name" == pyftms ]]; then base="$root/opt/trixie"; platform=manylinux_2_41_x86_64; else base="$root"; platform=manylinux_2_36_x86_64; fi
    mkdir -p "$base/tmp/wheels"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --python-version "$python" --platform "$platform" --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
        -d "$base/tmp/wheels" "${pins[@]}"
    # pip resolves again in the image, offline: a pin missing from the list fails here.
    env -u PIP_FIND_LINKS -u PIP_CERT PIP_CONFIG_FILE=/dev/null chroot "$base" sh -c \
        "python3 -m venv /opt/$name && /opt/$name/bin/python -m pip install --quiet --disable-pip-version-check --no-index --find-links /tmp/wheels $(printf "'%s' " "${pins[@]}")" \
        || { echo "build-image: installing $name (${pins[*]}) failed" >&2; exit 1; }
    rm -rf "$base/tmp/wheels"
    echo "   /opt/$name: ${pins[0]} on $(chroot "$base" /opt/$name/bin/python --version)"
done

echo "== guest files"
cat >"$root/usr/local/sbin/bluetide-boot" <<'STUB'
#!/bin/sh
# PID 1 of the test guest: mount the basics and the shared folder, then run the shared folder's init.
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev 2>/dev/null
modprobe 9pnet_virtio; modprobe 9p
mkdir -p /share && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 bluetide /share \
    && exec /bin/sh /share/guest/init
echo "bluetide-boot: no shared folder tagged bluetide; starting a shell" >/dev/console
exec /bin/sh </dev/console >/dev/console 2>&1
STUB
chmod 0755 "$root/usr/local/sbin/bluetide-boot"
echo bluez-guest >"$root/etc/hostname"
chroot "$root" passwd -d root >/dev/null
# 9p (the shared folder) and virtio in the initramfs too, so a root on 9p would also work.
printf '9p\n9pnet_virtio\nvirtio_pci\nvirtio_blk\n' >>"$root/etc/initramfs-tools/modules"
mount -t proc proc "$root/proc"
chroot "$root" update-initramfs -u >/dev/null 2>&1
umount "$root/proc"
cp -L "$root/vmlinuz" "$work/vmlinuz"
cp -L "$root/initrd.img" "$work/initrd.img"
rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"* \
    "$root/opt/trixie/var/cache/apt/archives/"*.deb "$root/opt/trixie/var/lib/apt/lists/"*

echo "== rootfs.ext4"
# Sized from the tree with room to spare (sparse: only what is written takes disk).
size_mb=$(( ( $(du -sm "$root" | cut -f1) * 5 / 4 + 1024 ) / 256 * 256 ))
mkfs.ext4 -q -F -L bluez-guest -d "$root" "$work/rootfs.ext4" "${size_mb}M"
mv "$work/vmlinuz" "$work/initrd.img" "$work/rootfs.ext4" "$cache/"
echo "$stamp" >"$cache/stamp"
echo "bluez guest image built in $cache in $(( $(date +%s) - started )) s (stamp $stamp)"
