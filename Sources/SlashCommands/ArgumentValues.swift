/// Parsers for the argument types the commands share. They accept ASCII digits
/// only: no exponents, no `nan`, no `inf`, no hex, and a bounded number of digits,
/// so no input can overflow or smuggle a non-finite value into the core.
public enum ArgumentValues {
    /// The longest media time accepted, in seconds (about 11.5 days).
    public static let maximumTimeSeconds = 999_999.0

    /// `95`, `95.5`, `1:35`, `1:01:35`, `+10`, `-10`, `+1:30`.
    public static func time(_ token: Substring) -> TimeArgument? {
        var body = token
        var sign: Double? = nil
        if body.first == "+" { sign = 1; body = body.dropFirst() }
        else if body.first == "-" { sign = -1; body = body.dropFirst() }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            let isLast = index == parts.count - 1
            let value: Double
            if isLast {
                guard let seconds = decimal(part, maximumWholeDigits: 6) else { return nil }
                value = seconds
            } else {
                guard let whole = wholeNumber(part, maximumDigits: 6) else { return nil }
                value = Double(whole)
            }
            // Minutes and seconds after a colon are 0-59, as on any clock.
            if index > 0 && (value >= 60 || part.split(separator: ".").first.map({ $0.count > 2 }) ?? true) {
                return nil
            }
            total = total * 60 + value
        }
        guard total <= maximumTimeSeconds else { return nil }
        if let sign { return .relative(sign * total) }
        return .absolute(MediaTime(seconds: total))
    }

    /// A non-negative decimal: `10`, `0.5`, `1.25`; at most 6 fractional digits.
    public static func decimal(_ token: Substring, maximumWholeDigits: Int = 9) -> Double? {
        let pieces = token.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let wholeText = pieces.first, let whole = wholeNumber(wholeText, maximumDigits: maximumWholeDigits)
        else { return nil }
        guard pieces.count == 2 else { return Double(whole) }
        let fractionText = pieces[1]
        guard !fractionText.isEmpty, fractionText.count <= 6,
              let fraction = wholeNumber(fractionText, maximumDigits: 6)
        else { return nil }
        var scale = 1.0
        for _ in 0..<fractionText.count { scale *= 10 }
        return Double(whole) + Double(fraction) / scale
    }

    /// ASCII digits only, at most `maximumDigits` of them.
    public static func wholeNumber(_ token: Substring, maximumDigits: Int = 18) -> Int64? {
        guard !token.isEmpty, token.utf8.count <= maximumDigits else { return nil }
        var value: Int64 = 0
        for byte in token.utf8 {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        return value
    }

    /// `on`/`off` (also `yes`/`no`, `true`/`false`, `1`/`0`), any case.
    public static func toggle(_ token: Substring) -> Bool? {
        switch token.lowercased() {
        case "on", "yes", "true", "1": true
        case "off", "no", "false", "0": false
        default: nil
        }
    }
}
