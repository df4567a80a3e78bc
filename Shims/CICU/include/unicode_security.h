/*
 * Unicode's security mechanisms for names (UTS #39: confusable skeletons,
 * restriction levels) and NFKC, from the system ICU (Debian libicu-dev).
 *
 * This header names no ICU type: Foundation carries an ICU of its own whose
 * headers define the same C types differently, and a Swift module that saw both
 * would not build. The ICU headers stay inside unicode_security.c.
 */
#ifndef COWATCH_UNICODE_SECURITY_H
#define COWATCH_UNICODE_SECURITY_H

#include <stdint.h>

/* 1 when ICU's spoof checker and NFKC normalizer could be made. */
int cw_icu_available(void);

/* `text` (UTF-16) in NFKC into `output`; returns the length it needs (more than
 * `capacity`: call again with that much room), or -1 on an error. */
int32_t cw_icu_nfkc(const uint16_t *text, int32_t length, uint16_t *output, int32_t capacity);

/* The UTS #39 skeleton of `text` (UTF-8) into `output`; returns the length it
 * needs, as above, or -1. */
int32_t cw_icu_skeleton(const char *text, int32_t length, char *output, int32_t capacity);

/* The checks `text` (UTF-8) fails under the restriction level "moderately
 * restrictive", as a combination of the CW_ICU_* values below; -1 on an error. */
int32_t cw_icu_spoof_checks(const char *text, int32_t length);

#define CW_ICU_RESTRICTION_LEVEL 1
#define CW_ICU_MIXED_NUMBERS 2
#define CW_ICU_INVISIBLE 4
#define CW_ICU_HIDDEN_OVERLAY 8

/* The script of `scalar` ("Latin", "Cyrillic"), or NULL for the common,
 * inherited and unknown ones. */
const char *cw_icu_script_name(uint32_t scalar);

#endif
