/* ab_main — the same product kernel of two or more builds, timed in
 * alternation in one process (bench/ab_kernel.c; bench/ab_builds.sh builds
 * and runs it for two build folders).
 *
 *   ab_main [--type T] [--backend NAME] [--n N] [--rows R] [--nb NB]
 *           [--cold-mb M] [--rounds R] [--secs S] MODULE_A MODULE_B [...]
 *
 * MODULE@BACKEND times that module's kernel of BACKEND instead of
 * --backend's: two backends of one build side by side (give the module
 * under two file names, a copy, so each gets its own instance).
 *
 * Each round times every module for S seconds (default 0.05) in turn.
 * Printed per module: the medians over rounds of GMAC/s, GB/s of weights
 * and microseconds a call, and the median and quartiles of its speed
 * against MODULE_A's, round by round. A shared machine's drift moves every build of a round alike,
 * so the ratio's quartiles show how far the difference is real (an A/A run, the same module twice,
 * reads 1.000 within about 2 %). Defaults: q6_K, 2048 x 5632 (TinyLlama's FFN up), 32 columns (the
 * prefill tile path), hot (--cold-mb 0), 30 rounds. --nb 1 --cold-mb 1024
 * times decode from memory. Environment: AB_THREADS=N splits each product's
 * rows over N threads, AB_PIECE_KB=K has each thread take its share in
 * calls of about K KiB (bench/ab_kernel.c): 2-thread decode as the engine
 * runs it is AB_THREADS=2 AB_PIECE_KB=320. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*ab_fn)(const char *type, const char *backend, int n, int rows, int nb, int cold_mb,
                     double secs, double *per_call, double *bytes, char *err, size_t errlen);

enum { AB_MAX_MODULES = 8, AB_MAX_ROUNDS = 1000 };

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the q-quantile of n values (sorted in place) */
static double quantile(double *v, int n, double q)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[(int)(q * (n - 1) + 0.5)];
}

static int usage(FILE *to, int rc)
{
    fprintf(to, "usage: ab_main [--type T] [--backend NAME] [--n N] [--rows R] [--nb NB] "
                "[--cold-mb M] [--rounds R] [--secs S] MODULE_A MODULE_B [...]\n"
                "  MODULE@BACKEND: that module's kernel of BACKEND instead of --backend's\n");
    return rc;
}

int main(int argc, char **argv)
{
    const char *type = "q6_K", *backend = NULL;
    int n = 2048, rows = 5632, nb = 32, cold_mb = 0, rounds = 30;
    double secs = 0.05;
    const char *paths[AB_MAX_MODULES];
    int nm = 0;
    for (int i = 1; i < argc; i++) {
        const int more = i + 1 < argc;
        if (!strcmp(argv[i], "--type") && more)
            type = argv[++i];
        else if (!strcmp(argv[i], "--backend") && more)
            backend = argv[++i];
        else if (!strcmp(argv[i], "--n") && more)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rows") && more)
            rows = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nb") && more)
            nb = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cold-mb") && more)
            cold_mb = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && more)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--secs") && more)
            secs = atof(argv[++i]);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return usage(stdout, 0);
        else if (argv[i][0] == '-' || nm == AB_MAX_MODULES)
            return usage(stderr, 2);
        else
            paths[nm++] = argv[i];
    }
    if (nm < 2 || rounds < 1 || rounds > AB_MAX_ROUNDS || !(secs > 0 && secs <= 10) || nb < 1 ||
        nb > 4096 || cold_mb < 0 || cold_mb > (1 << 16))
        return usage(stderr, 2);

    ab_fn fns[AB_MAX_MODULES];
    const char *mback[AB_MAX_MODULES];
    char mpath[AB_MAX_MODULES][512];
    for (int m = 0; m < nm; m++) {
        snprintf(mpath[m], sizeof mpath[m], "%s", paths[m]);
        char *at = strrchr(mpath[m], '@');
        mback[m] = backend;
        if (at) {
            *at = 0;
            mback[m] = at + 1;
        }
    }
    for (int m = 0; m < nm; m++) {
        /* RTLD_LOCAL: each build's library stays its own */
        void *h = dlopen(mpath[m], RTLD_NOW | RTLD_LOCAL);
        if (!h || !(fns[m] = (ab_fn)(uintptr_t)dlsym(h, "ab_kernel_time"))) {
            fprintf(stderr, "ab_main: %s: %s\n", paths[m], dlerror());
            return 1;
        }
    }
    static double t[AB_MAX_MODULES][AB_MAX_ROUNDS];
    char err[256];
    double bytes = 0;
    for (int r = 0; r < rounds; r++)
        for (int m = 0; m < nm; m++)
            if (fns[m](type, mback[m], n, rows, nb, cold_mb, secs, &t[m][r], &bytes, err,
                       sizeof err)) {
                fprintf(stderr, "ab_main: %s: %s\n", paths[m], err);
                return 1;
            }

    const double macs = (double)n * rows * nb;
    printf("%s %d x %d, %d column%s, %s, %d rounds of %.3f s\n", type, n, rows, nb,
           nb > 1 ? "s" : "", cold_mb ? "cold" : "hot", rounds, secs);
    printf("%-40s %9s %9s %9s %9s %15s\n", "module", "GMAC/s", "GB/s", "us/call", "vs first",
           "(quartiles)");
    for (int m = 0; m < nm; m++) {
        double ratio[AB_MAX_ROUNDS], tm[AB_MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) {
            ratio[r] = t[0][r] / t[m][r];
            tm[r] = t[m][r];
        }
        const double med = quantile(tm, rounds, 0.5);
        const double q1 = quantile(ratio, rounds, 0.25), q3 = quantile(ratio, rounds, 0.75);
        printf("%-40s %9.1f %9.1f %9.2f %9.3f   (%.3f-%.3f)\n", paths[m], macs / med * 1e-9,
               bytes / med * 1e-9, med * 1e6, quantile(ratio, rounds, 0.5), q1, q3);
    }
    return 0;
}
