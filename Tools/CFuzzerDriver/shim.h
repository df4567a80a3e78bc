#ifndef COWATCH_FUZZER_DRIVER_SHIM_H
#define COWATCH_FUZZER_DRIVER_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver, for programs that keep their own main: it parses the
/// fuzzer's flags from argc/argv and calls `callback` with every input. Defined
/// only when linking with -sanitize=fuzzer; nothing refers to it otherwise.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
