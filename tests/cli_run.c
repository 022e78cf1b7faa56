#include "cli_run.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *cli_bin(void)
{
    const char *b = getenv("GENLOOP_BIN");
    return b ? b : "build/genloop";
}

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

int cli_run(run_out *r, const char *input, size_t input_len, const char *const *argv)
{
    char in_path[] = "/tmp/gl_cli_inXXXXXX", out_path[] = "/tmp/gl_cli_outXXXXXX",
         err_path[] = "/tmp/gl_cli_errXXXXXX";
    int fi = mkstemp(in_path), fo = mkstemp(out_path), fe = mkstemp(err_path);
    int rc = -1;
    if (fi < 0 || fo < 0 || fe < 0)
        goto out;
    if (input && write(fi, input, input_len) != (ssize_t)input_len)
        goto out;
    lseek(fi, 0, SEEK_SET);
    pid_t pid = fork();
    if (pid < 0)
        goto out;
    if (pid == 0) {
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        alarm(60);
        const char *args[64];
        int n = 0;
        args[n++] = cli_bin();
        for (int i = 0; argv[i] && n < 63; i++)
            args[n++] = argv[i];
        args[n] = NULL;
        execv(cli_bin(), (char *const *)args);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    slurp(out_path, r->out, sizeof r->out);
    slurp(err_path, r->err, sizeof r->err);
    rc = 0;
out:
    if (fi >= 0)
        close(fi), unlink(in_path);
    if (fo >= 0)
        close(fo), unlink(out_path);
    if (fe >= 0)
        close(fe), unlink(err_path);
    return rc;
}
