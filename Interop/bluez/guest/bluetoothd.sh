#!/bin/sh
# bluetoothd.sh start|stop — BlueZ's daemon in the test guest.
#   start: runs bluetoothd (if not running) and waits until hci0 is powered through it.
#   stop:  ends bluetoothd and takes hci0 down, so a program can open the HCI user channel
#          (hci-socket:0), which needs the adapter down and unmanaged.
case "$1" in
start)
    if ! pgrep -x bluetoothd >/dev/null; then
        setsid /usr/libexec/bluetooth/bluetoothd --nodetach >>/tmp/bluetoothd.log 2>&1 </dev/null &
    fi
    for _ in $(seq 1 100); do
        bluetoothctl show 2>/dev/null | grep -q "Powered: yes" && exit 0
        bluetoothctl power on >/dev/null 2>&1
        sleep 0.2
    done
    echo "bluetoothd.sh: hci0 not powered after 20 s: $(tail -3 /tmp/bluetoothd.log)" >&2
    exit 1;;
stop)
    pkill -x bluetoothd
    for _ in $(seq 1 50); do pgrep -x bluetoothd >/dev/null || break; sleep 0.1; done
    hciconfig hci0 down;;
*)
    echo "usage: bluetoothd.sh start|stop" >&2; exit 2;;
esac
