import BluetideBase

// The simulated athlete's behaviour and decisions are BluetideBase's (one athlete for the GPIO
// simulation and the emulated punch trainer); GPIO's API keeps its names.

/// How a simulated athlete behaves (``BluetideBase/AthleteBehaviour``).
public typealias AthleteBehaviour = BluetideBase.AthleteBehaviour
/// What a simulated athlete does when a target lights up (``BluetideBase/AthleteResponse``).
public typealias AthleteResponse = BluetideBase.AthleteResponse
/// The decisions of a simulated athlete (``BluetideBase/AthleteModel``).
public typealias AthleteModel = BluetideBase.AthleteModel
