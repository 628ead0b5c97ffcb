#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libmosquitto's C functions, found at run time with `dlopen`/`dlsym`, so building Bluetide
/// needs nothing but the Swift toolchain and a machine without the library runs everything but
/// MQTT. The few functions are declared here from the library's documented interface
/// (`mosquitto.h`, libmosquitto 1.6 and 2.0 keep these signatures).
///
/// `@unchecked Sendable`: the struct holds only C function pointers, set once in ``load()`` and
/// never changed; libmosquitto's functions are safe to call from any thread once a client runs
/// its own network thread (`mosquitto_loop_start`).
struct MosquittoLibrary: @unchecked Sendable {
    typealias Handle = OpaquePointer
    typealias ConnectCallback = @convention(c) (Handle?, UnsafeMutableRawPointer?, Int32) -> Void
    typealias MessageCallback = @convention(c) (Handle?, UnsafeMutableRawPointer?, UnsafeRawPointer?) -> Void
    typealias SubscribeCallback = @convention(c) (Handle?, UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<Int32>?) -> Void

    let libInit: @convention(c) () -> Int32
    let new: @convention(c) (UnsafePointer<CChar>?, Bool, UnsafeMutableRawPointer?) -> Handle?
    let destroy: @convention(c) (Handle?) -> Void
    let intOption: @convention(c) (Handle?, Int32, Int32) -> Int32
    let usernamePasswordSet: @convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let willSet: @convention(c) (Handle?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32
    let tlsSet: @convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, OpaquePointer?) -> Int32
    let reconnectDelaySet: @convention(c) (Handle?, UInt32, UInt32, Bool) -> Int32
    let connectAsync: @convention(c) (Handle?, UnsafePointer<CChar>?, Int32, Int32) -> Int32
    let reconnectAsync: @convention(c) (Handle?) -> Int32
    let disconnect: @convention(c) (Handle?) -> Int32
    let loopStart: @convention(c) (Handle?) -> Int32
    let loopStop: @convention(c) (Handle?, Bool) -> Int32
    let publish: @convention(c) (Handle?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32
    let subscribe: @convention(c) (Handle?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32) -> Int32
    let connectCallbackSet: @convention(c) (Handle?, ConnectCallback?) -> Void
    let disconnectCallbackSet: @convention(c) (Handle?, ConnectCallback?) -> Void
    let publishCallbackSet: @convention(c) (Handle?, ConnectCallback?) -> Void
    let subscribeCallbackSet: @convention(c) (Handle?, SubscribeCallback?) -> Void
    let messageCallbackSet: @convention(c) (Handle?, MessageCallback?) -> Void
    let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?
    let connackString: @convention(c) (Int32) -> UnsafePointer<CChar>?

    /// The Debian package that provides the library, named in the one-line error.
    static let package = "libmosquitto1"
    /// The shared object names tried, newest first.
    static let sonames = ["libmosquitto.so.1", "libmosquitto.so"]

    /// The library, loaded once per process; the error says which package to install.
    static let shared: Result<MosquittoLibrary, MQTTError> = load()

    /// `BLUETIDE_LIBMOSQUITTO=PATH` loads that file instead (a library built elsewhere; the tests
    /// name a missing one to see the message a machine without the package gives).
    static let overrideVariable = "BLUETIDE_LIBMOSQUITTO"

    private static func load() -> Result<MosquittoLibrary, MQTTError> {
        var handle: UnsafeMutableRawPointer?
        let names = getenv(overrideVariable).map { [String(cString: $0)] } ?? sonames
        for name in names {
            handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)
            if handle != nil { break }
        }
        guard let handle else {
            return .failure(MQTTError(
                "MQTT needs libmosquitto, which is not installed: install the Debian package \(package) (apt-get install \(package))"))
        }
        var missing: [String] = []
        func symbol<T>(_ name: String, _ type: T.Type) -> T? {
            guard let pointer = dlsym(handle, name) else { missing.append(name); return nil }
            return unsafeBitCast(pointer, to: type)
        }
        let library = MosquittoLibrary(
            libInit: symbol("mosquitto_lib_init", (@convention(c) () -> Int32).self),
            new: symbol("mosquitto_new", (@convention(c) (UnsafePointer<CChar>?, Bool, UnsafeMutableRawPointer?) -> Handle?).self),
            destroy: symbol("mosquitto_destroy", (@convention(c) (Handle?) -> Void).self),
            intOption: symbol("mosquitto_int_option", (@convention(c) (Handle?, Int32, Int32) -> Int32).self),
            usernamePasswordSet: symbol("mosquitto_username_pw_set", (@convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32).self),
            willSet: symbol("mosquitto_will_set", (@convention(c) (Handle?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32).self),
            tlsSet: symbol("mosquitto_tls_set", (@convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, OpaquePointer?) -> Int32).self),
            reconnectDelaySet: symbol("mosquitto_reconnect_delay_set", (@convention(c) (Handle?, UInt32, UInt32, Bool) -> Int32).self),
            connectAsync: symbol("mosquitto_connect_async", (@convention(c) (Handle?, UnsafePointer<CChar>?, Int32, Int32) -> Int32).self),
            reconnectAsync: symbol("mosquitto_reconnect_async", (@convention(c) (Handle?) -> Int32).self),
            disconnect: symbol("mosquitto_disconnect", (@convention(c) (Handle?) -> Int32).self),
            loopStart: symbol("mosquitto_loop_start", (@convention(c) (Handle?) -> Int32).self),
            loopStop: symbol("mosquitto_loop_stop", (@convention(c) (Handle?, Bool) -> Int32).self),
            publish: symbol("mosquitto_publish", (@convention(c) (Handle?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32).self),
            subscribe: symbol("mosquitto_subscribe", (@convention(c) (Handle?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32) -> Int32).self),
            connectCallbackSet: symbol("mosquitto_connect_callback_set", (@convention(c) (Handle?, ConnectCallback?) -> Void).self),
            disconnectCallbackSet: symbol("mosquitto_disconnect_callback_set", (@convention(c) (Handle?, ConnectCallback?) -> Void).self),
            publishCallbackSet: symbol("mosquitto_publish_callback_set", (@convention(c) (Handle?, ConnectCallback?) -> Void).self),
            subscribeCallbackSet: symbol("mosquitto_subscribe_callback_set", (@convention(c) (Handle?, SubscribeCallback?) -> Void).self),
            messageCallbackSet: symbol("mosquitto_message_callback_set", (@convention(c) (Handle?, MessageCallback?) -> Void).self),
            strerror: symbol("mosquitto_strerror", (@convention(c) (Int32) -> UnsafePointer<CChar>?).self),
            connackString: symbol("mosquitto_connack_string", (@convention(c) (Int32) -> UnsafePointer<CChar>?).self))
        guard missing.isEmpty, let library else {
            return .failure(MQTTError(
                "the installed libmosquitto lacks \(missing.joined(separator: ", ")): install a current \(package) (1.6 or later)"))
        }
        _ = library.libInit()
        return .success(library)
    }

    /// Text for a libmosquitto error code (`MOSQ_ERR_*`).
    func describe(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }

    /// Text for a CONNACK refusal code (`not authorised`, `identifier rejected`, …).
    func describeRefusal(_ code: Int32) -> String {
        connackString(code).map { String(cString: $0) } ?? "refused (\(code))"
    }
}

extension MosquittoLibrary {
    /// Builds the value from optional symbols: nil when any is missing.
    fileprivate init?(
        libInit: (@convention(c) () -> Int32)?,
        new: (@convention(c) (UnsafePointer<CChar>?, Bool, UnsafeMutableRawPointer?) -> Handle?)?,
        destroy: (@convention(c) (Handle?) -> Void)?,
        intOption: (@convention(c) (Handle?, Int32, Int32) -> Int32)?,
        usernamePasswordSet: (@convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32)?,
        willSet: (@convention(c) (Handle?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32)?,
        tlsSet: (@convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, OpaquePointer?) -> Int32)?,
        reconnectDelaySet: (@convention(c) (Handle?, UInt32, UInt32, Bool) -> Int32)?,
        connectAsync: (@convention(c) (Handle?, UnsafePointer<CChar>?, Int32, Int32) -> Int32)?,
        reconnectAsync: (@convention(c) (Handle?) -> Int32)?,
        disconnect: (@convention(c) (Handle?) -> Int32)?,
        loopStart: (@convention(c) (Handle?) -> Int32)?,
        loopStop: (@convention(c) (Handle?, Bool) -> Int32)?,
        publish: (@convention(c) (Handle?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32)?,
        subscribe: (@convention(c) (Handle?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32) -> Int32)?,
        connectCallbackSet: (@convention(c) (Handle?, ConnectCallback?) -> Void)?,
        disconnectCallbackSet: (@convention(c) (Handle?, ConnectCallback?) -> Void)?,
        publishCallbackSet: (@convention(c) (Handle?, ConnectCallback?) -> Void)?,
        subscribeCallbackSet: (@convention(c) (Handle?, SubscribeCallback?) -> Void)?,
        messageCallbackSet: (@convention(c) (Handle?, MessageCallback?) -> Void)?,
        strerror: (@convention(c) (Int32) -> UnsafePointer<CChar>?)?,
        connackString: (@convention(c) (Int32) -> UnsafePointer<CChar>?)?
    ) {
        guard let libInit, let new, let destroy, let intOption, let usernamePasswordSet, let willSet, let tlsSet,
              let reconnectDelaySet, let connectAsync, let reconnectAsync, let disconnect, let loopStart, let loopStop, let publish, let subscribe,
              let connectCallbackSet, let disconnectCallbackSet, let publishCallbackSet, let subscribeCallbackSet,
              let messageCallbackSet, let strerror, let connackString else { return nil }
        self.init(
            libInit: libInit, new: new, destroy: destroy, intOption: intOption, usernamePasswordSet: usernamePasswordSet,
            willSet: willSet, tlsSet: tlsSet, reconnectDelaySet: reconnectDelaySet, connectAsync: connectAsync,
            reconnectAsync: reconnectAsync, disconnect: disconnect, loopStart: loopStart, loopStop: loopStop, publish: publish, subscribe: subscribe,
            connectCallbackSet: connectCallbackSet, disconnectCallbackSet: disconnectCallbackSet,
            publishCallbackSet: publishCallbackSet, subscribeCallbackSet: subscribeCallbackSet,
            messageCallbackSet: messageCallbackSet, strerror: strerror, connackString: connackString)
    }
}

/// A failure of the MQTT client, as one line for a person: what failed and what to try.
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
