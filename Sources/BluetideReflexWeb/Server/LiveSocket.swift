import Hummingbird
import HummingbirdWebSocket

extension DashboardServer {
    /// `/live`: a WebSocket that sends each ``LiveRunMessage`` as a JSON text message — the
    /// current (or last) run's so far, then every new one — until the page goes away.
    func webSocketRoutes() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        let runs = self.runs
        let access = self.access
        router.ws("/live", shouldUpgrade: { request, _ in
            // Only the dashboard's own pages (same Origin), and with a password only after login.
            if DashboardGuard<BasicRequestContext>.foreignHost(request, access: access) != nil { return .dontUpgrade }
            if DashboardGuard<BasicRequestContext>.crossOrigin(request) != nil { return .dontUpgrade }
            if access.requiresLogin, access.session(request.cookies[DashboardAccess.cookieName]?.value)?.loggedIn != true {
                return .dontUpgrade
            }
            return .upgrade([:])
        }) { inbound, outbound, _ in
            let messages = await runs.listen()
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in messages {
                        do { try await outbound.write(.text(message.json)) } catch { return }
                    }
                }
                group.addTask {
                    // The page sends nothing; this ends when it closes the socket.
                    do { for try await _ in inbound {} } catch {}
                }
                await group.next()
                group.cancelAll()
            }
        }
        return router
    }
}
