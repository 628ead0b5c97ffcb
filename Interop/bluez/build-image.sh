#!/usr/bin/env bash
# Builds the Debian 12 (bookworm) guest that the BlueZ interop tests boot under qemu:
# debootstrap from Debian's packages (kernel, BlueZ, D-Bus, Python with python3-dbus/python3-gi),
# Bleak from PyPI installed offline into the image, and a boot stub that mounts the shared folder
# (tag "bluetide", this repo's Interop/bluez/guest plus the run's files) and runs its init. The guest's
# scripts live in the shared folder, so editing them needs no rebuild.
#
# Output (in $BLUETIDE_BLUEZ_CACHE, default /var/cache/bluetide-bluez):
#   vmlinuz, initrd.img, rootfs.ext4, and stamp (the inputs' hash; a matching stamp skips the build).
# Usage: Interop/bluez/build-image.sh [--force]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${BLUETIDE_BLUEZ_CACHE:-/var/cache/bluetide-bluez}"
suite=bookworm
mirror="${BLUETIDE_BLUEZ_MIRROR:-http://deb.debian.org/debian}"
bleak_version=3.1.0
packages=linux-image-amd64,bluez,dbus,python3,python3-dbus,python3-gi,python3-pexpect,python3-pip,libsqlite3-0,libstdc++6,kmod,util-linux,procps

# The stamp covers everything that goes into the image, so editing the guest files rebuilds it.
stamp="$( { echo "$suite $mirror $bleak_version $packages"; cat "$here/build-image.sh"; } | sha256sum | cut -c1-16)"
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

echo "== debootstrap $suite ($packages)"
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; echo "build-image: debootstrap failed (log above)" >&2; exit 1; }

echo "== Bleak $bleak_version from PyPI (downloaded on the host, installed offline in the image)"
mkdir -p "$root/tmp/wheels"
python3 -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --python-version 3.11 --platform manylinux_2_36_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    -d "$root/tmp/wheels" "bleak==$bleak_version"
env -u PIP_FIND_LINKS -u PIP_CERT PIP_CONFIG_FILE=/dev/null chroot "$root" python3 -m pip install --quiet --disable-pip-version-check --no-index --break-system-packages \
    --find-links /tmp/wheels "bleak==$bleak_version"
rm -rf "$root/tmp/wheels"

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
rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*

echo "== rootfs.ext4"
mkfs.ext4 -q -F -L bluez-guest -d "$root" "$work/rootfs.ext4" 1536M
mv "$work/vmlinuz" "$work/initrd.img" "$work/rootfs.ext4" "$cache/"
echo "$stamp" >"$cache/stamp"
echo "bluez guest image built in $cache in $(( $(date +%s) - started )) s (stamp $stamp)"
