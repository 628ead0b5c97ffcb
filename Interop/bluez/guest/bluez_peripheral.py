"""A GATT server and an LE advertisement registered over BlueZ's D-Bus API (python3-dbus and
python3-gi from Debian), for Bluetide's central on the host to discover, read, write and subscribe.

Service 7e570001-… ("Bluetide test") with three characteristics:
  7e570002-…  read            the text "hello from BlueZ"
  7e570003-…  write, read     stores what is written (printed as {"event": "written", ...})
  7e570004-…  notify          a counter byte, sent every 0.2 s while a client is subscribed
  7e570005-…  encrypt-read    the text "encrypted from BlueZ" (needs an encrypted link: ATT 0x0F)
  7e570006-…  encrypt-authenticated-read  "authenticated from BlueZ" (needs MITM keys: ATT 0x05)
Advertises the local name given by --name and the service UUID. Prints {"event": "ready"} once
BlueZ accepted both registrations, then one line per write and subscription; exits 0 after a write
and a subscription with at least 3 notifications sent, 1 on --timeout.

Pairing (--agent CAPABILITY, e.g. NoInputNoOutput or DisplayOnly): registers a BlueZ agent with
that IO capability as the default agent, makes the adapter pairable, and prints one line per
agent call ({"event": "display passkey", "passkey": 123456}, {"event": "confirm", ...}, which it
accepts) and per device that becomes paired or bonded ({"event": "paired", "address": ...}). With
--exit-after-encrypted-reads N it exits 0 once the encrypted characteristic was read N times (one
per connection, say) and prints what btmon saw ({"event": "btmon", "pairing_requests": ...}).
"""
import argparse
import json
import signal
import sys

from btmon_trace import Monitor

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
GATT_MANAGER = "org.bluez.GattManager1"
ADVERTISING_MANAGER = "org.bluez.LEAdvertisingManager1"
PROPERTIES = "org.freedesktop.DBus.Properties"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
SERVICE_UUID = "7e570001-b5a3-f393-e0a9-e50e24dcca9e"
READ_UUID = "7e570002-b5a3-f393-e0a9-e50e24dcca9e"
WRITE_UUID = "7e570003-b5a3-f393-e0a9-e50e24dcca9e"
NOTIFY_UUID = "7e570004-b5a3-f393-e0a9-e50e24dcca9e"
ENCRYPTED_UUID = "7e570005-b5a3-f393-e0a9-e50e24dcca9e"
AUTHENTICATED_UUID = "7e570006-b5a3-f393-e0a9-e50e24dcca9e"
AGENT_MANAGER = "org.bluez.AgentManager1"
AGENT = "org.bluez.Agent1"
DEVICE = "org.bluez.Device1"


def emit(message: dict) -> None:
    print(json.dumps(message), flush=True)


