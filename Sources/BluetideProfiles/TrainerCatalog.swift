// FTMS and Tacx FE-C entries for ProfileCatalog.
extension ProfileCatalog {
    static let trainerProfiles: [ProfileDescriptor] = []
}
