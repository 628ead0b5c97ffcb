// COLMI R02, Punch (reflex trainer), Nordic UART / HM-10 entries for ProfileCatalog.
extension ProfileCatalog {
    static let deviceProfiles: [ProfileDescriptor] = []
}
