/* Large long-lived buffers (repacked weights, KV caches) in transparent huge
 * pages where the kernel offers them. Decode streams hundreds of MB per
 * token through several prefetched streams; through 4 KiB pages the TLB
 * misses cost ~10 % of decode speed (TinyLlama Q4_0, 2 threads: 43-44 vs
 * 47-48 tok/s). Freed with free(). */
#ifndef GENLOOP_SRC_HUGEMEM_H
#define GENLOOP_SRC_HUGEMEM_H

#include <stddef.h>

void *gl_alloc_huge(size_t bytes);

#endif
