/// The commands this library models, for logs and dispatch by opcode.
public enum HCICommandCatalog {
    /// Every modelled command type.
    public static let all: [any HCICommand.Type] = [
        HCIDisconnect.self, HCISetEventMask.self, HCIReset.self,
        HCIReadLocalVersionInformation.self, HCIReadLocalSupportedCommands.self, HCIReadLocalSupportedFeatures.self,
        HCIReadBufferSize.self, HCIReadBDADDR.self, HCIReadRSSI.self,
        LESetEventMask.self, LEReadBufferSize.self, LEReadBufferSizeV2.self, LEReadLocalSupportedFeatures.self,
        LESetRandomAddress.self, LESetAdvertisingParameters.self, LESetAdvertisingData.self, LESetScanResponseData.self,
        LESetAdvertisingEnable.self, LESetScanParameters.self, LESetScanEnable.self,
        LECreateConnection.self, LECreateConnectionCancel.self, LEConnectionUpdate.self, LEReadRemoteFeatures.self,
        LEEnableEncryption.self, LELongTermKeyRequestReply.self, LELongTermKeyRequestNegativeReply.self,
        LESetDataLength.self, LEReadPHY.self, LESetPHY.self,
        LESetAdvertisingSetRandomAddress.self, LESetExtendedAdvertisingParameters.self, LESetExtendedAdvertisingData.self,
        LESetExtendedScanResponseData.self, LESetExtendedAdvertisingEnable.self, LEReadMaximumAdvertisingDataLength.self,
        LEReadNumberOfSupportedAdvertisingSets.self, LERemoveAdvertisingSet.self, LEClearAdvertisingSets.self,
        LESetExtendedScanParameters.self, LESetExtendedScanEnable.self, LEExtendedCreateConnection.self,
    ]

    private static let byOpcode: [HCIOpcode: any HCICommand.Type] = Dictionary(
        all.map { ($0.opcode, $0) }, uniquingKeysWith: { first, _ in first })

    /// The command type for an opcode, when modelled.
    public static func type(for opcode: HCIOpcode) -> (any HCICommand.Type)? { byOpcode[opcode] }

    /// The specification's name for an opcode, or its hex value.
    public static func name(for opcode: HCIOpcode) -> String { byOpcode[opcode]?.name ?? "command \(opcode)" }
}
