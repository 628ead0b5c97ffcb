import NIOCore
import NIOPosix

/// The serial executors hosts run on: event loops of NIO's shared group. A host driver that runs
/// on its transport's event loop reads a batch, handles it and writes the answers on one thread,
/// with no hand-over between threads for a packet.
package enum HostExecutors {
    /// The shared group's loops, in a fixed order.
    private static let loops: [any EventLoop] = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())

    /// An event loop of the shared group (round robin), for a host whose transport has no
    /// executor of its own.
    package static func next() -> any SerialExecutor {
        MultiThreadedEventLoopGroup.singleton.next().executor
    }

    /// The same loop's executor for the same object, e.g. every host of one virtual link: the link hands a
    /// packet from one host's executor to the other's, which is then the same thread.
    static func executor(for object: AnyObject) -> any SerialExecutor {
        let index = UInt(bitPattern: ObjectIdentifier(object).hashValue) % UInt(loops.count)
        return loops[Int(index)].executor
    }

    /// True when the calling thread is the one `executor` runs jobs on (an event loop's thread).
    package static func isCurrent(_ executor: any SerialExecutor) -> Bool {
        (executor as? any EventLoop)?.inEventLoop ?? false
    }
}
