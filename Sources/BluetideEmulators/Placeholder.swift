// BluetideEmulators: filled in by its own work.
enum _BluetideEmulatorsPlaceholder {}
