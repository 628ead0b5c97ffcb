import Foundation
import Hummingbird

extension DashboardServer {
    /// `/login` (the coach's password, when one is required) and `/logout`.
    func addLoginRoutes(to router: Router<BasicRequestContext>) {
        let access = self.access
        router.get("/login") { _, _ in
            DashboardResponses.page(Self.loginPage(error: nil, required: access.requiresLogin))
        }
        router.post("/login") { request, _ in
            guard access.requiresLogin else { return DashboardResponses.redirect("/athletes") }
            let fields = try await DashboardResponses.form(request)
            guard let (cookie, _) = access.logIn(password: fields["password"] ?? "") else {
                // A wrong password costs a second, so guessing over the network is slow.
                try await Task.sleep(for: .seconds(1))
                return DashboardResponses.page(Self.loginPage(error: "That is not the coach's password.", required: true), status: .unauthorized)
            }
            var response = DashboardResponses.redirect("/athletes")
            response.setCookie(Cookie(name: DashboardAccess.cookieName, value: cookie, maxAge: Int(DashboardAccess.sessionLifetime),
                                      path: "/", httpOnly: true, sameSite: .strict))
            return response
        }
        router.post("/logout") { request, _ in
            access.logOut(request.cookies[DashboardAccess.cookieName]?.value)
            var response = DashboardResponses.redirect(access.requiresLogin ? "/login" : "/athletes")
            response.setCookie(Cookie(name: DashboardAccess.cookieName, value: "", maxAge: 0, path: "/", httpOnly: true, sameSite: .strict))
            return response
        }
    }

    static func loginPage(error: String?, required: Bool) -> HTML {
        let message: HTML = error.map { "<p class=\"errors\" role=\"alert\">\($0)</p>" } ?? ""
        let body: HTML = required
            ? """
              <section class="card"><h1>Log in</h1>\(message)
              <form method="post" action="/login" id="login-form">
              <label class="field"><span>Coach's password</span><input type="password" name="password" autocomplete="current-password" required autofocus></label>
              <button type="submit">Log in</button></form></section>

              """
            : "<section class=\"card\"><p>This dashboard needs no login (it only listens on this computer).</p><p><a href=\"/athletes\">Athletes</a></p></section>\n"
        return PageLayout.page(title: "Log in", section: nil, body: body)
    }
}
