// BluetideRecording: filled in by its own work.
enum _BluetideRecordingPlaceholder {}