class Failed(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.Failed"


class Application(dbus.service.Object):
    """The object manager BlueZ reads the GATT tree from."""

    def __init__(self, bus):
        self.path = "/org/bluetide/app"
        self.services = []
        super().__init__(bus, self.path)

    @dbus.service.method(OBJECT_MANAGER, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        objects = {}
        for service in self.services:
            objects[service.path] = service.properties()
            for characteristic in service.characteristics:
                objects[characteristic.path] = characteristic.properties()
        return objects


class Service(dbus.service.Object):
    def __init__(self, bus, index, uuid):
        self.path = f"/org/bluetide/app/service{index}"
        self.uuid = uuid
        self.characteristics = []
        super().__init__(bus, self.path)

    def properties(self):
        return {"org.bluez.GattService1": {
            "UUID": self.uuid, "Primary": True,
            "Characteristics": dbus.Array([c.path for c in self.characteristics], signature="o")}}

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[interface]


class Characteristic(dbus.service.Object):
    def __init__(self, bus, index, uuid, flags, service, value=b""):
        self.path = f"{service.path}/char{index}"
        self.uuid = uuid
        self.flags = flags
        self.service = service
        self.value = bytes(value)
        self.on_write = None
        self.on_subscribe = None
        self.on_read = None
        super().__init__(bus, self.path)

    def properties(self):
        return {"org.bluez.GattCharacteristic1": {
            "Service": dbus.ObjectPath(self.service.path), "UUID": self.uuid, "Flags": self.flags,
            "Descriptors": dbus.Array([], signature="o")}}

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[interface]

    @dbus.service.method("org.bluez.GattCharacteristic1", in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        if self.on_read:
            self.on_read(str(options.get("device", "")))
        return dbus.Array(self.value, signature="y")

    @dbus.service.method("org.bluez.GattCharacteristic1", in_signature="aya{sv}")
    def WriteValue(self, value, options):
        if "write" not in self.flags and "write-without-response" not in self.flags:
            raise Failed("not writable")
        self.value = bytes(value)
        if self.on_write:
            self.on_write(self.value)

    @dbus.service.method("org.bluez.GattCharacteristic1")
    def StartNotify(self):
        if self.on_subscribe:
            self.on_subscribe(True)

    @dbus.service.method("org.bluez.GattCharacteristic1")
    def StopNotify(self):
        if self.on_subscribe:
            self.on_subscribe(False)

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def notify(self, value: bytes):
        self.value = value
        self.PropertiesChanged("org.bluez.GattCharacteristic1", {"Value": dbus.Array(value, signature="y")}, [])


class Agent(dbus.service.Object):
    """A BlueZ pairing agent that answers for the user: it prints passkeys to show, accepts
    numeric comparisons and authorisations, and cannot type a passkey (RequestPasskey fails:
    register it with a capability that does not type, e.g. DisplayOnly or NoInputNoOutput)."""

    def __init__(self, bus):
        self.path = "/org/bluetide/agent"
        super().__init__(bus, self.path)

    @dbus.service.method(AGENT)
    def Release(self):
        pass

    @dbus.service.method(AGENT, in_signature="ouq")
    def DisplayPasskey(self, device, passkey, entered):
        if entered == 0:
            emit({"event": "display passkey", "device": str(device), "passkey": int(passkey)})

    @dbus.service.method(AGENT, in_signature="os")
    def DisplayPinCode(self, device, pincode):
        emit({"event": "display pin code", "device": str(device), "pincode": str(pincode)})

    @dbus.service.method(AGENT, in_signature="ou")
    def RequestConfirmation(self, device, passkey):
        emit({"event": "confirm", "device": str(device), "passkey": int(passkey), "answer": "yes"})

    @dbus.service.method(AGENT, in_signature="o")
    def RequestAuthorization(self, device):
        emit({"event": "authorize", "device": str(device), "answer": "yes"})

    @dbus.service.method(AGENT, in_signature="os")
    def AuthorizeService(self, device, uuid):
        pass

    @dbus.service.method(AGENT, in_signature="o", out_signature="u")
    def RequestPasskey(self, device):
        emit({"event": "passkey requested", "device": str(device)})
        raise Rejected("this agent cannot type a passkey")

    @dbus.service.method(AGENT, in_signature="o", out_signature="s")
    def RequestPinCode(self, device):
        raise Rejected("no PIN codes on LE")

    @dbus.service.method(AGENT)
    def Cancel(self):
        emit({"event": "agent cancelled"})


class Rejected(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.Rejected"


class Advertisement(dbus.service.Object):
    def __init__(self, bus, name):
        self.path = "/org/bluetide/advertisement0"
        self.name = name
        super().__init__(bus, self.path)

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Type": "peripheral", "LocalName": self.name,
                "ServiceUUIDs": dbus.Array([SERVICE_UUID], signature="s"), "Includes": dbus.Array(["tx-power"], signature="s")}

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="BlueZ-Guest")
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument("--agent", metavar="CAPABILITY",
                        help="register a pairing agent: NoInputNoOutput, DisplayOnly, DisplayYesNo, KeyboardDisplay")
    parser.add_argument("--exit-after-encrypted-reads", type=int, default=0, metavar="N",
                        help="exit 0 once the encrypted characteristic was read N times (instead of after a write and notifications)")
    args = parser.parse_args()
    monitor = Monitor("/tmp/bluez_peripheral.btmon.txt")

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    adapter_path = "/org/bluez/hci0"
    adapter = bus.get_object(BLUEZ, adapter_path)
    adapter_properties = dbus.Interface(adapter, PROPERTIES)
    adapter_properties.Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))

    application = Application(bus)
    service = Service(bus, 0, SERVICE_UUID)
    readable = Characteristic(bus, 0, READ_UUID, ["read"], service, b"hello from BlueZ")
    writable = Characteristic(bus, 1, WRITE_UUID, ["read", "write"], service, b"")
    notifying = Characteristic(bus, 2, NOTIFY_UUID, ["notify"], service, b"\x00")
    encrypted = Characteristic(bus, 3, ENCRYPTED_UUID, ["encrypt-read"], service, b"encrypted from BlueZ")
    authenticated = Characteristic(bus, 4, AUTHENTICATED_UUID, ["encrypt-authenticated-read"], service, b"authenticated from BlueZ")
    service.characteristics = [readable, writable, notifying, encrypted, authenticated]
    application.services = [service]
    advertisement = Advertisement(bus, args.name)

    loop = GLib.MainLoop()
    state = {"written": None, "subscribed": False, "sent": 0, "registered": 0, "status": 1, "encrypted_reads": 0}
    registrations = 3 if args.agent else 2

    def on_encrypted_read(device: str):
        state["encrypted_reads"] += 1
        emit({"event": "read", "uuid": ENCRYPTED_UUID, "device": device, "count": state["encrypted_reads"]})
        if args.exit_after_encrypted_reads and state["encrypted_reads"] >= args.exit_after_encrypted_reads:
            state["status"] = 0
            GLib.timeout_add(1500, loop.quit)  # let the response and the central's disconnection go by

    encrypted.on_read = on_encrypted_read
    authenticated.on_read = lambda device: emit({"event": "read", "uuid": AUTHENTICATED_UUID, "device": device})

    def check_done():
        if args.exit_after_encrypted_reads:
            return
        if state["written"] is not None and state["sent"] >= 3:
            state["status"] = 0
            GLib.timeout_add(500, loop.quit)  # let the last notification leave

    def on_write(value: bytes):
        state["written"] = value
        emit({"event": "written", "uuid": WRITE_UUID, "value": value.hex()})
        check_done()

    def tick():
        if not state["subscribed"]:
            return False
        state["sent"] += 1
        notifying.notify(bytes([state["sent"] & 0xFF]))
        check_done()
        return state["subscribed"]

    def on_subscribe(enabled: bool):
        was = state["subscribed"]
        state["subscribed"] = enabled
        emit({"event": "subscribed" if enabled else "unsubscribed", "uuid": NOTIFY_UUID})
        if enabled and not was:
            GLib.timeout_add(200, tick)

    writable.on_write = on_write
    notifying.on_subscribe = on_subscribe

    def registered(what):
        def reply():
            state["registered"] += 1
            if state["registered"] == registrations:
                emit({"event": "ready", "name": args.name, "service": SERVICE_UUID})
        return reply

    def failed(what):
        def error(exception):
            emit({"event": "error", "error": f"{what}: {exception}"})
            loop.quit()
        return error

    if args.agent:
        adapter_properties.Set("org.bluez.Adapter1", "Pairable", dbus.Boolean(True))
        agent = Agent(bus)
        manager = dbus.Interface(bus.get_object(BLUEZ, "/org/bluez"), AGENT_MANAGER)
        manager.RegisterAgent(agent.path, args.agent)
        manager.RequestDefaultAgent(agent.path, reply_handler=registered("agent"), error_handler=failed("RequestDefaultAgent"))

        def device_changed(interface, changed, invalidated, path=None):
            for key in ("Paired", "Bonded"):
                if interface == DEVICE and changed.get(key):
                    emit({"event": key.lower(), "device": str(path)})
        bus.add_signal_receiver(device_changed, dbus_interface=PROPERTIES, signal_name="PropertiesChanged",
                                bus_name=BLUEZ, path_keyword="path")

    dbus.Interface(adapter, GATT_MANAGER).RegisterApplication(
        application.path, {}, reply_handler=registered("gatt"), error_handler=failed("RegisterApplication"))
    dbus.Interface(adapter, ADVERTISING_MANAGER).RegisterAdvertisement(
        advertisement.path, {}, reply_handler=registered("advertisement"), error_handler=failed("RegisterAdvertisement"))

    def timed_out():
        emit({"event": "timeout", "written": state["written"] is not None, "notifications": state["sent"]})
        loop.quit()
    GLib.timeout_add(int(args.timeout * 1000), timed_out)
    # Stopped from outside (the test gave up): the summary below still tells what btmon saw.
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: loop.quit() or False)
    loop.run()
    summary = monitor.summary()
    if state["status"] != 0:
        summary["excerpt"] = monitor.excerpt()
    emit(summary)
    monitor.stop()
    emit({"event": "done", "status": state["status"], "notifications": state["sent"], "encrypted_reads": state["encrypted_reads"]})
    return state["status"]


if __name__ == "__main__":
    sys.exit(main())
