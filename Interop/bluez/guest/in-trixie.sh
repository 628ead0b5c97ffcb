#!/bin/sh
# Runs a command in the guest's Debian 13 (trixie) root, /opt/trixie: Python 3.13 for pyftms
# (/opt/pyftms/bin/python there), which needs Python >= 3.12 (bookworm has 3.11). The root
# shares the guest's D-Bus socket (so Bleak talks to the guest's bluetoothd), /proc, /sys, /dev,
# /tmp and the shared folder /share.
#   sh /share/guest/in-trixie.sh /opt/pyftms/bin/python /share/guest/pyftms_check.py --address ...
set -e
root=/opt/trixie
[ -x "$root/usr/bin/python3" ] || { echo "in-trixie: no Debian 13 root at $root; rebuild the image (Interop/bluez/build-image.sh)" >&2; exit 2; }
for dir in proc sys dev tmp run/dbus share; do
    mkdir -p "$root/$dir"
    mountpoint -q "$root/$dir" || mount --bind "/$dir" "$root/$dir"
done
exec chroot "$root" /usr/bin/env PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"
