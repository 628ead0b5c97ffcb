// BluetideEmulation: filled in by its own work.
enum _BluetideEmulationPlaceholder {}
