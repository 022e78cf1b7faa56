/* Locating ../shared test data. Tests that need it skip loudly when it is
 * missing, never pass silently. */
#ifndef GENLOOP_TESTS_SHARED_DATA_H
#define GENLOOP_TESTS_SHARED_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 1 in a build with AddressSanitizer (gcc or clang), where a process start
 * costs ~0.1 s and arithmetic runs several times slower: tests thin out the
 * repetitions that only compare numbers or messages, never the inputs that
 * reach memory (the release suite keeps every repetition). */
#if defined(__SANITIZE_ADDRESS__)
#define TD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TD_SANITIZED 1
#endif
#endif
#ifndef TD_SANITIZED
#define TD_SANITIZED 0
#endif

/* The shared folder (GENLOOP_SHARED, ../shared or ../../shared), or NULL. */
const char *td_shared_dir(void);
/* In a Criterion test: the shared folder, or a loud skip of the test (on
 * stderr and in its report) when it is missing. A macro, so that the
 * support library itself needs no Criterion. */
#define td_need_shared()                                                                           \
    (td_shared_dir()                                                                               \
         ? td_shared_dir()                                                                         \
         : (fprintf(stderr, "SKIP: ../shared not found (set GENLOOP_SHARED)\n"),                   \
            cr_skip_test("SKIP: ../shared not found (set GENLOOP_SHARED)"), (const char *)NULL))
/* Writes "<shared>/<rel>" into buf; false when the folder is missing. */
bool td_path(char *buf, size_t cap, const char *rel);
/* td_path in a Criterion test, which it skips loudly when the folder is missing */
#define td_need_path(buf, cap, rel) ((void)td_need_shared(), (void)td_path(buf, cap, rel))

/* One line of reference/<model>.jsonl. */
typedef struct td_ref {
    char prompt[512];
    int32_t prompt_tokens[512];
    int n_prompt;
    int32_t greedy[1024];
    int n_greedy;
    int n_vocab;
} td_ref;

/* Reads up to cap lines of reference/<model>.jsonl; returns how many, -1 on error. */
int td_read_refs(const char *model, td_ref *refs, int cap);
/* Reads reference/<model>.p<i>.logits.f32 into a malloc'd buffer. */
float *td_read_logits(const char *model, int i, size_t *n_floats);

/* Relative RMS difference of two logit rows: rms(a - ref) / std(ref). */
double td_rel_rms(const float *a, const float *ref, int n);

#endif
