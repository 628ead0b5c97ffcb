import BluetideCore

// The simulated athlete's behaviour and decisions are BluetideCore's (one athlete for the GPIO
// simulation and the emulated punch trainer); GPIO's API keeps its names.

/// How a simulated athlete behaves (``BluetideCore/AthleteBehaviour``).
public typealias AthleteBehaviour = BluetideCore.AthleteBehaviour
/// What a simulated athlete does when a target lights up (``BluetideCore/AthleteResponse``).
public typealias AthleteResponse = BluetideCore.AthleteResponse
/// The decisions of a simulated athlete (``BluetideCore/AthleteModel``).
public typealias AthleteModel = BluetideCore.AthleteModel
