/*
 * See include/unicode_security.h. Debian's ICU renames every C function with
 * its version (uspoof_open becomes uspoof_open_72) through macros, which is why
 * these calls live in C. Its symbols (suffixed _72) do not clash with the ICU
 * Foundation carries (prefixed swift_), so both load in one process.
 */
#include "unicode_security.h"

#include <pthread.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uscript.h>
#include <unicode/uspoof.h>

/* Made once and never changed or closed. Shared across threads because ICU says
 * so: functions that take a const checker (checks, skeletons) are thread safe
 * (uspoof.h, "Thread Safety"), and the NFKC instance is a singleton the caller
 * must not delete (unorm2.h). */
static USpoofChecker *checker;
static const UNormalizer2 *nfkc;
static pthread_once_t made = PTHREAD_ONCE_INIT;

static void make(void) {
    UErrorCode status = U_ZERO_ERROR;
    USpoofChecker *made_checker = uspoof_open(&status);
    if (made_checker && U_SUCCESS(status)) {
        uspoof_setChecks(made_checker,
                         USPOOF_RESTRICTION_LEVEL | USPOOF_INVISIBLE | USPOOF_MIXED_NUMBERS | USPOOF_HIDDEN_OVERLAY,
                         &status);
        uspoof_setRestrictionLevel(made_checker, USPOOF_MODERATELY_RESTRICTIVE);
    }
    if (U_SUCCESS(status))
        checker = made_checker;
    UErrorCode normalizer_status = U_ZERO_ERROR;
    const UNormalizer2 *instance = unorm2_getNFKCInstance(&normalizer_status);
    if (U_SUCCESS(normalizer_status))
        nfkc = instance;
}

int cw_icu_available(void) {
    pthread_once(&made, make);
    return checker && nfkc;
}

int32_t cw_icu_nfkc(const uint16_t *text, int32_t length, uint16_t *output, int32_t capacity) {
    if (!cw_icu_available())
        return -1;
    UErrorCode status = U_ZERO_ERROR;
    int32_t needed = unorm2_normalize(nfkc, (const UChar *)text, length, (UChar *)output, capacity, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR || U_SUCCESS(status))
        return needed;
    return -1;
}

int32_t cw_icu_skeleton(const char *text, int32_t length, char *output, int32_t capacity) {
    if (!cw_icu_available())
        return -1;
    UErrorCode status = U_ZERO_ERROR;
    int32_t needed = uspoof_getSkeletonUTF8(checker, 0, text, length, output, capacity, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR || U_SUCCESS(status))
        return needed;
    return -1;
}

int32_t cw_icu_spoof_checks(const char *text, int32_t length) {
    if (!cw_icu_available())
        return -1;
    UErrorCode status = U_ZERO_ERROR;
    USpoofCheckResult *result = uspoof_openCheckResult(&status);
    if (!result || U_FAILURE(status))
        return -1;
    int32_t failed = uspoof_check2UTF8(checker, text, length, result, &status);
    uspoof_closeCheckResult(result);
    if (U_FAILURE(status))
        return -1;
    int32_t checks = 0;
    if (failed & USPOOF_RESTRICTION_LEVEL)
        checks |= CW_ICU_RESTRICTION_LEVEL;
    if (failed & USPOOF_MIXED_NUMBERS)
        checks |= CW_ICU_MIXED_NUMBERS;
    if (failed & USPOOF_INVISIBLE)
        checks |= CW_ICU_INVISIBLE;
    if (failed & USPOOF_HIDDEN_OVERLAY)
        checks |= CW_ICU_HIDDEN_OVERLAY;
    return checks;
}

const char *cw_icu_script_name(uint32_t scalar) {
    UErrorCode status = U_ZERO_ERROR;
    UScriptCode script = uscript_getScript((UChar32)scalar, &status);
    if (U_FAILURE(status) || script == USCRIPT_COMMON || script == USCRIPT_INHERITED || script == USCRIPT_UNKNOWN)
        return 0;
    return uscript_getName(script);
}
