import NIOCore

/// First handler of every dashboard connection (it sees the raw bytes): closes a connection that
/// stays silent past ``ConnectionLimits/firstByteTimeout`` or idle past
/// ``ConnectionLimits/idleTimeout``, tells the ``ConnectionGate`` when the peer first speaks and when
/// the connection closes, and writes the plain answers of refused or malformed connections.
final class ConnectionWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Seconds a refused or malformed connection is given to read its answer before it is closed.
    static let lingerSeconds = 2.0

    private let id: Int
    private let gate: ConnectionGate
    private var lastActivity = NIODeadline.now()
    private var spoke = false
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
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        lastActivity = .now()
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

    private func schedule(_ context: ChannelHandlerContext) {
        let seconds = closing ? Self.lingerSeconds : spoke ? gate.limits.idleTimeout : gate.limits.firstByteTimeout
        let deadline = lastActivity + .nanoseconds(Int64(seconds * 1e9))
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            let limit = closing ? Self.lingerSeconds : spoke ? gate.limits.idleTimeout : gate.limits.firstByteTimeout
            if closing || NIODeadline.now() >= lastActivity + .nanoseconds(Int64(limit * 1e9)) {
                context.close(promise: nil)
            } else {
                schedule(context)
            }
        }
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
