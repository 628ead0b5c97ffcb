/// Workout files for the parser tests. The `.zwo` ones carry the facts (elements, durations,
/// powers, repeats) of public Zwift workouts, written out here by hand; the `.erg`/`.mrc` ones
/// follow the course-file layout trainer apps exchange.
enum WorkoutFixtures {
    /// "Dijon" by Marinov (VO2 max, 60/60s), from the workouts bundled with snst/Flux
    /// (src/workouts/workouts.js): 2 × 8 × (60 s at 121 %, 60 s at 44 %) after a stepped warm-up.
    static let dijon = """
        <workout_file>
            <author>Marinov</author>
            <name>Dijon</name>
            <category>VO2 Max</category>
            <description>60/60s or 60 sec ON at 121% of FTP followed by 60 sec OFF. In 2 groups by 8 reps each.</description>
            <sportType>bike</sportType>
            <tags>
            </tags>
            <workout>
                <Warmup Duration="120" PowerLow="0.32" PowerHigh="0.39"/>
                <SteadyState Duration="60" Power="0.39"/>
                <SteadyState Duration="60" Power="0.47"/>
                <SteadyState Duration="60" Power="0.55"/>
                <SteadyState Duration="60" Power="0.63"/>
                <IntervalsT Repeat="2" OnDuration="30" OffDuration="30" OnPower="0.98" OffPower="0.63"/>
                <SteadyState Duration="120" Power="0.5"/>
                <IntervalsT Repeat="8" OnDuration="60" OffDuration="60" OnPower="1.21" OffPower="0.44"/>
                <SteadyState Duration="300" Power="0.40"/>
                <IntervalsT Repeat="8" OnDuration="60" OffDuration="60" OnPower="1.21" OffPower="0.44"/>
                <SteadyState Duration="300" Power="0.40"/>
                <Cooldown Duration="300" PowerLow="0.39" PowerHigh="0.32"/>
            </workout>
        </workout_file>
        """

    /// The opening of Zwift's own "The Long Ride" (Fondo plan, week 2), as kept in
    /// reviewdog/action-misspell's test data: an XML declaration, Zwift's bookkeeping elements,
    /// elements that are not self-closing because they hold `textevent`s, float powers as Zwift
    /// writes them, and an unknown `pace` attribute. Cut after the first three blocks.
    static let longRideOpening = """
        <?xml version="1.0"?>
        <workout_file>
        <uniqueId>ce0a2667-6b8e-4b9b-b76d-e7a57042cea2</uniqueId>
        <legacyIdHash>2043826971</legacyIdHash>
        <author>Zwift</author>
        <categoryOverride>Endurance</categoryOverride>
        <name>The Long Ride</name>
        <category>Fondo</category>
        <description>Long base ride &amp; endurance for the Zwift Fondo.</description>
        <sportType>bike</sportType>
        <tags/>
        <workout>
        <Warmup Duration="600" PowerLow="0.50449997" PowerHigh="0.75449997" pace="0">
        <textevent timeoffset="30" message="Hi and welcome to the Week 2 Long Ride." locIndex="1"/>
        <textevent timeoffset="150" message="We have a great workout here for you today." locIndex="2"/>
        </Warmup>
        <SteadyState Duration="300" Power="0.75449997" pace="0">
        <textevent timeoffset="106" message="5min at 75%." locIndex="6"/>
        </SteadyState>
        <IntervalsT Repeat="7" OnDuration="120" OffDuration="60" OnPower="0.95449996" OffPower="0.55449998" pace="0">
        <textevent timeoffset="66.00032" message="7 times two minute intervals." locIndex="7"/>
        </IntervalsT>
        </workout>
        </workout_file>
        """

    /// An `.erg` file: absolute watts, FTP 250, a 10-minute ramp 100→200 W, 3 × (5 min 280 W,
    /// 2 min 150 W) with instant changes, then 5 minutes at 120 W.
    static let erg = """
        [COURSE HEADER]
        VERSION = 2
        UNITS = ENGLISH
        DESCRIPTION = Threshold 3x5
        FILE NAME = threshold-3x5.erg
        FTP = 250
        MINUTES WATTS
        [END COURSE HEADER]
        [COURSE DATA]
        0.00\t100
        10.00\t200
        10.00\t280
        15.00\t280
        15.00\t150
        17.00\t150
        17.00\t280
        22.00\t280
        22.00\t150
        24.00\t150
        24.00\t280
        29.00\t280
        29.00\t120
        34.00\t120
        [END COURSE DATA]
        """

    /// An `.mrc` file: percent of FTP, a 5-minute warm-up ramp 50→75 % and 20 minutes at 90 %.
    static let mrc = """
        [COURSE HEADER]
        VERSION = 2
        UNITS = ENGLISH
        DESCRIPTION = Sweet spot 20
        FILE NAME = sweetspot-20.mrc
        MINUTES PERCENT
        [END COURSE HEADER]
        [COURSE DATA]
        0\t50
        5\t75
        5\t90
        25\t90
        [END COURSE DATA]
        """
}
