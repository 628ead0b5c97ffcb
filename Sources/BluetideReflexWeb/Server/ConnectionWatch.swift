import NIOCore

/// First handler of every dashboard connection (it sees the raw bytes): closes a connection that
/// stays silent past ``ConnectionLimits/firstByteTimeout`` or idle past
/// ``ConnectionLimits/idleTimeout``, answers `408` and closes one whose request header takes
/// longer than ``ConnectionLimits/headerTimeout`` from its first byte, tells the
/// ``ConnectionGate`` when the peer first speaks, when a header is complete and when the
/// connection closes, and writes the plain answers of refused or malformed connections.
final class ConnectionWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Seconds a refused or malformed connection is given to read its answer before it is closed.
    static let lingerSeconds = 2.0

    /// Where the connection is in its requests.
    private enum Phase {
        /// No byte yet.
        case silent
        /// A request's header is arriving; its first byte came at `since`.
        case header(since: NIODeadline)
        /// A whole header arrived; `responded` once the answer started going out (the next
        /// bytes then start a new request).
        case request(responded: Bool)
        /// Upgraded to a WebSocket: frames, no more headers.
        case upgraded
    }

    private let id: Int
    private let gate: ConnectionGate
    private var lastActivity = NIODeadline.now()
    private var spoke = false
    private var phase = Phase.silent
    private var scanner = HeaderScanner()
    /// True once an answer of our own was written: input is discarded, the connection ends soon.
    private var closing = false
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    /// An answer to write as soon as the connection is active (a refusal), then close.
    private var pendingAnswer: (status: String, text: String, extraHeaders: [String])?

    /// Succeeds with true at the peer's first byte, false if the connection ends before one.
    let firstByte: EventLoopPromise<Bool>
    private var firstByteSettled = false

    init(id: Int, gate: ConnectionGate, firstByte: EventLoopPromise<Bool>,
         refusal: (status: String, text: String, extraHeaders: [String])? = nil) {
        self.id = id
        self.gate = gate
        self.firstByte = firstByte
        pendingAnswer = refusal
    }

    private func settleFirstByte(_ spoke: Bool) {
        guard !firstByteSettled else { return }
        firstByteSettled = true
        firstByte.succeed(spoke)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        lastActivity = .now()
        schedule(context)
        if context.channel.isActive { sendPendingAnswer() }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendPendingAnswer()
        context.fireChannelActive()
    }

    private func sendPendingAnswer() {
        guard let answer = pendingAnswer else { return }
        pendingAnswer = nil
        answerAndClose(status: answer.status, text: answer.text, extraHeaders: answer.extraHeaders)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        settleFirstByte(false)
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastActivity = .now()
        if closing { return }
        if !spoke {
            spoke = true
            gate.spoke(id)
            settleFirstByte(true)
        }
        track(unwrapInboundIn(data), context: context)
        context.fireChannelRead(data)
    }

    /// Follows the requests' headers in `bytes`: when one starts its deadline runs, when it is
    /// complete the connection is in use.
    private func track(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        switch phase {
        case .silent, .request(responded: true):
            if case .request = phase { gate.startedHeader(id) }
            phase = .header(since: lastActivity)
            scanner = HeaderScanner()
            // The header's deadline may come before the timer set for silence or idleness.
            timer?.cancel()
            schedule(context)
        case .header:
            break
        case .request(responded: false), .upgraded:
            return
        }
        guard let upgrade = scanner.feed(bytes.readableBytesView) else { return }
        phase = upgrade ? .upgraded : .request(responded: false)
        gate.headerComplete(id)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        lastActivity = .now()
        if case .request = phase { phase = .request(responded: true) }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        settleFirstByte(false)
        timer?.cancel()
        timer = nil
        gate.closed(id)
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The peer finished sending after our own answer: nothing more to wait for.
        if closing, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Writes `status` with `text` as a whole HTTP/1.1 answer straight to the socket, then closes
    /// (after the peer stops sending, or ``lingerSeconds``). Bytes still coming are discarded.
    func answerAndClose(status: String, text: String, extraHeaders: [String] = []) {
        guard let context, !closing else { return }
        closing = true
        let body = text + "\n"
        let head = (["HTTP/1.1 \(status)", "Content-Type: text/plain; charset=utf-8", "Content-Length: \(body.utf8.count)",
                     "Connection: close", "Cache-Control: no-store"] + extraHeaders).joined(separator: "\r\n")
        let buffer = context.channel.allocator.buffer(string: head + "\r\n\r\n" + body)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        // Half-close: the peer reads the answer, and closing with its request unread would reset
        // the connection before the answer arrives.
        context.close(mode: .output, promise: nil)
        timer?.cancel()
        timer = nil
        lastActivity = .now()
        schedule(context)
    }

    /// When the header now arriving is late (nil when none is arriving).
    private var headerDeadline: NIODeadline? {
        guard !closing, case let .header(since) = phase else { return nil }
        return since + .nanoseconds(Int64(gate.limits.headerTimeout * 1e9))
    }

    private func schedule(_ context: ChannelHandlerContext) {
        let seconds = closing ? Self.lingerSeconds : spoke ? gate.limits.idleTimeout : gate.limits.firstByteTimeout
        var deadline = lastActivity + .nanoseconds(Int64(seconds * 1e9))
        if let header = headerDeadline, header < deadline { deadline = header }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            let limit = closing ? Self.lingerSeconds : spoke ? gate.limits.idleTimeout : gate.limits.firstByteTimeout
            if !closing, let header = headerDeadline, NIODeadline.now() >= header {
                answerAndClose(
                    status: "408 Request Timeout",
                    text: "the request's header did not arrive within \(Self.seconds(gate.limits.headerTimeout)) s; send the whole request at once")
            } else if closing || NIODeadline.now() >= lastActivity + .nanoseconds(Int64(limit * 1e9)) {
                context.close(promise: nil)
            } else {
                schedule(context)
            }
        }
    }

    /// `10` for 10.0, `0.5` for 0.5.
    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// Last handler added at set-up: a request the HTTP decoder cannot parse before any request was
