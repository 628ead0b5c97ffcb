import Foundation

/// Writes a ride as Garmin Training Center XML (TCX v2), which Strava, TrainingPeaks and
/// GoldenCheetah import: one Biking activity, one lap, one trackpoint per sample with time,
/// distance, heart rate and cadence, and speed and power in the ActivityExtension v2 `TPX`
/// element. Elements are written in the order the schema requires; a missing value is left out,
/// never written as zero.
public enum TCXWriter {
    /// The TCX document for `samples` of a ride that started at `start`.
    public static func document(samples: [RideSample], start: Date, notes: String? = nil) -> String {
        let points = samples.sorted { $0.time < $1.time }
        let duration = points.last.map { $0.time } ?? 0
        let distance = points.last?.distanceMeters ?? 0
        let heartRates = points.compactMap(\.heartRateBpm).filter { $0 > 0 }
        let powers = points.compactMap(\.powerWatts)
        let cadences = points.compactMap(\.cadenceRpm)
        let speeds = points.compactMap(\.speedKmh)
        // Energy from power: kJ of mechanical work ≈ kcal burnt (a 20–25 % efficiency and 4.184 J/cal cancel out).
        var joules = 0.0
        for (a, b) in zip(points, points.dropFirst()) { joules += Double(a.powerWatts ?? 0) * min(b.time - a.time, 3) }
        let id = timestamp(start)
        var x = """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">
              <Activities>
                <Activity Sport="Biking">
                  <Id>\(id)</Id>
                  <Lap StartTime="\(id)">
                    <TotalTimeSeconds>\(RideFormat.fixed(duration, 1))</TotalTimeSeconds>
                    <DistanceMeters>\(RideFormat.fixed(distance, 1))</DistanceMeters>

            """
        if let top = speeds.max() { x += "        <MaximumSpeed>\(RideFormat.fixed(top / 3.6, 2))</MaximumSpeed>\n" }
        x += "        <Calories>\(Int((joules / 1000).rounded()))</Calories>\n"
        if !heartRates.isEmpty {
            let average = Double(heartRates.reduce(0, +)) / Double(heartRates.count)
            x += "        <AverageHeartRateBpm><Value>\(min(255, Int(average.rounded())))</Value></AverageHeartRateBpm>\n"
            x += "        <MaximumHeartRateBpm><Value>\(min(255, heartRates.max()!))</Value></MaximumHeartRateBpm>\n"
        }
        x += "        <Intensity>Active</Intensity>\n"
        if !cadences.isEmpty {
            x += "        <Cadence>\(min(254, Int((cadences.reduce(0, +) / Double(cadences.count)).rounded())))</Cadence>\n"
        }
        x += "        <TriggerMethod>Manual</TriggerMethod>\n        <Track>\n"
        for point in points {
            x += "          <Trackpoint>\n"
            x += "            <Time>\(timestamp(start.addingTimeInterval(point.time)))</Time>\n"
            x += "            <DistanceMeters>\(RideFormat.fixed(point.distanceMeters, 2))</DistanceMeters>\n"
            if let bpm = point.heartRateBpm, bpm > 0 {
                x += "            <HeartRateBpm><Value>\(min(255, bpm))</Value></HeartRateBpm>\n"
            }
            if let rpm = point.cadenceRpm { x += "            <Cadence>\(min(254, Int(rpm.rounded())))</Cadence>\n" }
            if point.speedKmh != nil || point.powerWatts != nil {
                x += "            <Extensions>\n              <ns3:TPX>\n"
                if let kmh = point.speedKmh { x += "                <ns3:Speed>\(RideFormat.fixed(kmh / 3.6, 3))</ns3:Speed>\n" }
                if let watts = point.powerWatts { x += "                <ns3:Watts>\(max(0, watts))</ns3:Watts>\n" }
                x += "              </ns3:TPX>\n            </Extensions>\n"
            }
            x += "          </Trackpoint>\n"
        }
        x += "        </Track>\n"
        if !powers.isEmpty || !speeds.isEmpty {
            x += "        <Extensions>\n          <ns3:LX>\n"
            if !speeds.isEmpty { x += "            <ns3:AvgSpeed>\(RideFormat.fixed(speeds.reduce(0, +) / Double(speeds.count) / 3.6, 3))</ns3:AvgSpeed>\n" }
            if !powers.isEmpty {
                x += "            <ns3:AvgWatts>\(max(0, Int((Double(powers.reduce(0, +)) / Double(powers.count)).rounded())))</ns3:AvgWatts>\n"
                x += "            <ns3:MaxWatts>\(max(0, powers.max()!))</ns3:MaxWatts>\n"
            }
            x += "          </ns3:LX>\n        </Extensions>\n"
        }
        x += "      </Lap>\n"
        if let notes, !notes.isEmpty { x += "      <Notes>\(escape(notes))</Notes>\n" }
        x += """
                  <Creator xsi:type="Device_t">
                    <Name>Bluetide</Name>
                    <UnitId>0</UnitId>
                    <ProductID>0</ProductID>
                    <Version><VersionMajor>0</VersionMajor><VersionMinor>1</VersionMinor></Version>
                  </Creator>
                </Activity>
              </Activities>
            </TrainingCenterDatabase>

            """
        return x
    }

    /// `2026-11-23T23:02:59.000Z` (UTC, milliseconds).
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// Writes a ride's samples as CSV for spreadsheets and pandas: one row per sample, empty cells
/// for missing values.
public enum RideCSVWriter {
    /// The header row.
    public static let header = "time_s,timestamp,speed_kmh,cadence_rpm,power_w,heart_rate_bpm,distance_m,target"

    /// The CSV text for `samples` of a ride that started at `start`.
    public static func document(samples: [RideSample], start: Date) -> String {
        var lines = [header]
        for s in samples {
            var cells: [String] = []
            cells.append(RideFormat.fixed(s.time, 3))
            cells.append(TCXWriter.timestamp(start.addingTimeInterval(s.time)))
            cells.append(s.speedKmh.map { RideFormat.fixed($0, 2) } ?? "")
            cells.append(s.cadenceRpm.map { RideFormat.fixed($0, 0) } ?? "")
            cells.append(s.powerWatts.map { String($0) } ?? "")
            cells.append(s.heartRateBpm.map { String($0) } ?? "")
            cells.append(RideFormat.fixed(s.distanceMeters, 2))
            cells.append(s.target.map { "\"\($0)\"" } ?? "")
            lines.append(cells.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
