import BluetideHCI

/// Opens transports from their specs (see ``TransportSpec``; schemes added from outside:
/// ``TransportRegistry``).
public enum Transport {
    /// Opens `spec`: connects, listens and waits for the controller (`tcp-server`), or opens the
    /// device; wraps the result in a ``SnoopingTransport`` when the spec has `+snoop:FILE`.
    public static func open(_ spec: TransportSpec) async throws -> any HCITransport {
        // Create the capture first, so a bad path fails before a device is taken.
        let writer = try spec.snoopPath.map { try BTSnoopFileWriter(path: $0) }
        let transport: any HCITransport
        do {
            transport = try await openUnwrapped(spec.kind)
        } catch {
            await writer?.close()
            throw error
        }
        guard let writer else { return transport }
        return SnoopingTransport(wrapping: transport, writer: writer)
    }

    /// Parses and opens `spec` (e.g. `"tcp-client:127.0.0.1:9000+snoop:x.btsnoop"`).
    public static func open(_ spec: String) async throws -> any HCITransport {
        try await open(TransportSpec(parsing: spec))
    }

    private static func openUnwrapped(_ kind: TransportSpec.Kind) async throws -> any HCITransport {
        switch kind {
        case let .tcpClient(host, port):
            return try await TCPClientTransport.connect(host: host, port: port)
        case let .tcpServer(host, port):
            let server = try await TCPServerTransport.listen(host: host, port: port)
            do {
                try await server.waitForClient()
            } catch {
                await server.close()
                throw error
            }
            return server
        case let .serial(path, baudRate, rtsCts):
            return try SerialTransport.open(path: path, baudRate: baudRate, rtsCts: rtsCts)
        case let .hciSocket(index):
            return try HCISocketTransport.open(index: index)
        case let .virtual(name):
            return await VirtualTransport.attach(toLinkNamed: name ?? "default")
        case let .registered(scheme, argument):
            guard let registered = TransportRegistry.scheme(named: scheme) else {
                throw TransportError.unavailable("transport scheme \"\(scheme)\" is no longer registered")
            }
            return try await registered.open(argument: argument)
        }
    }
}
