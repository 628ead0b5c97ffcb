import BluetideHCI

/// Human names of the commands an LE host sends, for error messages ("LE Set PHY (0x2032)").
public enum HCICommandNames {
    static let names: [UInt16: String] = [
        0x0406: "Disconnect", 0x041D: "Read Remote Version Information",
        0x0C01: "Set Event Mask", 0x0C03: "Reset", 0x0C2D: "Read Transmit Power Level",
        0x0C63: "Set Event Mask Page 2", 0x0C6D: "Write LE Host Support",
        0x1001: "Read Local Version Information", 0x1002: "Read Local Supported Commands",
        0x1003: "Read Local Supported Features", 0x1005: "Read Buffer Size", 0x1009: "Read BD_ADDR",
        0x1405: "Read RSSI",
        0x2001: "LE Set Event Mask", 0x2002: "LE Read Buffer Size", 0x2003: "LE Read Local Supported Features",
        0x2005: "LE Set Random Address", 0x2006: "LE Set Advertising Parameters",
        0x2008: "LE Set Advertising Data", 0x2009: "LE Set Scan Response Data",
        0x200A: "LE Set Advertising Enable", 0x200B: "LE Set Scan Parameters", 0x200C: "LE Set Scan Enable",
        0x200D: "LE Create Connection", 0x200E: "LE Create Connection Cancel",
        0x2013: "LE Connection Update", 0x2014: "LE Set Host Channel Classification",
        0x2015: "LE Read Channel Map", 0x2016: "LE Read Remote Features", 0x2017: "LE Encrypt",
        0x2018: "LE Rand", 0x2019: "LE Enable Encryption", 0x201A: "LE Long Term Key Request Reply",
        0x201B: "LE Long Term Key Request Negative Reply", 0x2022: "LE Set Data Length",
        0x2023: "LE Read Suggested Default Data Length", 0x2024: "LE Write Suggested Default Data Length",
        0x2025: "LE Read Local P-256 Public Key", 0x2026: "LE Generate DHKey",
        0x202F: "LE Read Maximum Data Length", 0x2030: "LE Read PHY", 0x2031: "LE Set Default PHY",
        0x2032: "LE Set PHY", 0x2036: "LE Set Extended Advertising Parameters",
        0x2037: "LE Set Extended Advertising Data", 0x2038: "LE Set Extended Scan Response Data",
        0x2039: "LE Set Extended Advertising Enable", 0x2041: "LE Set Extended Scan Parameters",
        0x2042: "LE Set Extended Scan Enable", 0x2043: "LE Extended Create Connection",
        0x2060: "LE Read Buffer Size v2",
    ]

    /// "Reset (0x0C03)", or "command 0x2099 (OGF 0x08, OCF 0x099)" when unnamed.
    public static func describe(_ opcode: HCIOpcode) -> String {
        if let name = names[opcode.rawValue] { return "\(name) (\(opcode))" }
        let ocf = String(opcode.ocf, radix: 16, uppercase: true)
        return "command \(opcode) (OGF \(hexByte(opcode.ogf)), OCF 0x\(String(repeating: "0", count: max(0, 3 - ocf.count)) + ocf))"
    }
}
