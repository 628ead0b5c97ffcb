import Bluetide
import Foundation

/// Turns the ring's replies into tidy UTC samples. Pure: the ring day and calendar come in.
public enum RingHistoryRows {
    /// A day's heart-rate log: one row per measured slot (0 = not measured, skipped).
    public static func heartRate(_ log: COLMIHeartRateLog, day: Int, calendar: RingCalendar) -> [RingSample] {
        log.bpmBySlot.enumerated().compactMap { slot, bpm in
            bpm == 0 ? nil : RingSample(
                time: calendar.date(day: day, minute: slot * log.slotMinutes), kind: RingSampleKind.heartRate, value: Double(bpm), unit: "bpm")
        }
    }

    /// A day's quarter-hour records: steps, kcal and metres per active quarter hour. The record's
    /// own date is used (it names the ring day).
    public static func steps(_ detail: COLMISportDetail, calendar: RingCalendar) -> [RingSample] {
        detail.records.flatMap { r -> [RingSample] in
            let day = Int(COLMIDateTime(year: r.date.year, month: r.date.month, day: r.date.day).secondsSince1970 / 86_400)
            let time = calendar.date(day: day, minute: r.minuteOfDay)
            return [
                RingSample(time: time, kind: RingSampleKind.steps, value: Double(r.steps), unit: "steps"),
                RingSample(time: time, kind: RingSampleKind.calories, value: Double(detail.calories(of: r)) / 1000, unit: "kcal"),
                RingSample(time: time, kind: RingSampleKind.distance, value: Double(r.distanceMeters), unit: "m"),
            ]
        }
    }

    /// Stress or HRV half-hour slots of ring day `day` (0 = none, skipped).
    public static func halfHour(_ history: COLMIHalfHourHistory, day: Int, calendar: RingCalendar) -> [RingSample] {
        let isHRV = history.kind == "hrv"
        return history.valuesBySlot.enumerated().compactMap { slot, v in
            v == 0 ? nil : RingSample(
                time: calendar.date(day: day, minute: slot * 30), kind: isHRV ? RingSampleKind.hrv : RingSampleKind.stress,
                value: Double(v), unit: isHRV ? "ms" : "index")
        }
    }

    /// Sleep nights, grouped by the ring day each night ends on (`today − daysAgo`). Each period
    /// is a row of its stage's kind: minutes, at the period's start. A start after the end
    /// means the night began the evening before.
    public static func sleep(_ history: COLMISleepHistory, today: Int, calendar: RingCalendar) -> [(day: Int, rows: [RingSample])] {
        history.days.map { night in
            let day = today - Int(night.daysAgo)
            var minute = Int(night.startMinute) - (night.startMinute > night.endMinute ? 1440 : 0)
            var rows: [RingSample] = []
            for period in night.periods {
                let kind: String? = switch period.stage {
                case .light: RingSampleKind.sleepLight
                case .deep: RingSampleKind.sleepDeep
                case .rem: RingSampleKind.sleepREM
                case .awake: RingSampleKind.sleepAwake
                default: nil
                }
                if let kind, period.minutes > 0 {
                    rows.append(RingSample(time: calendar.date(day: day, minute: minute), kind: kind, value: Double(period.minutes), unit: "min"))
                }
                minute += Int(period.minutes)
            }
            return (day, rows)
        }
    }

    /// Hourly SpO2 (mean of minimum and maximum, as Gadgetbridge stores it), grouped by ring day.
    public static func spo2(_ history: COLMISpO2History, today: Int, calendar: RingCalendar) -> [(day: Int, rows: [RingSample])] {
        history.days.map { block in
            let day = today - Int(block.daysAgo)
            let rows = block.averagePercentByHour.enumerated().compactMap { hour, value in
                value.map { RingSample(time: calendar.date(day: day, minute: hour * 60), kind: RingSampleKind.spo2, value: Double($0), unit: "%") }
            }
            return (day, rows)
        }
    }

    /// Half-hourly skin temperature, grouped by ring day.
    public static func temperature(_ history: COLMITemperatureHistory, today: Int, calendar: RingCalendar) -> [(day: Int, rows: [RingSample])] {
        history.days.map { block in
            let day = today - Int(block.daysAgo)
            let rows = block.celsiusByHalfHour.enumerated().compactMap { slot, value in
                value.map {
                    RingSample(time: calendar.date(day: day, minute: slot * 30), kind: RingSampleKind.temperature, value: ($0 * 10).rounded() / 10, unit: "°C")
                }
            }
            return (day, rows)
        }
    }
}
