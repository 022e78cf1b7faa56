#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "gguf.h"

gl_status gl_map_file(gl_mapping *m, const char *path, gl_error *err)
{
    struct stat st;
    int fd, e;
    void *p;

    if (!m)
        return gl_fail(err, GL_ERR_ARG, "gl_map_file: no mapping struct given");
    m->data = NULL;
    m->size = 0;
    if (!path || !*path)
        return gl_fail(err, GL_ERR_ARG, "gl_map_file: empty path");

    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is then
     * rejected below as not a regular file); regular files ignore it. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        e = errno;
        return gl_fail(err, GL_ERR_IO, "cannot open '%s': %s", path, strerror(e));
    }
    if (fstat(fd, &st) != 0) {
        e = errno;
        close(fd);
        return gl_fail(err, GL_ERR_IO, "cannot stat '%s': %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return gl_fail(err, GL_ERR_IO, "'%s' is a directory", path);
    }
    /* A FIFO or device has no stable size to map. */
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return gl_fail(err, GL_ERR_IO, "'%s' is not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return gl_fail(err, GL_ERR_IO, "'%s' is empty", path);
    }
    if (st.st_size < 0 || (uintmax_t)st.st_size > SIZE_MAX) {
        close(fd);
        return gl_fail(err, GL_ERR_IO, "'%s' is too large to map (%jd bytes)", path,
                       (intmax_t)st.st_size);
    }
    /* Read-only and private: no bug of ours can ever write to a user's model
     * file. The fd is not needed once the mapping exists. */
    p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return gl_fail(err, GL_ERR_IO, "cannot map '%s' (%jd bytes): %s", path,
                       (intmax_t)st.st_size, strerror(e));
    m->data = p;
    m->size = (size_t)st.st_size;
    return GL_OK;
}

void gl_unmap_file(gl_mapping *m)
{
    if (!m || !m->data)
        return;
    munmap((void *)m->data, m->size);
    m->data = NULL;
    m->size = 0;
}
