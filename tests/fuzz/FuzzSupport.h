#pragma once

// Shared by the libFuzzer targets: a crash that the sanitizers do not catch (a broken invariant)
// is reported with FUZZ_CHECK, which aborts with the condition so libFuzzer saves the input.

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                                      \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #condition);       \
      std::abort();                                                                                \
    }                                                                                              \
  } while (false)
