// BluetideGPIO: filled in by its own work.
enum _BluetideGPIOPlaceholder {}
