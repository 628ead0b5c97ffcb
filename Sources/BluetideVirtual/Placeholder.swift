// BluetideVirtual: see docs/ARCHITECTURE-NOTES.md. Filled in by its own issue work.
enum _BluetideVirtualPlaceholder {}
