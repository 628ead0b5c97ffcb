import BluetideBase
import Foundation
import Testing
@testable import BluetideGPIO

/// Checks BluetideGPIO's uAPI v2 layouts against the kernel's own `<linux/gpio.h>` (Debian's
/// `linux-libc-dev`): a small C program prints the struct sizes, field offsets, ioctl numbers
/// and enum values, and each must equal ours. No live chip is needed (Debian's kernels have no
/// gpio-sim or gpio-mockup). Skipped, with the reason, when no C compiler or header is present
/// outside CI; in CI (`CI` set) their absence is a failure.
@Suite struct GPIOKernelHeaderTests {
    static let compiler = ["cc", "gcc", "clang"].lazy.compactMap { GPIOKernelHeaderTests.which($0) }.first
    static let header = "/usr/include/linux/gpio.h"
    static let inCI = ProcessInfo.processInfo.environment["CI"] != nil
    static let runnable = inCI || (compiler != nil && FileManager.default.fileExists(atPath: header))

    static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Prints `name value` lines; sizes and offsets in bytes, the rest as unsigned decimals.
    static let program = #"""
        #include <stddef.h>
        #include <stdio.h>
        #include <linux/gpio.h>
        #define SIZE(s) printf("sizeof." #s " %zu\n", sizeof(struct s))
        #define OFF(s, f) printf("offsetof." #s "." #f " %zu\n", offsetof(struct s, f))
        #define VALUE(v) printf(#v " %llu\n", (unsigned long long)(v))
        int main(void) {
            SIZE(gpiochip_info); SIZE(gpio_v2_line_info); SIZE(gpio_v2_line_request); SIZE(gpio_v2_line_config);
            SIZE(gpio_v2_line_config_attribute); SIZE(gpio_v2_line_attribute); SIZE(gpio_v2_line_values);
            SIZE(gpio_v2_line_event);
            OFF(gpio_v2_line_request, consumer); OFF(gpio_v2_line_request, config); OFF(gpio_v2_line_request, num_lines);
            OFF(gpio_v2_line_request, event_buffer_size); OFF(gpio_v2_line_request, fd);
            OFF(gpio_v2_line_config, num_attrs); OFF(gpio_v2_line_config, attrs);
            OFF(gpio_v2_line_config_attribute, mask); OFF(gpio_v2_line_attribute, flags);
            OFF(gpio_v2_line_info, offset); OFF(gpio_v2_line_info, flags); OFF(gpio_v2_line_info, attrs);
            OFF(gpio_v2_line_event, id); OFF(gpio_v2_line_event, offset); OFF(gpio_v2_line_event, seqno);
            OFF(gpio_v2_line_event, line_seqno);
            VALUE(GPIO_GET_CHIPINFO_IOCTL); VALUE(GPIO_V2_GET_LINEINFO_IOCTL); VALUE(GPIO_V2_GET_LINE_IOCTL);
            VALUE(GPIO_V2_LINE_SET_CONFIG_IOCTL); VALUE(GPIO_V2_LINE_GET_VALUES_IOCTL); VALUE(GPIO_V2_LINE_SET_VALUES_IOCTL);
            VALUE(GPIO_MAX_NAME_SIZE); VALUE(GPIO_V2_LINES_MAX); VALUE(GPIO_V2_LINE_NUM_ATTRS_MAX);
            VALUE(GPIO_V2_LINE_FLAG_USED); VALUE(GPIO_V2_LINE_FLAG_ACTIVE_LOW); VALUE(GPIO_V2_LINE_FLAG_INPUT);
            VALUE(GPIO_V2_LINE_FLAG_OUTPUT); VALUE(GPIO_V2_LINE_FLAG_EDGE_RISING); VALUE(GPIO_V2_LINE_FLAG_EDGE_FALLING);
            VALUE(GPIO_V2_LINE_FLAG_OPEN_DRAIN); VALUE(GPIO_V2_LINE_FLAG_OPEN_SOURCE); VALUE(GPIO_V2_LINE_FLAG_BIAS_PULL_UP);
            VALUE(GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN); VALUE(GPIO_V2_LINE_FLAG_BIAS_DISABLED);
            VALUE(GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME);
            VALUE(GPIO_V2_LINE_ATTR_ID_FLAGS); VALUE(GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES); VALUE(GPIO_V2_LINE_ATTR_ID_DEBOUNCE);
            VALUE(GPIO_V2_LINE_EVENT_RISING_EDGE); VALUE(GPIO_V2_LINE_EVENT_FALLING_EDGE);
            return 0;
        }
        """#

    /// Compiles and runs the program; returns its `name value` pairs.
    static func kernelValues() throws -> [String: UInt64] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gpio-uapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("layout.c")
        let binary = directory.appendingPathComponent("layout")
        try Data(program.utf8).write(to: source)
        try run(try #require(compiler, "no C compiler (cc, gcc or clang) on PATH"), [source.path, "-o", binary.path])
        let output = try run(binary.path, [])
        var values: [String: UInt64] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = UInt64(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw CommandError(description: "\(executable) \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }

    struct CommandError: Error, CustomStringConvertible { let description: String }

    @Test(.enabled(if: runnable, "no C compiler or <linux/gpio.h> here (install gcc and linux-libc-dev; CI does)"))
    func layoutsIoctlsAndValuesMatchTheKernelHeader() throws {
        #expect(Self.compiler != nil, "CI needs a C compiler")
        #expect(FileManager.default.fileExists(atPath: Self.header), "CI needs linux-libc-dev's \(Self.header)")
        let kernel = try Self.kernelValues()
        // Where our encoder puts a request's fields, found by writing distinct values.
        let probe = GPIOUAPI.LineRequest(
            offsets: [], consumer: "Z", config: .init(flags: []), eventBufferSize: 0xAB, fd: 0x3C).bytes
        var configWriter = ByteWriter()
        GPIOUAPI.LineConfig(flags: [], attributes: [.init(.debounce(microseconds: 0), mask: 0)]).encode(to: &configWriter)
        let configProbe = configWriter.bytes  // attribute id 3 is the first byte 3
        let ours: [String: UInt64] = [
            "sizeof.gpiochip_info": UInt64(GPIOUAPI.chipInfoSize),
            "sizeof.gpio_v2_line_info": UInt64(GPIOUAPI.lineInfoSize),
            "sizeof.gpio_v2_line_request": UInt64(GPIOUAPI.lineRequestSize),
            "sizeof.gpio_v2_line_config": UInt64(GPIOUAPI.lineConfigSize),
            "sizeof.gpio_v2_line_config_attribute": UInt64(GPIOUAPI.configAttributeSize),
            "sizeof.gpio_v2_line_attribute": UInt64(GPIOUAPI.lineAttributeSize),
            "sizeof.gpio_v2_line_values": UInt64(GPIOUAPI.lineValuesSize),
            "sizeof.gpio_v2_line_event": UInt64(GPIOUAPI.lineEventSize),
            "offsetof.gpio_v2_line_request.consumer": probe.firstIndex(of: 0x5A).map { UInt64($0) } ?? .max,
            "offsetof.gpio_v2_line_request.config": 256 + UInt64(GPIOUAPI.maxNameSize),
            "offsetof.gpio_v2_line_request.num_lines": 288 + UInt64(GPIOUAPI.lineConfigSize),
            "offsetof.gpio_v2_line_request.event_buffer_size": probe.firstIndex(of: 0xAB).map { UInt64($0) } ?? .max,
            "offsetof.gpio_v2_line_request.fd": UInt64(GPIOUAPI.LineRequest.fdOffset),
            "offsetof.gpio_v2_line_config.num_attrs": 8,
            "offsetof.gpio_v2_line_config.attrs": configProbe.firstIndex(of: 3).map { UInt64($0) } ?? .max,
            "offsetof.gpio_v2_line_config_attribute.mask": UInt64(GPIOUAPI.lineAttributeSize),
            "offsetof.gpio_v2_line_attribute.flags": 8,
            "offsetof.gpio_v2_line_info.offset": 2 * UInt64(GPIOUAPI.maxNameSize),
            "offsetof.gpio_v2_line_info.flags": 72,
            "offsetof.gpio_v2_line_info.attrs": 80,
            "offsetof.gpio_v2_line_event.id": 8, "offsetof.gpio_v2_line_event.offset": 12,
            "offsetof.gpio_v2_line_event.seqno": 16, "offsetof.gpio_v2_line_event.line_seqno": 20,
            "GPIO_GET_CHIPINFO_IOCTL": UInt64(GPIOUAPI.getChipInfo),
            "GPIO_V2_GET_LINEINFO_IOCTL": UInt64(GPIOUAPI.getLineInfo),
            "GPIO_V2_GET_LINE_IOCTL": UInt64(GPIOUAPI.getLine),
            "GPIO_V2_LINE_SET_CONFIG_IOCTL": UInt64(GPIOUAPI.lineSetConfig),
            "GPIO_V2_LINE_GET_VALUES_IOCTL": UInt64(GPIOUAPI.lineGetValues),
            "GPIO_V2_LINE_SET_VALUES_IOCTL": UInt64(GPIOUAPI.lineSetValues),
            "GPIO_MAX_NAME_SIZE": UInt64(GPIOUAPI.maxNameSize),
            "GPIO_V2_LINES_MAX": UInt64(GPIOUAPI.maxLines),
            "GPIO_V2_LINE_NUM_ATTRS_MAX": UInt64(GPIOUAPI.maxConfigAttributes),
            "GPIO_V2_LINE_FLAG_USED": GPIOUAPI.LineFlag.used.rawValue,
            "GPIO_V2_LINE_FLAG_ACTIVE_LOW": GPIOUAPI.LineFlag.activeLow.rawValue,
            "GPIO_V2_LINE_FLAG_INPUT": GPIOUAPI.LineFlag.input.rawValue,
            "GPIO_V2_LINE_FLAG_OUTPUT": GPIOUAPI.LineFlag.output.rawValue,
            "GPIO_V2_LINE_FLAG_EDGE_RISING": GPIOUAPI.LineFlag.edgeRising.rawValue,
            "GPIO_V2_LINE_FLAG_EDGE_FALLING": GPIOUAPI.LineFlag.edgeFalling.rawValue,
            "GPIO_V2_LINE_FLAG_OPEN_DRAIN": GPIOUAPI.LineFlag.openDrain.rawValue,
            "GPIO_V2_LINE_FLAG_OPEN_SOURCE": GPIOUAPI.LineFlag.openSource.rawValue,
            "GPIO_V2_LINE_FLAG_BIAS_PULL_UP": GPIOUAPI.LineFlag.biasPullUp.rawValue,
            "GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN": GPIOUAPI.LineFlag.biasPullDown.rawValue,
            "GPIO_V2_LINE_FLAG_BIAS_DISABLED": GPIOUAPI.LineFlag.biasDisabled.rawValue,
            "GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME": GPIOUAPI.LineFlag.eventClockRealtime.rawValue,
            "GPIO_V2_LINE_ATTR_ID_FLAGS": UInt64(GPIOUAPI.AttributeID.flags.rawValue),
            "GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES": UInt64(GPIOUAPI.AttributeID.outputValues.rawValue),
            "GPIO_V2_LINE_ATTR_ID_DEBOUNCE": UInt64(GPIOUAPI.AttributeID.debounce.rawValue),
            "GPIO_V2_LINE_EVENT_RISING_EDGE": UInt64(GPIOUAPI.EventID.risingEdge.rawValue),
            "GPIO_V2_LINE_EVENT_FALLING_EDGE": UInt64(GPIOUAPI.EventID.fallingEdge.rawValue),
        ]
        #expect(Set(kernel.keys) == Set(ours.keys), "the C program printed every value")
        for (name, value) in ours.sorted(by: { $0.key < $1.key }) {
            #expect(kernel[name] == value, "\(name): kernel \(kernel[name].map(String.init) ?? "missing"), BluetideGPIO \(value)")
        }
    }
}
