#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libdbus-1's C functions, found at run time with `dlopen`/`dlsym`, so building Bluetide needs
/// nothing but the Swift toolchain and a machine without the library runs everything but the
/// BlueZ backend. The functions are declared here from libdbus's documented interface
/// (`dbus/dbus.h`; every one exists since libdbus 1.2). libdbus does the wire protocol,
/// authentication and marshalling; Bluetide only drives it.
///
/// `@unchecked Sendable`: the struct holds only C function pointers, set once in ``load()`` and
/// never changed; libdbus is safe to call from any thread after `dbus_threads_init_default`,
/// which ``load()`` calls before the value is published.
struct DBusLibrary: @unchecked Sendable {
    typealias Connection = OpaquePointer
    typealias Message = OpaquePointer
    typealias Pending = OpaquePointer
    typealias Watch = OpaquePointer
    typealias Timeout = OpaquePointer
    /// A `DBusError` or `DBusMessageIter` the caller allocates (see ``errorSize``, ``iterSize``).
    typealias Buffer = UnsafeMutableRawPointer
    typealias Bool32 = UInt32

    typealias AddWatch = @convention(c) (Watch?, UnsafeMutableRawPointer?) -> Bool32
    typealias WatchChanged = @convention(c) (Watch?, UnsafeMutableRawPointer?) -> Void
    typealias AddTimeout = @convention(c) (Timeout?, UnsafeMutableRawPointer?) -> Bool32
    typealias TimeoutChanged = @convention(c) (Timeout?, UnsafeMutableRawPointer?) -> Void
    typealias FreeFunction = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias Wakeup = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias DispatchStatusChanged = @convention(c) (Connection?, Int32, UnsafeMutableRawPointer?) -> Void
    typealias Filter = @convention(c) (Connection?, Message?, UnsafeMutableRawPointer?) -> Int32
    typealias PendingNotify = @convention(c) (Pending?, UnsafeMutableRawPointer?) -> Void

    /// Bytes reserved for a `DBusError` (32 on 64-bit Linux) and a `DBusMessageIter` (72 on
    /// 64-bit Linux; libdbus reserves at most 16 pointers for it on any platform).
    static let errorSize = 64
    static let iterSize = 16 * MemoryLayout<UnsafeRawPointer>.size

