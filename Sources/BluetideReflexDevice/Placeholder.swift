// BluetideReflexDevice: filled in by its own work.
enum _BluetideReflexDevicePlaceholder {}
