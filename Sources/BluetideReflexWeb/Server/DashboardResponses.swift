import BluetideCharts
import Foundation
import Hummingbird

/// Building the dashboard's HTTP responses: pages, JSON, redirects, static assets.
enum DashboardResponses {
    /// An HTML page.
    static func page(_ html: HTML, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: withFormTokens(html.markup, token: RequestSecurity.csrfToken))))
    }

    /// `markup` with the session's CSRF token as a hidden `_csrf` field in every POST form.
    static func withFormTokens(_ markup: String, token: String?) -> String {
        guard let token, markup.contains("<form") else { return markup }
        var out = ""
        var rest = markup[...]
        while let start = rest.range(of: "<form") {
            guard let end = rest[start.upperBound...].firstIndex(of: ">") else { break }
            let tag = rest[start.lowerBound...end]
            out += rest[..<start.lowerBound]
            out += tag
            if tag.contains("method=\"post\"") {
                out += "<input type=\"hidden\" name=\"_csrf\" value=\"\(MarkupEscaping.escape(token))\">"
            }
            rest = rest[rest.index(after: end)...]
        }
        out += rest
        return out
    }

    /// A text asset (stylesheet, script).
    static func asset(_ text: String, contentType: String) -> Response {
        Response(status: .ok, headers: [.contentType: contentType, .cacheControl: "no-cache"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A JSON document (keys sorted, dates ISO 8601).
    static func json<Value: Encodable>(_ value: Value, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = (try? encoder.encode(value)) ?? Data("{\"error\":\"could not encode the answer\"}".utf8)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A CSV file to download (`Content-Disposition: attachment`), UTF-8.
    static func csv(_ text: String, fileName: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/csv; charset=utf-8", .cacheControl: "no-store",
                                        .contentDisposition: "attachment; filename=\"\(fileName)\""],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// `303 See Other` to `location` (after a successful form).
    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    /// The body of a form submission, decoded (at most 1 MiB).
    static func form(_ request: Request) async throws -> FormFields {
        var request = request
        let buffer = try await request.collectBody(upTo: 1 << 20)
        return FormFields(encoded: String(buffer: buffer))
    }

    /// The query string's fields.
    static func query(_ request: Request) -> FormFields {
        FormFields(encoded: request.uri.query ?? "")
    }
}

/// The JSON shape of a refused request: a sentence, and the problem with each field.
struct APIError: Encodable, Sendable {
    /// One problem with one field.
    struct Field: Encodable, Sendable {
        var field: String
        var label: String
        var expected: String
        var got: String?
        var message: String
    }

    var error: String
    var errors: [Field]

    init(_ error: String, fields: FormErrors? = nil) {
        self.error = error
        errors = (fields?.errors ?? []).map {
            Field(field: $0.field, label: $0.label, expected: $0.expected, got: $0.got, message: $0.description)
        }
    }
}
