/* The system ICU (Debian libicu-dev): Unicode's security mechanisms (UTS #39:
 * confusable skeletons, restriction levels) and NFKC normalization, for names.
 *
 * Debian's ICU renames every C function with its version (uspoof_open becomes
 * uspoof_open_72) through macros, which Swift cannot call by their plain names:
 * these wrappers keep the version out of the Swift code. Their symbols (suffixed
 * _72, C++ namespace icu_72) do not clash with the ICU that Foundation bundles
 * (prefixed swift_, namespace icu_76), so both load in one process. */
#ifndef COWATCH_ICU_SHIM_H
#define COWATCH_ICU_SHIM_H

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uscript.h>
#include <unicode/uspoof.h>

static inline USpoofChecker *cw_uspoof_open(UErrorCode *status) { return uspoof_open(status); }

static inline void cw_uspoof_setChecks(USpoofChecker *checker, int32_t checks, UErrorCode *status) {
    uspoof_setChecks(checker, checks, status);
}

static inline void cw_uspoof_setRestrictionLevel(USpoofChecker *checker, URestrictionLevel level) {
    uspoof_setRestrictionLevel(checker, level);
}

static inline USpoofCheckResult *cw_uspoof_openCheckResult(UErrorCode *status) { return uspoof_openCheckResult(status); }

static inline void cw_uspoof_closeCheckResult(USpoofCheckResult *result) { uspoof_closeCheckResult(result); }

static inline int32_t cw_uspoof_check2UTF8(const USpoofChecker *checker, const char *text, int32_t length,
                                           USpoofCheckResult *result, UErrorCode *status) {
    return uspoof_check2UTF8(checker, text, length, result, status);
}

static inline URestrictionLevel cw_uspoof_getCheckResultRestrictionLevel(const USpoofCheckResult *result,
                                                                         UErrorCode *status) {
    return uspoof_getCheckResultRestrictionLevel(result, status);
}

static inline int32_t cw_uspoof_getSkeletonUTF8(const USpoofChecker *checker, const char *text, int32_t length,
                                                char *destination, int32_t capacity, UErrorCode *status) {
    return uspoof_getSkeletonUTF8(checker, 0, text, length, destination, capacity, status);
}

static inline const UNormalizer2 *cw_unorm2_getNFKCInstance(UErrorCode *status) { return unorm2_getNFKCInstance(status); }

static inline int32_t cw_unorm2_normalize(const UNormalizer2 *normalizer, const UChar *text, int32_t length,
                                          UChar *destination, int32_t capacity, UErrorCode *status) {
    return unorm2_normalize(normalizer, text, length, destination, capacity, status);
}

static inline UBool cw_u_isDefaultIgnorable(UChar32 c) { return u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT); }

static inline UScriptCode cw_uscript_getScript(UChar32 c, UErrorCode *status) { return uscript_getScript(c, status); }

static inline const char *cw_uscript_getName(UScriptCode script) { return uscript_getName(script); }

/* The check names and levels, as plain numbers Swift imports without their enum types. */
static inline int32_t cw_uspoof_checks_for_names(void) {
    return USPOOF_RESTRICTION_LEVEL | USPOOF_INVISIBLE | USPOOF_MIXED_NUMBERS | USPOOF_HIDDEN_OVERLAY;
}
static inline int32_t cw_uspoof_restriction_level_check(void) { return USPOOF_RESTRICTION_LEVEL; }
static inline int32_t cw_uspoof_invisible_check(void) { return USPOOF_INVISIBLE; }
static inline int32_t cw_uspoof_mixed_numbers_check(void) { return USPOOF_MIXED_NUMBERS; }
static inline int32_t cw_uspoof_hidden_overlay_check(void) { return USPOOF_HIDDEN_OVERLAY; }
static inline URestrictionLevel cw_uspoof_moderately_restrictive(void) { return USPOOF_MODERATELY_RESTRICTIVE; }

#endif