    let threadsInitDefault: @convention(c) () -> Bool32
    let getVersion: @convention(c) (UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> Void
    let free: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let errorInit: @convention(c) (Buffer?) -> Void
    let errorFree: @convention(c) (Buffer?) -> Void
    let busGetPrivate: @convention(c) (Int32, Buffer?) -> Connection?
    let connectionOpenPrivate: @convention(c) (UnsafePointer<CChar>?, Buffer?) -> Connection?
    let busRegister: @convention(c) (Connection?, Buffer?) -> Bool32
    let busGetUniqueName: @convention(c) (Connection?) -> UnsafePointer<CChar>?
    let setExitOnDisconnect: @convention(c) (Connection?, Bool32) -> Void
    let connectionClose: @convention(c) (Connection?) -> Void
    let connectionUnref: @convention(c) (Connection?) -> Void
    let connectionIsConnected: @convention(c) (Connection?) -> Bool32
    let setWatchFunctions: @convention(c) (Connection?, AddWatch?, WatchChanged?, WatchChanged?, UnsafeMutableRawPointer?, FreeFunction?) -> Bool32
    let setTimeoutFunctions: @convention(c) (Connection?, AddTimeout?, TimeoutChanged?, TimeoutChanged?, UnsafeMutableRawPointer?, FreeFunction?) -> Bool32
    let setWakeupMainFunction: @convention(c) (Connection?, Wakeup?, UnsafeMutableRawPointer?, FreeFunction?) -> Void
    let setDispatchStatusFunction: @convention(c) (Connection?, DispatchStatusChanged?, UnsafeMutableRawPointer?, FreeFunction?) -> Void
    let watchGetUnixFD: @convention(c) (Watch?) -> Int32
    let watchGetFlags: @convention(c) (Watch?) -> UInt32
    let watchGetEnabled: @convention(c) (Watch?) -> Bool32
    let watchHandle: @convention(c) (Watch?, UInt32) -> Bool32
    let timeoutGetInterval: @convention(c) (Timeout?) -> Int32
    let timeoutGetEnabled: @convention(c) (Timeout?) -> Bool32
    let timeoutHandle: @convention(c) (Timeout?) -> Bool32
    let dispatch: @convention(c) (Connection?) -> Int32
    let addFilter: @convention(c) (Connection?, Filter?, UnsafeMutableRawPointer?, FreeFunction?) -> Bool32
    let send: @convention(c) (Connection?, Message?, UnsafeMutablePointer<UInt32>?) -> Bool32
    let sendWithReply: @convention(c) (Connection?, Message?, UnsafeMutablePointer<Pending?>?, Int32) -> Bool32
    let flush: @convention(c) (Connection?) -> Void
    let pendingSetNotify: @convention(c) (Pending?, PendingNotify?, UnsafeMutableRawPointer?, FreeFunction?) -> Bool32
    let pendingGetCompleted: @convention(c) (Pending?) -> Bool32
    let pendingStealReply: @convention(c) (Pending?) -> Message?
    let pendingCancel: @convention(c) (Pending?) -> Void
    let pendingUnref: @convention(c) (Pending?) -> Void
    let messageNewMethodCall: @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Message?
    let messageNewMethodReturn: @convention(c) (Message?) -> Message?
    let messageNewError: @convention(c) (Message?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Message?
    let messageNewSignal: @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Message?
    let messageUnref: @convention(c) (Message?) -> Void
    let messageRefFunction: @convention(c) (Message?) -> Message?
    let messageGetType: @convention(c) (Message?) -> Int32
    let messageGetPath: @convention(c) (Message?) -> UnsafePointer<CChar>?
    let messageGetInterface: @convention(c) (Message?) -> UnsafePointer<CChar>?
    let messageGetMember: @convention(c) (Message?) -> UnsafePointer<CChar>?
    let messageGetSender: @convention(c) (Message?) -> UnsafePointer<CChar>?
    let messageGetDestination: @convention(c) (Message?) -> UnsafePointer<CChar>?
    let messageGetErrorName: @convention(c) (Message?) -> UnsafePointer<CChar>?
    let messageGetSerial: @convention(c) (Message?) -> UInt32
    let messageGetNoReply: @convention(c) (Message?) -> Bool32
    let iterInit: @convention(c) (Message?, Buffer?) -> Bool32
    let iterInitAppend: @convention(c) (Message?, Buffer?) -> Void
    let iterGetArgType: @convention(c) (Buffer?) -> Int32
    let iterNext: @convention(c) (Buffer?) -> Bool32
    let iterRecurse: @convention(c) (Buffer?, Buffer?) -> Void
    let iterGetBasic: @convention(c) (Buffer?, UnsafeMutableRawPointer?) -> Void
    let iterGetSignature: @convention(c) (Buffer?) -> UnsafeMutablePointer<CChar>?
    let iterAppendBasic: @convention(c) (Buffer?, Int32, UnsafeRawPointer?) -> Bool32
    let iterOpenContainer: @convention(c) (Buffer?, Int32, UnsafePointer<CChar>?, Buffer?) -> Bool32
    let iterCloseContainer: @convention(c) (Buffer?, Buffer?) -> Bool32

    /// The Debian package that provides the library, named in the one-line error.
    static let package = "libdbus-1-3"
    /// The shared object names tried, in order.
    static let sonames = ["libdbus-1.so.3", "libdbus-1.so"]
    /// `BLUETIDE_LIBDBUS=PATH` loads that file instead (a library built elsewhere; the tests name
    /// a missing one to see the message a machine without the package gives).
    static let overrideVariable = "BLUETIDE_LIBDBUS"

    /// The library, loaded once per process; the error says which package to install.
    static let shared: Result<DBusLibrary, DBusError> = load()

    private static func load() -> Result<DBusLibrary, DBusError> {
        var handle: UnsafeMutableRawPointer?
        let names = getenv(overrideVariable).map { [String(cString: $0)] } ?? sonames
        for name in names {
            handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)
            if handle != nil { break }
        }
        guard let handle else {
            return .failure(DBusError(
                "the BlueZ backend needs libdbus-1, which is not installed: install the Debian package \(package) (apt-get install \(package))"))
        }
        do {
            let library = try DBusLibrary(handle: handle)
            guard library.threadsInitDefault() != 0 else {
                return .failure(DBusError("libdbus-1 could not set up its thread locks (out of memory)"))
            }
            return .success(library)
        } catch {
            return .failure(error)
        }
    }

    /// libdbus's version, e.g. "1.14.10".
    var version: String {
        var major: Int32 = 0, minor: Int32 = 0, micro: Int32 = 0
        getVersion(&major, &minor, &micro)
        return "\(major).\(minor).\(micro)"
    }

    private init(handle: UnsafeMutableRawPointer) throws(DBusError) {
        func symbol<T>(_ name: String) throws(DBusError) -> T {
            guard let pointer = dlsym(handle, name) else {
                throw DBusError("the installed libdbus-1 lacks \(name): install a current \(DBusLibrary.package) (1.2 or later)")
            }
            return unsafeBitCast(pointer, to: T.self)
        }
        threadsInitDefault = try symbol("dbus_threads_init_default")
        getVersion = try symbol("dbus_get_version")
        free = try symbol("dbus_free")
        errorInit = try symbol("dbus_error_init")
        errorFree = try symbol("dbus_error_free")
        busGetPrivate = try symbol("dbus_bus_get_private")
        connectionOpenPrivate = try symbol("dbus_connection_open_private")
        busRegister = try symbol("dbus_bus_register")
        busGetUniqueName = try symbol("dbus_bus_get_unique_name")
        setExitOnDisconnect = try symbol("dbus_connection_set_exit_on_disconnect")
        connectionClose = try symbol("dbus_connection_close")
        connectionUnref = try symbol("dbus_connection_unref")
        connectionIsConnected = try symbol("dbus_connection_get_is_connected")
        setWatchFunctions = try symbol("dbus_connection_set_watch_functions")
        setTimeoutFunctions = try symbol("dbus_connection_set_timeout_functions")
        setWakeupMainFunction = try symbol("dbus_connection_set_wakeup_main_function")
        setDispatchStatusFunction = try symbol("dbus_connection_set_dispatch_status_function")
        watchGetUnixFD = try symbol("dbus_watch_get_unix_fd")
        watchGetFlags = try symbol("dbus_watch_get_flags")
        watchGetEnabled = try symbol("dbus_watch_get_enabled")
        watchHandle = try symbol("dbus_watch_handle")
        timeoutGetInterval = try symbol("dbus_timeout_get_interval")
        timeoutGetEnabled = try symbol("dbus_timeout_get_enabled")
        timeoutHandle = try symbol("dbus_timeout_handle")
        dispatch = try symbol("dbus_connection_dispatch")
        addFilter = try symbol("dbus_connection_add_filter")
        send = try symbol("dbus_connection_send")
        sendWithReply = try symbol("dbus_connection_send_with_reply")
        flush = try symbol("dbus_connection_flush")
        pendingSetNotify = try symbol("dbus_pending_call_set_notify")
        pendingGetCompleted = try symbol("dbus_pending_call_get_completed")
        pendingStealReply = try symbol("dbus_pending_call_steal_reply")
        pendingCancel = try symbol("dbus_pending_call_cancel")
        pendingUnref = try symbol("dbus_pending_call_unref")
        messageNewMethodCall = try symbol("dbus_message_new_method_call")
        messageNewMethodReturn = try symbol("dbus_message_new_method_return")
        messageNewError = try symbol("dbus_message_new_error")
        messageNewSignal = try symbol("dbus_message_new_signal")
        messageUnref = try symbol("dbus_message_unref")
        messageRefFunction = try symbol("dbus_message_ref")
        messageGetType = try symbol("dbus_message_get_type")
        messageGetPath = try symbol("dbus_message_get_path")
        messageGetInterface = try symbol("dbus_message_get_interface")
        messageGetMember = try symbol("dbus_message_get_member")
        messageGetSender = try symbol("dbus_message_get_sender")
        messageGetDestination = try symbol("dbus_message_get_destination")
        messageGetErrorName = try symbol("dbus_message_get_error_name")
        messageGetSerial = try symbol("dbus_message_get_serial")
        messageGetNoReply = try symbol("dbus_message_get_no_reply")
        iterInit = try symbol("dbus_message_iter_init")
        iterInitAppend = try symbol("dbus_message_iter_init_append")
        iterGetArgType = try symbol("dbus_message_iter_get_arg_type")
        iterNext = try symbol("dbus_message_iter_next")
        iterRecurse = try symbol("dbus_message_iter_recurse")
        iterGetBasic = try symbol("dbus_message_iter_get_basic")
        iterGetSignature = try symbol("dbus_message_iter_get_signature")
        iterAppendBasic = try symbol("dbus_message_iter_append_basic")
        iterOpenContainer = try symbol("dbus_message_iter_open_container")
        iterCloseContainer = try symbol("dbus_message_iter_close_container")
    }

    /// Takes a reference on `message` (kept beyond the filter call that handed it in).
    func messageRef(_ message: Message) { _ = messageRefFunction(message) }

    /// The name and message a `DBusError` buffer holds, when set.
    func errorText(_ error: Buffer) -> (name: String, message: String)? {
        guard let name = error.load(as: UnsafePointer<CChar>?.self) else { return nil }
        let message = error.load(fromByteOffset: MemoryLayout<UnsafeRawPointer>.size, as: UnsafePointer<CChar>?.self)
        return (String(cString: name), message.map { String(cString: $0) } ?? "")
    }
}

/// A failure of the D-Bus client as one line: what failed and, for an error reply, the D-Bus
/// error name (e.g. `org.bluez.Error.NotReady`) so callers can tell failures apart.
public struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The D-Bus error name of an error reply (`org.freedesktop.DBus.Error.NoReply`, …); nil for
    /// a failure of our own (library missing, bad argument, connection closed).
    public let name: String?
    /// What happened, in words.
    public let message: String

    public init(_ message: String, name: String? = nil) {
        self.message = message
        self.name = name
    }

    public var description: String { name.map { "\(message) (\($0))" } ?? message }

    /// The call did not get an answer in time (libdbus's own NoReply after the call's time limit).
    public var isTimeout: Bool { name == "org.freedesktop.DBus.Error.NoReply" || name == "org.freedesktop.DBus.Error.Timeout" }
}
