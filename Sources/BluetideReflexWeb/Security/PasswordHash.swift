import Crypto
import CryptoExtras
import Foundation

/// The coach's dashboard password, stored only as a salted PBKDF2-SHA256 hash (swift-crypto):
/// `pbkdf2-sha256$ROUNDS$SALT$HASH` with salt and hash in base64.
public enum PasswordHash {
    /// The setting the hash is stored under in the coach database.
    public static let settingKey = "dashboard.passwordHash"
    /// Iterations of PBKDF2 for new hashes (OWASP's figure for SHA-256).
    public static let rounds = 210_000
    /// Shortest password accepted, characters.
    public static let minimumLength = 8

    /// Why a new password was refused, in words.
    public static func problem(with password: String) -> String? {
        if password.count < minimumLength { return "the password needs at least \(minimumLength) characters" }
        if password.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "the password contains a control character"
        }
        return nil
    }

    /// A new hash of `password` with a fresh random salt.
    public static func make(_ password: String, rounds: Int = PasswordHash.rounds) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let hash = try derive(password, salt: salt, rounds: rounds)
        return "pbkdf2-sha256$\(rounds)$\(Data(salt).base64EncodedString())$\(Data(hash).base64EncodedString())"
    }

    /// True when `password` matches `stored` (compared in constant time).
    public static func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 4, parts[0] == "pbkdf2-sha256", let rounds = Int(parts[1]), (1_000...10_000_000).contains(rounds),
              let salt = Data(base64Encoded: parts[2]), let expected = Data(base64Encoded: parts[3]), expected.count == 32,
              let actual = try? derive(password, salt: Array(salt), rounds: rounds)
        else { return false }
        return zip(actual, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func derive(_ password: String, salt: [UInt8], rounds: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(from: Array(password.utf8), salt: salt, using: .sha256,
                                                     outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { Array($0) }
    }
}
