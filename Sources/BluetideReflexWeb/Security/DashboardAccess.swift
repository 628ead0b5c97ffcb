import BluetideLiveWeb
import Crypto
import Foundation
import Synchronization

/// Who may use the dashboard: the browser sessions it handed out (cookie token → CSRF token)
/// and, with `--lan`, the coach password's hash every session must log in with.
///
/// Without a password (the default, loopback only) a session is opened for any browser that
/// asks, so that every form still carries a CSRF token; with one, only after a correct login.
/// Without a password nothing is stored: a session's CSRF token is its cookie signed with a key
/// of this process (HMAC-SHA256), so requests without a cookie, however many, cannot push a
/// browser's session out (1,100 of them evicted the coach's, and the next form got 403). With a
/// password only logins store sessions, so unauthenticated traffic stores nothing either.
public final class DashboardAccess: Sendable {
    /// One browser's session.
    struct Session: Sendable {
        /// The token every form and script POST must send back (`_csrf` or `X-CSRF-Token`).
        var csrf: String
        /// True once the password was given (always true without a password).
        var loggedIn: Bool
        /// When it stops being accepted.
        var expires: Date
        /// True once a request came back with the session's cookie: a browser that keeps it (the
        /// coach's), not a client that asked once and threw the cookie away.
        var returned = false
        /// When a request last came with the cookie (or when it was opened).
        var lastUsed: Date
    }

    /// The session cookie's name.
    public static let cookieName = "bluetide_session"
    /// How long a session lasts, seconds (a training day).
    public static let sessionLifetime: TimeInterval = 12 * 3600
    /// Most sessions kept; the oldest are dropped beyond this.
    static let maximumSessions = 1000

    /// The password hash (see ``PasswordHash``), or nil when no login is asked for.
    public let passwordHash: String?
    /// The host names requests may be addressed to (``allowsHost(_:)``), besides IP addresses and
    /// `localhost`: a page of another site whose name was made to point at this computer (DNS
    /// rebinding) names its own host and is refused.
    public let hostNames: Set<String>
    private let sessions = Mutex<[String: Session]>([:])
    /// Signs the cookies of the sessions kept without storage (no password).
    private let signingKey = SymmetricKey(size: .bits256)

    /// Access with a login when `passwordHash` is given, open (loopback use) when nil; requests
    /// may name `hostNames` (lower case, without a port; e.g. this computer's name with `--lan`)
    /// besides IP addresses and `localhost`.
    public init(passwordHash: String? = nil, hostNames: Set<String> = []) {
        self.passwordHash = passwordHash
        self.hostNames = Set(hostNames.map { Self.normalised($0) })
    }

    /// Whether a request with this `Host` (or HTTP/2 authority) may be answered: an IP address
    /// (v4, or v6 in brackets), `localhost` or a name under it, or one of ``hostNames``; a port is
    /// ignored. A request without one is let through (browsers always send it; a client that
    /// does not is no browser page). Anything else is refused, whatever its Origin says.
    public func allowsHost(_ host: String?) -> Bool {
        WebAccessRules.allowsHost(host, names: hostNames)
    }

    private static func normalised(_ name: String) -> String { WebAccessRules.normalised(name) }

    /// True when a login is required.
    public var requiresLogin: Bool { passwordHash != nil }

    /// A random token, 32 bytes as hex.
    static func token() -> String { WebAccessRules.randomToken() }

    /// The CSRF token of a session kept without storage: `cookie` signed.
    private func signed(_ cookie: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(cookie.utf8), using: signingKey).map { String(format: "%02x", $0) }.joined()
    }

    /// True for a cookie value this class hands out (64 hex digits).
    private static func isToken(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The live session for a cookie value, if any (the session is marked as returned and used now).
    func session(_ cookie: String?, now: Date = Date()) -> Session? {
        guard let cookie else { return nil }
        if !requiresLogin {
            guard Self.isToken(cookie) else { return nil }
            return Session(csrf: signed(cookie), loggedIn: true, expires: now.addingTimeInterval(Self.sessionLifetime), returned: true,
                           lastUsed: now)
        }
        return sessions.withLock { all in
            guard var session = all[cookie] else { return nil }
            if session.expires <= now {
                all[cookie] = nil
                return nil
            }
            session.returned = true
            session.lastUsed = now
            all[cookie] = session
            return session
        }
    }

    /// Opens a session (logged in when no password is needed); returns its cookie value.
    ///
    /// Past ``maximumSessions`` one session gives way: the oldest one whose cookie never came
    /// back (a client that asked once), and only when there is none, the one unused longest. So
    /// requests without a cookie, however many, never push out a session a browser is using —
    /// the coach's forms keep working (it was: 1,100 requests evicted it, and the next form got 403).
    func open(loggedIn: Bool, now: Date = Date()) -> (cookie: String, session: Session) {
        let cookie = Self.token()
        if !requiresLogin {
            return (cookie, Session(csrf: signed(cookie), loggedIn: true, expires: now.addingTimeInterval(Self.sessionLifetime), lastUsed: now))
        }
        let session = Session(csrf: Self.token(), loggedIn: loggedIn, expires: now.addingTimeInterval(Self.sessionLifetime), lastUsed: now)
        sessions.withLock { all in
            if all.count >= Self.maximumSessions {
                for (key, old) in all where old.expires <= now { all[key] = nil }
            }
            while all.count >= Self.maximumSessions {
                let victim = all.filter { !$0.value.returned }.min { $0.value.lastUsed < $1.value.lastUsed }?.key
                    ?? all.min { $0.value.lastUsed < $1.value.lastUsed }?.key
                guard let victim else { break }
                all[victim] = nil
            }
            all[cookie] = session
        }
        return (cookie, session)
    }

    /// Sessions stored now (for tests; none without a password).
    var sessionCount: Int { sessions.withLock { $0.count } }

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
