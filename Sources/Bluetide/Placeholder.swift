// Bluetide: filled in by its own work.
enum _BluetidePlaceholder {}
