import BluetideCommands
import NIOCore
import NIOPosix

// In virtual time (`BLUETIDE_VIRTUAL_TIME=1`, for tests and fast simulations) every job of the
// process runs on one thread: SwiftNIO's one-loop group as Swift Concurrency's global executor.
// The virtual clock moves when the work queued has had its turn; on one thread no job can be
// half done on another thread that the operating system took off the CPU (two CPU hogs beside
// the tests do that), so a busy machine makes a run slower, never different. This must happen
// before the first task is enqueued, hence here, before `run`.
if BluetideMain.runsOnOneThread() {
    NIOSingletons.groupLoopCountSuggestion = 1
    _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
}
await BluetideMain.run()
