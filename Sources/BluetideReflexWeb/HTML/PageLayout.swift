/// The frame every dashboard page shares: document head (phone-friendly viewport, our own
/// stylesheet), the navigation bar and the page's main content.
public enum PageLayout {
    /// The sections in the navigation bar.
    public enum Section: String, Sendable, CaseIterable {
        case athletes, sequences, run

        var title: String {
            switch self {
            case .athletes: return "Athletes"
            case .sequences: return "Sequences"
            case .run: return "Run"
            }
        }

        var path: String {
            switch self {
            case .athletes: return "/athletes"
            case .sequences: return "/sequences"
            case .run: return "/run"
            }
        }
    }

    /// A whole page: `title` in the tab and as the heading, `section` highlighted in the
    /// navigation, `script` set when the page needs our JavaScript (live run, sequence editor).
    public static func page(title: String, section: Section?, body: HTML, script: Bool = false) -> HTML {
        let navigation = Section.allCases.map { item -> HTML in
            let current: HTML = item == section ? " aria-current=\"page\"" : ""
            return "<a href=\"\(item.path)\"\(current)>\(item.title)</a>"
        }
        let leds = (0...5).map { target -> HTML in "<i class=\"target-\(target)\"></i>" }
        let scriptTag: HTML = script ? "<script src=\"/static/dashboard.js\" defer></script>\n" : ""
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · Reflex coach</title>
            <link rel="stylesheet" href="/static/dashboard.css">
            \(scriptTag)</head>
            <body>
            <header class="top"><a class="brand" href="/"><span class="leds" aria-hidden="true">\(leds)</span>Reflex coach</a><nav>\(navigation)</nav></header>
            <main>
            <h1>\(title)</h1>
            \(body)
            </main>
            <footer>Bluetide reflex trainer dashboard</footer>
            </body>
            </html>

            """
    }

    /// An error summary listing each problem, or nothing when there are none.
    public static func errorSummary(_ errors: FormErrors?) -> HTML {
        if let notice = errors?.notice {
            return "<div class=\"errors\" role=\"alert\" id=\"form-notice\"><p>\(notice)</p></div>\n"
        }
        guard let errors, !errors.errors.isEmpty else { return .empty }
        let items = errors.errors.map { error -> HTML in
            "<li data-field=\"\(error.field)\">\(error.description)</li>"
        }
        return """
            <div class="errors" role="alert"><p>Please correct \(errors.errors.count == 1 ? "this field" : "these fields"):</p><ul>\(items)</ul></div>

            """
    }

    /// A labelled text input with its error (if any) below it.
    public static func field(_ name: String, label: String, value: String, errors: FormErrors?, type: String = "text",
                             hint: String? = nil, required: Bool = false, attributes: HTML = .empty) -> HTML {
        let error = errors?.error(for: name)
        let invalid: HTML = error == nil ? "" : " aria-invalid=\"true\""
        let requiredAttribute: HTML = required ? " required" : ""
        let hintText: HTML = hint.map { "<small>\($0)</small>" } ?? ""
        let message: HTML = error.map { "<span class=\"field-error\">\($0.description)</span>" } ?? ""
        return """
            <label class="field"><span>\(label)</span><input type="\(type)" name="\(name)" value="\(value)"\(invalid)\(requiredAttribute)\(attributes)>\(hintText)\(message)</label>

            """
    }

    /// A coloured swatch for a target (LED colour), with its number and colour name for screen readers.
    public static func targetSwatch(_ target: UInt8) -> HTML {
        "<span class=\"swatch target-\(target)\" title=\"target \(target) (\(DisplayText.targetName(target)))\">\(target)</span>"
    }
}
