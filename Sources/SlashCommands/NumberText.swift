/// Decimal text for numbers without Foundation's formatters, which are slow and
/// locale-dependent. Used by both encodings and by human-readable messages.
public enum NumberText {
    /// `value` rounded to `places` decimals (at most 6), with no trailing zeros:
    /// `1`, `1.5`, `12.345`. Non-finite values print as `0`: they never reach the
    /// wire because every typed value rejects them first.
    public static func decimal(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "0" }
        var places = Swift.max(0, Swift.min(6, places))
        // Fewer decimals for large values: a Double has about 16 digits in all.
        while places > 0 && value.magnitude * pow10(places) >= 9.0e15 { places -= 1 }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = (value.magnitude * Double(scale)).rounded()
        // Beyond 2^53 a Double has no fraction left to print; beyond Int64 the
        // shortest round-trip form (which JSON also accepts) is all there is.
        guard scaled < 9.0e15 else {
            return Int64(exactly: value.rounded()).map { String($0) } ?? value.description
        }
        let units = Int64(scaled)
        let whole = units / scale
        var fraction = units % scale
        var text = value < 0 && units != 0 ? "-\(whole)" : "\(whole)"
        guard fraction != 0 else { return text }
        var digits = places
        while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
        let fractionText = String(fraction)
        text += "." + String(repeating: "0", count: digits - fractionText.count) + fractionText
        return text
    }

    private static func pow10(_ exponent: Int) -> Double {
        var result = 1.0
        for _ in 0..<exponent { result *= 10 }
        return result
    }
}
