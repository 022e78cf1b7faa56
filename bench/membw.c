/* membw — memory read bandwidth: streams a buffer (1 GiB by default) with
 * 256-bit loads on 1 and on all threads, best of N passes per read style
 * (one plain stream per thread; eight and four streams prefetched as each
 * decode tune's kernels prefetch, src/tune.h).
 *   membw [--mb SIZE] [--reps N] [-t THREADS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwprobe.h"

int main(int argc, char **argv)
{
    size_t mb = 1024;
    int reps = 5, threads = gl_physical_cores();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: membw [--mb SIZE] [--reps N] [-t THREADS]\n");
            return 2;
        }
    }
    const size_t bytes = mb << 20;
    unsigned char *buf = bw_alloc(bytes);
    if (!buf) {
        fprintf(stderr, "membw: cannot allocate %zu MiB\n", mb);
        return 1;
    }
    for (size_t i = 0; i < bytes; i += 64)
        memset(buf + i, (int)(i >> 6), 64);
    for (int nth = 1; nth <= threads;
         nth = nth < threads && nth * 2 > threads ? threads : nth * 2) {
        gl_threadpool *pool;
        if (gl_threadpool_create(&pool, nth, NULL) != GL_OK)
            return 1;
        double best[BW_STYLES], top = 0;
        bw_measure_styles(pool, buf, bytes, reps, best);
        for (int i = 0; i < BW_STYLES; i++)
            top = best[i] > top ? best[i] : top;
        printf("membw: %zu MiB, %d thread%s: %.1f GB/s (best of %d; plain %.1f", mb, nth,
               nth > 1 ? "s" : "", top, reps, best[0]);
        for (int i = 1; i < BW_STYLES; i++) {
            int tune;
            const int ns = bw_style(i, &tune);
            printf(", %d x %s-prefetched %.1f", ns, gl_tunes[tune].name, best[i]);
        }
        printf(")\n");
        gl_threadpool_free(pool);
        if (nth == threads)
            break;
    }
    free(buf);
    return 0;
}
