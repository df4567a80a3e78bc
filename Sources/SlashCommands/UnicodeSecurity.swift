import CICU

/// Unicode's security mechanisms for identifiers (UTS #39) and NFKC, from the
/// system ICU (`Sources/CICU`): the confusables data, script resolution and
/// restriction levels are ICU's, kept in step with Unicode by its maintainers,
/// rather than tables of our own.
enum UnicodeSecurity {
    /// `text` in Normalization Form KC: compatibility characters become what they
    /// stand for ("Ａｌｉｃｅ" is "Alice", a no-break space a space).
    static func nfkc(_ text: String) -> String {
        // ASCII is its own NFKC: most names never reach ICU.
        guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { return text }
        guard let normalizer = ICU.shared.nfkc else { return text }
        let source = Array(text.utf16)
        var capacity = source.count * 2 + 16
        for _ in 0..<2 {
            var status = U_ZERO_ERROR
            var output = [UChar](repeating: 0, count: capacity)
            let length = Int(cw_unorm2_normalize(normalizer, source, Int32(source.count), &output, Int32(capacity), &status))
            if status == U_BUFFER_OVERFLOW_ERROR {
                capacity = length
                continue
            }
            guard status.rawValue <= U_ZERO_ERROR.rawValue else { return text }
            return String(decoding: output[..<length], as: UTF16.self)
        }
        return text
    }

    /// The skeleton of UTS #39 section 4: two strings whose skeletons are equal
    /// can be mistaken for each other ("Alice" and "AIice", Latin and Cyrillic
    /// "а"). Only for comparing: a skeleton is not meant to be shown.
    static func skeleton(_ text: String) -> String {
        guard let checker = ICU.shared.checker else { return text }
        var bytes = Array(text.utf8)
        bytes.append(0)
        var capacity = bytes.count * 4 + 16
        for _ in 0..<2 {
            var status = U_ZERO_ERROR
            var output = [CChar](repeating: 0, count: capacity)
            let length = bytes.withUnsafeBufferPointer { input in
                input.withMemoryRebound(to: CChar.self) { input in
                    Int(cw_uspoof_getSkeletonUTF8(checker, input.baseAddress, Int32(input.count - 1),
                                                  &output, Int32(capacity), &status))
                }
            }
            if status == U_BUFFER_OVERFLOW_ERROR {
                capacity = length + 1
                continue
            }
            guard status.rawValue <= U_ZERO_ERROR.rawValue else { return text }
            return String(decoding: output[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return text
    }

    /// Why `text` could pass for another name under UTS #39's checks, or nil:
    /// scripts mixed beyond the restriction level "moderately restrictive" (one
    /// script; or Latin with Han, Hiragana and Katakana, or with Hangul, or with
    /// one other script that is not Cyrillic, Greek or Cherokee, the ones whose
    /// letters pass for Latin ones), digits of two number systems, a mark repeated
    /// on one letter, a dot hidden over i or j.
    static func spoofingProblem(_ text: String) -> String? {
        guard let checker = ICU.shared.checker else {
            return "this server cannot check names for lookalike characters (its ICU did not load)"
        }
        guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        var status = U_ZERO_ERROR
        guard let result = cw_uspoof_openCheckResult(&status) else {
            return "this server cannot check names for lookalike characters (its ICU did not load)"
        }
        defer { cw_uspoof_closeCheckResult(result) }
        let failed = text.utf8CString.withUnsafeBufferPointer { input in
            cw_uspoof_check2UTF8(checker, input.baseAddress, Int32(input.count - 1), result, &status)
        }
        guard status.rawValue <= U_ZERO_ERROR.rawValue else {
            return "a name must be text this server can check for lookalike characters"
        }
        if failed & cw_uspoof_restriction_level_check() != 0 {
            return "a name mixes scripts whose letters look alike (\(scriptNames(text).joined(separator: " and "))); "
                + "write it in one script, or Latin with Chinese, Japanese or Korean"
        }
        if failed & cw_uspoof_mixed_numbers_check() != 0 {
            return "a name mixes digits of different number systems"
        }
        if failed & cw_uspoof_invisible_check() != 0 {
            return "a name cannot repeat a mark on one letter (the repeat is invisible)"
        }
        if failed & cw_uspoof_hidden_overlay_check() != 0 {
            return "a name cannot put a dot over i or j, where it cannot be seen"
        }
        return nil
    }

    /// The scripts of `text`'s letters, in order of appearance ("Latin", "Cyrillic").
    static func scriptNames(_ text: String) -> [String] {
        var names: [String] = []
        for scalar in text.unicodeScalars {
            var status = U_ZERO_ERROR
            let script = cw_uscript_getScript(UChar32(bitPattern: scalar.value), &status)
            guard status.rawValue <= U_ZERO_ERROR.rawValue,
                  script != USCRIPT_COMMON, script != USCRIPT_INHERITED, script != USCRIPT_UNKNOWN,
                  let cName = cw_uscript_getName(script) else { continue }
            let name = String(cString: cName).replacingUnderscores()
            if !names.contains(name) { names.append(name) }
        }
        return names
    }
}

private extension String {
    func replacingUnderscores() -> String { String(map { $0 == "_" ? " " : $0 }) }
}

/// ICU's spoof checker and NFKC normalizer, made once. ICU documents a
/// configured checker as safe to use from several threads for checks and
/// skeletons (uspoof.h: "thread safe"), and the normalizer instance as shared
/// and immutable; both live for the whole process.
private final class ICU: @unchecked Sendable {
    static let shared = ICU()

    let checker: OpaquePointer?
    let nfkc: OpaquePointer?

    private init() {
        var status = U_ZERO_ERROR
        let checker = cw_uspoof_open(&status)
        if let checker, status.rawValue <= U_ZERO_ERROR.rawValue {
            cw_uspoof_setChecks(checker, cw_uspoof_checks_for_names(), &status)
            cw_uspoof_setRestrictionLevel(checker, cw_uspoof_moderately_restrictive())
        }
        self.checker = status.rawValue <= U_ZERO_ERROR.rawValue ? checker : nil
        var normalizerStatus = U_ZERO_ERROR
        let nfkc = cw_unorm2_getNFKCInstance(&normalizerStatus)
        self.nfkc = normalizerStatus.rawValue <= U_ZERO_ERROR.rawValue ? nfkc : nil
    }
}
