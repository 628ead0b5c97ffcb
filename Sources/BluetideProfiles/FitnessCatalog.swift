// Heart Rate, Battery, Device Information, CSC, Cycling Power entries for ProfileCatalog.
extension ProfileCatalog {
    static let fitnessProfiles: [ProfileDescriptor] = []
}
