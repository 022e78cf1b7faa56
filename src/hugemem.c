#include "hugemem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2 << 20 };

void *gl_alloc_huge(size_t bytes)
{
    if (bytes < HUGE_PAGE) /* small: a huge page would only waste memory */
        return malloc(bytes ? bytes : 1);
    if (bytes > SIZE_MAX - HUGE_PAGE)
        return NULL;
    const size_t rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = aligned_alloc(HUGE_PAGE, rounded);
#ifdef MADV_HUGEPAGE
    if (p) /* advice only: without THP the buffer works as plain memory */
        madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}
