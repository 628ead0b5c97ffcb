import Foundation
import Synchronization

/// Who may use the dashboard: the browser sessions it handed out (cookie token → CSRF token)
/// and, with `--lan`, the coach password's hash every session must log in with.
///
/// Without a password (the default, loopback only) a session is opened for any browser that
/// asks, so that every form still carries a CSRF token; with one, only after a correct login.
public final class DashboardAccess: Sendable {
    /// One browser's session.
    struct Session: Sendable {
        /// The token every form and script POST must send back (`_csrf` or `X-CSRF-Token`).
        var csrf: String
        /// True once the password was given (always true without a password).
        var loggedIn: Bool
        /// When it stops being accepted.
        var expires: Date
    }

    /// The session cookie's name.
    public static let cookieName = "bluetide_session"
    /// How long a session lasts, seconds (a training day).
    public static let sessionLifetime: TimeInterval = 12 * 3600
    /// Most sessions kept; the oldest are dropped beyond this.
    static let maximumSessions = 1000

    /// The password hash (see ``PasswordHash``), or nil when no login is asked for.
    public let passwordHash: String?
    private let sessions = Mutex<[String: Session]>([:])

    /// Access with a login when `passwordHash` is given, open (loopback use) when nil.
    public init(passwordHash: String? = nil) {
        self.passwordHash = passwordHash
    }

    /// True when a login is required.
    public var requiresLogin: Bool { passwordHash != nil }

    /// A random token, 32 bytes as hex.
    static func token() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// The live session for a cookie value, if any.
    func session(_ cookie: String?, now: Date = Date()) -> Session? {
        guard let cookie else { return nil }
        return sessions.withLock { all in
            guard let session = all[cookie] else { return nil }
            if session.expires <= now {
                all[cookie] = nil
                return nil
            }
            return session
        }
    }

    /// Opens a session (logged in when no password is needed); returns its cookie value.
    func open(loggedIn: Bool, now: Date = Date()) -> (cookie: String, session: Session) {
        let cookie = Self.token()
        let session = Session(csrf: Self.token(), loggedIn: loggedIn || !requiresLogin, expires: now.addingTimeInterval(Self.sessionLifetime))
        sessions.withLock { all in
            if all.count >= Self.maximumSessions {
                for key in all.sorted(by: { $0.value.expires < $1.value.expires }).prefix(all.count - Self.maximumSessions + 1).map(\.key) {
                    all[key] = nil
                }
            }
            all[cookie] = session
        }
        return (cookie, session)
    }

    /// Checks a password; on success opens a logged-in session.
    func logIn(password: String, now: Date = Date()) -> (cookie: String, session: Session)? {
        guard let passwordHash, PasswordHash.verify(password, against: passwordHash) else { return nil }
        return open(loggedIn: true, now: now)
    }

    /// Ends a session.
    func logOut(_ cookie: String?) {
        guard let cookie else { return }
        _ = sessions.withLock { $0.removeValue(forKey: cookie) }
    }
}

/// The CSRF token of the request being answered, for the forms a page renders.
enum RequestSecurity {
    @TaskLocal static var csrfToken: String?
}
