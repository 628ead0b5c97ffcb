// Hang guards (`withRunTimeLimit`) and ManualClock live in the shared support target; every test
// that imports the test support gets them too.
@_exported import BluetideSupport
