import CICU

/// Unicode's security mechanisms for identifiers (UTS #39) and NFKC, from the
/// system ICU (`Shims/CICU`, whose C keeps ICU's own types out of Swift): the confusables data, script resolution and
/// restriction levels are ICU's, kept in step with Unicode by its maintainers,
/// rather than tables of our own.
enum UnicodeSecurity {
    /// `text` in Normalization Form KC: compatibility characters become what they
    /// stand for ("Ａｌｉｃｅ" is "Alice", a no-break space a space).
    static func nfkc(_ text: String) -> String {
        // ASCII is its own NFKC: most names never reach ICU.
        guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { return text }
        let source = Array(text.utf16)
        var capacity = source.count * 2 + 16
        for _ in 0..<2 {
            var output = [UInt16](repeating: 0, count: capacity)
            let needed = Int(cw_icu_nfkc(source, Int32(source.count), &output, Int32(capacity)))
            guard needed >= 0 else { return text }
            if needed > capacity {
                capacity = needed
                continue
            }
            return String(decoding: output[..<needed], as: UTF16.self)
        }
        return text
    }

    /// The skeleton of UTS #39 section 4: two strings whose skeletons are equal
    /// can be mistaken for each other ("Alice" and "AIice", Latin and Cyrillic
    /// "а"). Only for comparing: a skeleton is not meant to be shown.
    static func skeleton(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var capacity = bytes.count * 4 + 16
        for _ in 0..<2 {
            var output = [CChar](repeating: 0, count: capacity)
            let needed = bytes.withUnsafeBufferPointer { input in
                input.withMemoryRebound(to: CChar.self) { input in
                    Int(cw_icu_skeleton(input.baseAddress, Int32(input.count), &output, Int32(capacity)))
                }
            }
            guard needed >= 0 else { return text }
            if needed > capacity {
                capacity = needed + 1
                continue
            }
            return String(decoding: output[..<needed].map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
        // ASCII is one script with one set of digits and no marks: nothing to find.
        guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        guard cw_icu_available() != 0 else {
            return "this server cannot check names for lookalike characters (its ICU did not load)"
        }
        let failed = text.utf8CString.withUnsafeBufferPointer { input in
            cw_icu_spoof_checks(input.baseAddress, Int32(input.count - 1))
        }
        guard failed >= 0 else {
            return "a name must be text this server can check for lookalike characters"
        }
        if failed & CW_ICU_RESTRICTION_LEVEL != 0 {
            return "a name mixes scripts whose letters look alike (\(scriptNames(text).joined(separator: " and "))); "
                + "write it in one script, or Latin with Chinese, Japanese or Korean"
        }
        if failed & CW_ICU_MIXED_NUMBERS != 0 {
            return "a name mixes digits of different number systems"
        }
        if failed & CW_ICU_INVISIBLE != 0 {
            return "a name cannot repeat a mark on one letter (the repeat is invisible)"
        }
        if failed & CW_ICU_HIDDEN_OVERLAY != 0 {
            return "a name cannot put a dot over i or j, where it cannot be seen"
        }
        return nil
    }

    /// The scripts of `text`'s letters, in order of appearance ("Latin", "Cyrillic").
    static func scriptNames(_ text: String) -> [String] {
        var names: [String] = []
        for scalar in text.unicodeScalars {
            guard let cName = cw_icu_script_name(scalar.value) else { continue }
            let name = String(cString: cName).replacingUnderscores()
            if !names.contains(name) { names.append(name) }
        }
        return names
    }
}

private extension String {
    func replacingUnderscores() -> String { String(map { $0 == "_" ? " " : $0 }) }
}
