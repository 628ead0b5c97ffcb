import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideHost
import BluetideProfiles
import Testing

@Suite struct AdvertisingPlanTests {
    @Test func everyModelsAdvertisingFitsTheLegacyLimitsWithNothingLeftOut() {
        for descriptor in EmulatorCatalog.all {
            let model = descriptor.make(0, EmulatorOptions())
            let plan = AdvertisingPlan(hints: model.advertising)
            #expect(plan.advertisingData.bytes.count <= AdvertisingData.legacyMaximumLength, "\(descriptor.name)")
            #expect((plan.scanResponse?.bytes.count ?? 0) <= AdvertisingData.legacyMaximumLength, "\(descriptor.name)")
            #expect(plan.omitted.isEmpty, "\(descriptor.name) left out \(plan.omitted)")
            let all = plan.advertisingData.elements + (plan.scanResponse?.elements ?? [])
            #expect(all.contains(.completeLocalName(model.advertising.localName)), "\(descriptor.name)")
            for uuid in model.advertising.serviceUUIDs {
                let listed = all.contains { element in
                    if case let .serviceUUIDs(uuids, _, _) = element { return uuids.contains(uuid) }
                    return false
                }
                #expect(listed, "\(descriptor.name) does not list \(uuid)")
            }
        }
    }

    @Test func aLongNameMovesToTheScanResponseAndIsShortenedOnlyWhenNothingElseFits() {
        let hints = AdvertisingHints(localName: "Punch", serviceUUIDs: [PunchUUID.service])
        let long = String(repeating: "N", count: 40)
        let plan = AdvertisingPlan(hints: hints, name: long)
        #expect(plan.advertisingData.bytes.count <= 31)
        let response = plan.scanResponse?.elements ?? []
        #expect(response.contains { if case .shortenedLocalName = $0 { true } else { false } })
        #expect(plan.omitted.isEmpty)
    }

    @Test func mergedHintsKeepTheFirstNameAndEveryService() {
        let merged = AdvertisingPlan.merged([HeartRateModel().advertising, BatteryModel().advertising])
        #expect(merged.localName == HeartRateModel().advertising.localName)
        #expect(Set(merged.serviceUUIDs).isSuperset(of: Set(BatteryModel().advertising.serviceUUIDs)))
    }
}
