import BluetideReflexWeb
import Testing

/// `serve`'s listening address, host names and browser addresses, without the argument parser.
@Suite("DashboardAddress")
struct DashboardAddressTests {
    @Test func defaultsToThisComputerOnlyAndToEveryInterfaceWithLan() throws {
        #expect(try DashboardAddress.listenHost(given: nil, lan: false) == "127.0.0.1")
        #expect(try DashboardAddress.listenHost(given: nil, lan: true) == "0.0.0.0")
        #expect(try DashboardAddress.listenHost(given: "127.0.0.2", lan: false) == "127.0.0.2")
        #expect(try DashboardAddress.listenHost(given: "::1", lan: false) == "::1")
        #expect(try DashboardAddress.listenHost(given: "192.168.1.5", lan: true) == "192.168.1.5")
    }

    @Test func aNetworkAddressWithoutLanNamesTheFieldAndWhatCame() {
        #expect(throws: DashboardHostError(given: "0.0.0.0")) { try DashboardAddress.listenHost(given: "0.0.0.0", lan: false) }
        let error = DashboardHostError(given: "0.0.0.0")
        #expect(error.field == "--host")
        #expect(error.given == "0.0.0.0")
        #expect(error.description
            == "--host 0.0.0.0 would open the dashboard to the network: add --lan, which asks every phone for the coach's password")
    }

    @Test func hostNamesAreTheGivenNameAndWithLanTheMachinesNameAndItsLocalName() {
        #expect(DashboardAddress.hostNames(host: "127.0.0.1", lan: false, machineName: "gym-pi").isEmpty)
        #expect(DashboardAddress.hostNames(host: "LocalHost", lan: false, machineName: "gym-pi") == ["localhost"])
        #expect(DashboardAddress.hostNames(host: "::1", lan: false, machineName: nil).isEmpty)
        #expect(DashboardAddress.hostNames(host: "0.0.0.0", lan: true, machineName: "Gym-Pi.example.org")
            == ["gym-pi.example.org", "gym-pi.local"])
        #expect(DashboardAddress.hostNames(host: "0.0.0.0", lan: true, machineName: "").isEmpty)
    }

    @Test func urlsBracketIPv6AndListInterfacesForPhones() {
        #expect(DashboardAddress.urls(host: "127.0.0.1", port: 8080, interfaces: ["10.0.0.9"]) == ["http://127.0.0.1:8080"])
        #expect(DashboardAddress.urls(host: "::1", port: 8080, interfaces: []) == ["http://[::1]:8080"])
        #expect(DashboardAddress.urls(host: "0.0.0.0", port: 80, interfaces: ["10.0.0.9", "192.168.1.5"]) == [
            "http://localhost:80", "http://10.0.0.9:80   (from a phone on the same network)",
            "http://192.168.1.5:80   (from a phone on the same network)",
        ])
        #expect(DashboardAddress.interfaceAddresses().allSatisfy { !$0.hasPrefix("127.") })
    }
}
