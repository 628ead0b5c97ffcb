// BluetideReflex: filled in by its own work.
enum _BluetideReflexPlaceholder {}