/// read is answered `400 Bad Request` (Hummingbird answers the later ones itself) and closed.
final class MalformedRequestAnswer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let watch: ConnectionWatch
    private var sawRequest = false

    init(watch: ConnectionWatch) { self.watch = watch }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        sawRequest = true
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !sawRequest else { return context.fireErrorCaught(error) }
        watch.answerAndClose(status: "400 Bad Request",
                             text: "bad request: this is not an HTTP/1.1 request the dashboard can read (\(error))")
    }
}

/// Finds where an HTTP/1.1 request's header ends in its bytes as they arrive (the empty line
/// after the request line and the header fields; CR LF or bare LF), and whether it asks for an
/// upgrade (`Upgrade:`, the live page's WebSocket). Protocol logic without I/O.
struct HeaderScanner: Sendable {
    /// Bytes in the current line so far (a CR is not counted).
    private var lineLength = 0
    private var sawRequestLine = false
    /// The current line's first bytes, lower-cased (enough to recognise `upgrade:`).
    private var prefix: [UInt8] = []
    private var upgrade = false
    private static let upgradeName = Array("upgrade:".utf8)

    /// Feeds the next `bytes`; returns nil while the header goes on, else whether it asked for an
    /// upgrade (bytes after the header's end are not looked at).
    mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> Bool? where Bytes.Element == UInt8 {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\n"):
                if lineLength == 0 {
                    // Empty lines before the request line are ignored (RFC 9112 2.2).
                    if sawRequestLine { return upgrade }
                } else if !sawRequestLine {
                    sawRequestLine = true
                } else if prefix == Self.upgradeName {
                    upgrade = true
                }
                lineLength = 0
                prefix.removeAll(keepingCapacity: true)
            case UInt8(ascii: "\r"):
                break
            default:
                lineLength += 1
                if prefix.count < Self.upgradeName.count {
                    prefix.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte)
                }
            }
        }
        return nil
    }
}
