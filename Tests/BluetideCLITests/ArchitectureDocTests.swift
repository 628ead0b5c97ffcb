import Foundation
import Testing

/// docs/ARCHITECTURE.md matches the code (issue 22 item 6): every type it names in backticks is
/// declared in Sources, and every package it lists is a dependency in Package.swift.
@Suite struct ArchitectureDocTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Swift standard library's names the page uses.
    static let standardLibrary: Set<String> = ["Sendable", "Int", "UInt32", "AsyncSequence", "Double", "String"]

    /// The layers of the page's diagram, named in its text.
    static let layers: Set<String> = ["Bluetide", "Base", "Host", "Profiles", "Transport", "Virtual", "Apps", "Backends"]

    /// Names declared in Sources and Tests (`struct`, `class`, `enum`, `actor`, `protocol`, `typealias`,
    /// `func` and `case` names, so `Bluetooth.open` style references resolve on their last part).
    static func declaredNames() throws -> Set<String> {
        var names: Set<String> = []
        let pattern = try NSRegularExpression(pattern: #"\b(?:struct|class|enum|actor|protocol|typealias|func|var|let|case)\s+([A-Za-z_][A-Za-z0-9_]*)"#)
        for folder in ["Sources", "Tests"] {
        let files = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift", let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                if let range = Range(match.range(at: 1), in: text) { names.insert(String(text[range])) }
            }
        }
        }
        return names.union(standardLibrary).union(layers)
    }

    /// Names the notes page uses that are no Swift declaration of ours: the standard library's
    /// and other packages' types, a D-Bus interface, the layer table's column value.
    static let notesOutside: Set<String> = ["AsyncStream", "Clock", "Duration", "AES", "P256", "ObjectManager", "App", "Package"]

    /// The package's target and product names, from Package.swift (`name: "X"`, `product(name: "X"`).
    static func packageNames() throws -> Set<String> {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"name:\s*"([A-Za-z0-9_]+)""#)
        var names: Set<String> = []
        for match in pattern.matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)) {
            if let range = Range(match.range(at: 1), in: manifest) { names.insert(String(manifest[range])) }
        }
        return names
    }

    /// The names in `page`'s backticks that Sources do not declare (see ``everyTypeThePageNamesExists()``).
    static func missingNames(in page: String, declared: Set<String>) throws -> [String] {
        // `Name`, `Name.member`, `Name(on:)`: identifiers that start with a capital letter.
        let code = try NSRegularExpression(pattern: #"`([A-Z][A-Za-z0-9]*)(?:\.([A-Za-z][A-Za-z0-9]*))?(?:\([^`]*\))?`"#)
        var missing: [String] = []
        for match in code.matches(in: page, range: NSRange(page.startIndex..., in: page)) {
            guard let type = Range(match.range(at: 1), in: page).map({ String(page[$0]) }) else { continue }
            let member = Range(match.range(at: 2), in: page).map { String(page[$0]) }
            if member == "swift" || member == "md" { continue }  // a file name: `Package.swift`, `ARCHITECTURE.md`
            if !declared.contains(type) { missing.append(type) }
            if let member, !declared.contains(member), !notesOutside.contains(type) { missing.append("\(type).\(member)") }
        }
        return missing
    }

    /// docs/ARCHITECTURE-NOTES.md too: every type it names exists, every target it names is one.
    @Test func everyNameTheNotesPageUsesExists() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE-NOTES.md"), encoding: .utf8)
        let declared = try Self.declaredNames().union(Self.packageNames()).union(Self.notesOutside)
        #expect(declared.contains("BluetideReflexCoach") && declared.contains("NIOCore"), "the manifest's names were read")
        let missing = try Self.missingNames(in: page, declared: declared)
        #expect(missing.isEmpty, "docs/ARCHITECTURE-NOTES.md names what neither Sources nor Package.swift declare: \(missing)")
    }

    @Test func everyTypeThePageNamesExists() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let declared = try Self.declaredNames()
        #expect(declared.contains("HostCore") && declared.contains("Connection"), "the scan found the sources")
        // `Name`, `Name.member`, `Name(on:)`: identifiers that start with a capital letter.
        let code = try NSRegularExpression(pattern: #"`([A-Z][A-Za-z0-9]*)(?:\.([A-Za-z][A-Za-z0-9]*))?(?:\([^`]*\))?`"#)
        var missing: [String] = []
        for match in code.matches(in: page, range: NSRange(page.startIndex..., in: page)) {
            guard let type = Range(match.range(at: 1), in: page).map({ String(page[$0]) }) else { continue }
            if !declared.contains(type) { missing.append(type) }
            if let member = Range(match.range(at: 2), in: page).map({ String(page[$0]) }), !declared.contains(member) {
                missing.append("\(type).\(member)")
            }
        }
        #expect(missing.isEmpty, "docs/ARCHITECTURE.md names what Sources do not declare: \(missing)")
    }

    @Test func everyPackageThePageListsIsADependency() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let section = try #require(page.range(of: "## Dependencies").map { String(page[$0.upperBound...]) })
        let listed = ["swift-nio", "swift-argument-parser", "swift-log", "swift-collections", "swift-async-algorithms",
                      "swift-crypto", "GRDB.swift", "hummingbird", "hummingbird-websocket", "swift-service-lifecycle", "Yams"]
            .filter { section.range(of: "\\b\($0)\\b", options: [.regularExpression, .caseInsensitive]) != nil }
        #expect(listed.count >= 8, "the section lists the dependencies: \(listed)")
        for package in listed {
            #expect(manifest.contains("/\(package)\"") || manifest.contains("/\(package).git\""), "docs/ARCHITECTURE.md lists \(package), which Package.swift does not depend on")
        }
    }
}
