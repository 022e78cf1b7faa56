#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf.h"
#include "shared_data.h"
#include "gguf_writer.h"

/* ---- helpers -------------------------------------------------------- */

/* Parses an exact-size heap copy so ASan sees any read past the end. */
static gl_status parse_copy(const uint8_t *p, size_t n, gl_error *err)
{
    uint8_t *c = gw_dup(p, n);
    gguf_file g;
    gl_status st = gguf_parse(&g, c, n, err);
    if (st == GL_OK) {
        /* Anything parse accepts must be safe to walk, and its tensors, which
         * may not overlap, claim no more bytes in all than the file has. */
        uint64_t claimed = 0;
        for (uint64_t i = 0; i < g.n_tensors; i++) {
            const gguf_tensor *t = &g.tensors[i];
            cr_assert(t->data >= c && t->data + t->nbytes <= c + n);
            claimed += t->nbytes;
            cr_assert_leq(claimed, n, "tensors claim %llu bytes of a %zu-byte file",
                          (unsigned long long)claimed, n);
            cr_assert((const uint8_t *)t->name.ptr >= c &&
                      (const uint8_t *)t->name.ptr + t->name.len <= c + n);
        }
        for (uint64_t i = 0; i < g.n_kv; i++) {
            const gguf_kv *kv = &g.kv[i];
            cr_assert(kv->data >= c && kv->data <= c + n);
            if (kv->type == GGUF_VT_ARR && kv->arr_type == GGUF_VT_STR) {
                uint64_t pos = 0, cnt = 0;
                const uint8_t *cur = NULL;
                gguf_str s;
                while (gguf_arr_next_str(kv, &pos, &cur, &s)) {
                    cr_assert((const uint8_t *)s.ptr + s.len <= c + n);
                    cnt++;
                }
                cr_assert_eq(cnt, kv->arr_n);
            } else if (kv->type == GGUF_VT_ARR) {
                double d;
                for (uint64_t j = 0; j < kv->arr_n && j < 64; j++)
                    gguf_arr_get_num(kv, j, &d);
            }
        }
        gguf_free(&g);
    } else {
        cr_assert_eq(g.kv, NULL);
        cr_assert_eq(g.tensors, NULL);
        cr_assert_eq(g.n_kv, 0);
        cr_assert_eq(g.n_tensors, 0);
        if (err) {
            cr_assert_eq(err->code, st);
            cr_assert(strncmp(err->msg, "gguf: ", 6) == 0, "message: %s", err->msg);
            cr_assert(strchr(err->msg, '\n') == NULL);
        }
    }
    free(c);
    return st;
}

/* Expects parse to fail with a message containing want. */
static void expect_fail(const gw_buf *b, const char *want)
{
    gl_error err = { 0 };
    gl_status st = parse_copy(b->data, b->len, &err);
    cr_assert_eq(st, GL_ERR_FORMAT, "expected failure with '%s', got %d", want, st);
    cr_assert(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
}

static void expect_ok(const gw_buf *b)
{
    gl_error err = { 0 };
    gl_status st = parse_copy(b->data, b->len, &err);
    cr_assert_eq(st, GL_OK, "unexpected failure: %s", err.msg);
}

static void sample(gw_buf *b)
{
    gw_init(b);
    gw_build_sample(b, NULL);
}

/* A header + one kv + n tensors; the caller appends the rest. */
static void one_kv_file(gw_buf *b, uint64_t n_tensors)
{
    gw_init(b);
    gw_header(b, 3, n_tensors, 1);
    gw_kv_str(b, "general.architecture", "llama");
}

/* ---- the sample file ------------------------------------------------ */

Test(gguf, sample_parses_with_every_type)
{
    gw_buf b;
    gguf_file g;
    gl_error err = { 0 };
    int64_t i;
    float f;
    bool bo;
    gguf_str s;
    double d;

    sample(&b);
    cr_assert_eq(gguf_parse(&g, b.data, b.len, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(g.version, 3);
    cr_assert_eq(g.n_kv, 20);
    cr_assert_eq(g.n_tensors, 3);
    cr_assert_eq(g.alignment, 32);
    cr_assert_eq(g.data_offset % 32, 0);

    cr_assert(gguf_get_str(&g, "general.architecture", &s) && gguf_str_eq(s, "llama"));
    cr_assert(gguf_get_i64(&g, "test.u8", &i) && i == 200);
    cr_assert(gguf_get_i64(&g, "test.i8", &i) && i == -100);
    cr_assert(gguf_get_i64(&g, "test.u16", &i) && i == 60000);
    cr_assert(gguf_get_i64(&g, "test.i16", &i) && i == -30000);
    cr_assert(gguf_get_i64(&g, "llama.embedding_length", &i) && i == 64);
    cr_assert(gguf_get_i64(&g, "test.i32", &i) && i == -2000000000);
    cr_assert(!gguf_get_i64(&g, "test.u64", &i), "u64 above INT64_MAX must not fit");
    cr_assert(gguf_get_i64(&g, "test.i64", &i) && i == -5000000000ll);
    cr_assert(!gguf_get_i64(&g, "test.bool", &i));
    cr_assert(!gguf_get_i64(&g, "test.f32", &i));
    cr_assert(!gguf_get_i64(&g, "missing.key", &i));
    cr_assert(gguf_get_f32(&g, "test.f32", &f) && f == 1.5f);
    cr_assert(gguf_get_f32(&g, "test.f64", &f) && f == 0.25f);
    cr_assert(!gguf_get_f32(&g, "test.u8", &f));
    cr_assert(gguf_get_bool(&g, "test.bool", &bo) && bo);
    cr_assert(!gguf_get_bool(&g, "test.u8", &bo));
    cr_assert(gguf_get_str(&g, "test.str", &s) && s.len == 3 && memcmp(s.ptr, "h\xffi", 3) == 0);
    cr_assert(!gguf_get_str(&g, "test.u8", &s));

    const gguf_kv *kv = gguf_find(&g, "tokenizer.ggml.tokens");
    cr_assert_not_null(kv);
    cr_assert_eq(kv->type, GGUF_VT_ARR);
    cr_assert_eq(kv->arr_type, GGUF_VT_STR);
    cr_assert_eq(kv->arr_n, 6);
    const char *want[] = { "<unk>", "<s>", "</s>", "hello", "", "w\xc3\xb6rld" };
    uint64_t pos = 0;
    const uint8_t *cur = NULL;
    int n = 0;
    while (gguf_arr_next_str(kv, &pos, &cur, &s)) {
        cr_assert(gguf_str_eq(s, want[n]), "token %d", n);
        n++;
    }
    cr_assert_eq(n, 6);
    /* restarting at pos 0 resets the cursor */
    pos = 0;
    cr_assert(gguf_arr_next_str(kv, &pos, &cur, &s) && gguf_str_eq(s, "<unk>"));
    cr_assert(!gguf_arr_get_num(kv, 0, &d), "strings are not numbers");

    kv = gguf_find(&g, "tokenizer.ggml.scores");
    cr_assert(gguf_arr_get_num(kv, 4, &d) && d == -4.25);
    cr_assert(!gguf_arr_get_num(kv, 6, &d));
    pos = 0;
    cr_assert(!gguf_arr_next_str(kv, &pos, &cur, &s), "not a string array");
    kv = gguf_find(&g, "tokenizer.ggml.token_type");
    cr_assert(gguf_arr_get_num(kv, 0, &d) && d == 2);
    kv = gguf_find(&g, "test.bools");
    cr_assert(kv && kv->arr_type == GGUF_VT_BOOL && kv->arr_n == 3);
    cr_assert(!gguf_arr_get_num(kv, 0, &d));

    kv = gguf_find(&g, "test.nested");
    cr_assert(kv && kv->type == GGUF_VT_ARR && kv->arr_type == GGUF_VT_ARR && kv->arr_n == 3);
    uint32_t et;
    uint64_t en;
    memcpy(&et, kv->data, 4);
    memcpy(&en, kv->data + 4, 8);
    cr_assert_eq(et, GGUF_VT_U16, "data points at the first inner array");
    cr_assert_eq(en, 2);
    cr_assert_not_null(gguf_find(&g, "test.nested3"));

    const gguf_tensor *t = gguf_find_tensor(&g, "token_embd.weight");
    cr_assert_not_null(t);
    cr_assert_eq(t->n_dims, 2);
    cr_assert(t->ne[0] == 4 && t->ne[1] == 3 && t->ne[2] == 1 && t->ne[3] == 1);
    cr_assert_eq(t->type, GGUF_T_F32);
    cr_assert_eq(t->nbytes, 48);
    cr_assert_eq(t->data, b.data + g.data_offset);
    cr_assert(t->data[0] == 0 && t->data[47] == 47);
    t = gguf_find_tensor(&g, "blk.0.attn_q.weight");
    cr_assert(t && t->type == GGUF_T_Q8_0 && t->nbytes == 68);
    cr_assert_eq(t->data + t->nbytes, b.data + b.len, "last tensor ends the file");
    cr_assert_eq((t->data - b.data) % 32, 0);
    t = gguf_find_tensor(&g, "output_norm.weight");
    cr_assert(t && t->n_dims == 1 && t->ne[1] == 1 && t->nbytes == 16);
    cr_assert_null(gguf_find_tensor(&g, "nope"));
    cr_assert_null(gguf_find_tensor(&g, "token_embd.weigh"));

    gguf_free(&g);
    cr_assert_null(g.kv);
    gguf_free(&g); /* idempotent */
    gw_free(&b);
}

Test(gguf, version2_and_alignment_key)
{
    gw_buf b;
    gw_sample_opts o = { .version = 2, .alignment = 64 };
    gguf_file g;
    gl_error err;
    gw_init(&b);
    gw_build_sample(&b, &o);
    cr_assert_eq(gguf_parse(&g, b.data, b.len, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(g.version, 2);
    cr_assert_eq(g.alignment, 64);
    cr_assert_eq(g.data_offset % 64, 0);
    for (uint64_t i = 0; i < g.n_tensors; i++)
        cr_assert_eq((g.tensors[i].data - b.data) % 64, 0);
    gguf_free(&g);
    gw_free(&b);
}

Test(gguf, type_tables)
{
    cr_assert_str_eq(gguf_type_name(GGUF_T_F32), "F32");
    cr_assert_str_eq(gguf_type_name(GGUF_T_F16), "F16");
    cr_assert_str_eq(gguf_type_name(GGUF_T_Q4_0), "Q4_0");
    cr_assert_str_eq(gguf_type_name(GGUF_T_Q8_0), "Q8_0");
    cr_assert_str_eq(gguf_type_name(GGUF_T_BF16), "BF16");
    cr_assert_str_eq(gguf_type_name(14), "Q6_K");
    cr_assert_str_eq(gguf_type_name(4), "unknown");
    cr_assert_str_eq(gguf_type_name(12345), "unknown");
    cr_assert_str_eq(gguf_type_name(UINT32_MAX), "unknown");
    cr_assert_eq(gguf_type_block_bytes(GGUF_T_Q4_0), 18);
    cr_assert_eq(gguf_type_block_elems(GGUF_T_Q4_0), 32);
    cr_assert_eq(gguf_type_block_bytes(GGUF_T_Q8_0), 34);
    cr_assert_eq(gguf_type_block_bytes(GGUF_T_Q4_1), 20);
    cr_assert_eq(gguf_type_block_bytes(GGUF_T_Q5_0), 22);
    cr_assert_eq(gguf_type_block_bytes(GGUF_T_Q5_1), 24);
    cr_assert_eq(gguf_type_block_bytes(GGUF_T_Q8_1), 36);
    cr_assert_eq(gguf_type_block_bytes(10), 84);
    cr_assert_eq(gguf_type_block_bytes(15), 292);
    cr_assert_eq(gguf_type_block_elems(15), 256);
    cr_assert_eq(gguf_type_block_bytes(28), 8);
    cr_assert_eq(gguf_type_block_bytes(GGUF_T_BF16), 2);
    cr_assert_eq(gguf_type_block_bytes(5), 0);
    cr_assert_eq(gguf_type_block_bytes(GGUF_T_COUNT), 0);
    for (uint32_t t = 0; t < GGUF_T_COUNT; t++)
        cr_assert_eq(gguf_type_block_bytes(t) == 0, gguf_type_block_elems(t) == 0, "type %u", t);
    cr_assert_str_eq(gguf_vtype_name(GGUF_VT_STR), "string");
    cr_assert_str_eq(gguf_vtype_name(GGUF_VT_COUNT), "invalid");
    cr_assert_eq(gguf_vtype_size(GGUF_VT_U64), 8);
    cr_assert_eq(gguf_vtype_size(GGUF_VT_ARR), 0);
}

Test(gguf, bad_arguments)
{
    gguf_file g;
    gl_error err;
    cr_assert_eq(gguf_parse(NULL, (const uint8_t *)"GGUF", 4, &err), GL_ERR_ARG);
    cr_assert_eq(gguf_parse(&g, NULL, 10, &err), GL_ERR_ARG);
    cr_assert_eq(gguf_parse(&g, NULL, 0, NULL), GL_ERR_FORMAT);
}

/* ---- malformed inputs ----------------------------------------------- */

Test(gguf, every_truncation_fails)
{
    gw_buf b;
    sample(&b);
    for (size_t n = 0; n < b.len; n++) {
        gl_error err = { 0 };
        gl_status st = parse_copy(b.data, n, &err);
        cr_assert_eq(st, GL_ERR_FORMAT, "prefix of %zu/%zu bytes parsed", n, b.len);
    }
    /* without an error struct too */
    for (size_t n = 0; n < b.len; n += 7)
        cr_assert_eq(parse_copy(b.data, n, NULL), GL_ERR_FORMAT);
    expect_ok(&b);
    gw_free(&b);
}

Test(gguf, every_bit_flip_is_safe)
{
    gw_buf b;
    sample(&b);
    /* parse_copy asserts what every outcome must satisfy (accepted: every
     * pointer inside the file; refused: a one-line "gguf: " message and
     * nothing left allocated); a flip may only be accepted or refused as
     * malformed, and both must happen (flips in a name or a float value are
     * harmless, flips in the magic are not) */
    size_t n_ok = 0, n_bad = 0;
    for (size_t i = 0; i < b.len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            b.data[i] ^= (uint8_t)(1u << bit);
            gl_error err;
            gl_status st = parse_copy(b.data, b.len, &err);
            cr_assert(st == GL_OK || st == GL_ERR_FORMAT || st == GL_ERR_NOMEM,
                      "flip of bit %d at byte %zu: status %d", bit, i, st);
            n_ok += st == GL_OK;
            n_bad += st != GL_OK;
            b.data[i] ^= (uint8_t)(1u << bit);
        }
    }
    cr_assert_gt(n_ok, 0);
    cr_assert_gt(n_bad, b.len); /* at least the 32 bits of the magic, the version, ... */
    expect_ok(&b);              /* every flip was undone */
    gw_free(&b);
}

Test(gguf, every_field_with_hostile_values)
{
    gw_buf b;
    sample(&b);
    cr_assert_gt(b.n_fields, 50);
    const uint64_t vals[] = {
        0,
        1,
        2,
        3,
        4,
        5,
        7,
        8,
        9,
        12,
        13,
        31,
        33,
        255,
        256,
        0xffff,
        0x7fffffff,
        0x80000000,
        0xffffffff,
        0x100000000ull,
        0x7fffffffffffffffull,
        0x8000000000000000ull,
        0xffffffffffffffffull,
        0xfffffffffffffff8ull,
        b.len,
        b.len + 1,
        b.len - 1,
    };
    for (size_t f = 0; f < b.n_fields; f++) {
        const gw_field *fd = &b.fields[f];
        uint64_t orig = 0;
        memcpy(&orig, b.data + fd->off, fd->width);
        for (size_t v = 0; v < sizeof vals / sizeof vals[0] + 2; v++) {
            uint64_t x = v < sizeof vals / sizeof vals[0] ? vals[v] : orig + (v % 2 ? 1 : -1);
            gw_patch_field(&b, fd, x);
            gl_error err;
            parse_copy(b.data, b.len, &err);
        }
        memcpy(b.data + fd->off, &orig, fd->width);
    }
    expect_ok(&b);
    gw_free(&b);
}

Test(gguf, bad_magic_and_versions)
{
    gw_buf b;
    sample(&b);
    b.data[0] = 'G';
    b.data[3] = 'X';
    expect_fail(&b, "bad magic 'GGUX'");
    memcpy(b.data, "GGUF", 4);
    gw_patch_u32(&b, 4, 1);
    expect_fail(&b, "unsupported version 1");
    gw_patch_u32(&b, 4, 4);
    expect_fail(&b, "unsupported version 4");
    gw_patch_u32(&b, 4, 0);
    expect_fail(&b, "unsupported version 0");
    gw_patch_u32(&b, 4, 0x03000000);
    expect_fail(&b, "big-endian");
    gw_free(&b);

    gw_init(&b);
    gw_bytes(&b, "GG", 2);
    expect_fail(&b, "too short");
    gw_truncate(&b, 0);
    gw_bytes(&b, "GGUF\3\0\0\0", 8);
    expect_fail(&b, "too short for the 24-byte GGUF header");
    gw_free(&b);
}

Test(gguf, empty_file_is_valid_without_tensors)
{
    gw_buf b;
    gguf_file g;
    gl_error err;
    gw_init(&b);
    gw_header(&b, 3, 0, 0);
    cr_assert_eq(gguf_parse(&g, b.data, b.len, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(g.n_kv, 0);
    cr_assert_eq(g.data_offset, b.len, "no padding needed when there are no tensors");
    gguf_free(&g);
    gw_free(&b);
}

Test(gguf, huge_counts)
{
    gw_buf b;
    sample(&b);
    gw_patch_field(&b, gw_find_field(&b, GW_F_COUNT, "n_kv"), UINT64_MAX);
    expect_fail(&b, "kv count 18446744073709551615 at offset 16 cannot fit");
    gw_free(&b);

    sample(&b);
    gw_patch_field(&b, gw_find_field(&b, GW_F_COUNT, "n_tensors"), 1ull << 40);
    expect_fail(&b, "tensor count 1099511627776 at offset 8 cannot fit");
    gw_free(&b);

    /* fits the first, coarse check but not after the kv pairs */
    gw_init(&b);
    gw_header(&b, 3, 5, 2);
    char room[300];
    memset(room, 'x', sizeof room);
    gw_key(&b, "a", GGUF_VT_STR);
    gw_strn(&b, room, sizeof room);
    gw_kv_str(&b, "b", "");
    expect_fail(&b, "tensor count 5 at offset 8 cannot fit in the 0 bytes left after the kv");
    gw_free(&b);

    /* more kv than written: runs into tensor infos and fails somewhere, cleanly */
    sample(&b);
    gw_patch_field(&b, gw_find_field(&b, GW_F_COUNT, "n_kv"), 21);
    expect_fail(&b, "gguf: ");
    gw_free(&b);
}

Test(gguf, huge_string_length)
{
    gw_buf b;
    one_kv_file(&b, 0);
    gw_patch_u64(&b, 24, UINT64_MAX);
    expect_fail(&b, "key length 18446744073709551615 at offset 24 runs past end of file");
    gw_free(&b);

    one_kv_file(&b, 0);
    /* value string length field: after key len (8) + key (20) + type (4) */
    gw_patch_u64(&b, 24 + 8 + 20 + 4, 1000);
    expect_fail(&b, "string length 1000 at offset 56 runs past end of file (size 69)");
    gw_free(&b);
}

Test(gguf, huge_array_counts)
{
    static const uint32_t types[] = { GGUF_VT_U8,  GGUF_VT_F32, GGUF_VT_U64,
                                      GGUF_VT_STR, GGUF_VT_ARR, GGUF_VT_BOOL };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const uint64_t counts[] = { UINT64_MAX, UINT64_MAX / 2 + 1, 1ull << 61, 1ull << 32, 100 };
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            gw_buf b;
            gw_init(&b);
            gw_header(&b, 3, 0, 1);
            gw_key(&b, "arr", GGUF_VT_ARR);
            gw_arr(&b, types[i], counts[c]);
            gw_zeros(&b, 40);
            expect_fail(&b, "at offset 39 ");
            expect_fail(&b, "(in kv #0 'arr')");
            gw_free(&b);
        }
    }
}

Test(gguf, invalid_value_types_and_bools)
{
    gw_buf b;
    gw_init(&b);
    gw_header(&b, 3, 0, 1);
    gw_key(&b, "k", 13);
    gw_u64(&b, 0);
    expect_fail(&b, "invalid value type 13 at offset 33");
    gw_free(&b);

    gw_init(&b);
    gw_header(&b, 3, 0, 1);
    gw_key(&b, "k", GGUF_VT_ARR);
    gw_arr(&b, 0xffffffffu, 0);
    expect_fail(&b, "invalid array element type 4294967295");
    gw_free(&b);

    gw_init(&b);
    gw_header(&b, 3, 0, 1);
    gw_key(&b, "k", GGUF_VT_BOOL);
    gw_u8(&b, 2);
    expect_fail(&b, "invalid bool value 2 at offset 37");
    gw_free(&b);

    gw_init(&b);
    gw_header(&b, 3, 0, 1);
    gw_key(&b, "k", GGUF_VT_ARR);
    gw_arr(&b, GGUF_VT_BOOL, 3);
    gw_u8(&b, 0);
    gw_u8(&b, 1);
    gw_u8(&b, 0x80);
    expect_fail(&b, "invalid bool value 128 at offset 51");
    gw_free(&b);
}

Test(gguf, empty_and_duplicate_keys)
{
    gw_buf b;
    gw_init(&b);
    gw_header(&b, 3, 0, 1);
    gw_kv_str(&b, "", "value");
    expect_fail(&b, "empty key at offset 24");
    gw_free(&b);

    gw_init(&b);
    gw_header(&b, 3, 0, 3);
    gw_kv_u8(&b, "a.b", 1);
    gw_kv_str(&b, "x", "y");
    gw_kv_u32(&b, "a.b", 2);
    expect_fail(&b, "duplicate key 'a.b'");
    gw_free(&b);

    /* same length, different bytes, and a prefix: not duplicates */
    gw_init(&b);
    gw_header(&b, 3, 0, 3);
    gw_kv_u8(&b, "a.b", 1);
    gw_kv_u8(&b, "a.c", 1);
    gw_kv_u8(&b, "a.bc", 1);
    expect_ok(&b);
    gw_free(&b);
}

static void nested_file(gw_buf *b, int depth)
{
    gw_init(b);
    gw_header(b, 3, 0, 1);
    gw_key(b, "nest", GGUF_VT_ARR);
    for (int d = 1; d < depth; d++)
        gw_arr(b, GGUF_VT_ARR, 1);
    gw_arr(b, GGUF_VT_I32, 2);
    gw_u32(b, 7);
    gw_u32(b, 8);
}

Test(gguf, nested_arrays_and_depth_limit)
{
    gw_buf b;
    for (int depth = 1; depth <= GGUF_MAX_ARR_DEPTH; depth++) {
        nested_file(&b, depth);
        expect_ok(&b);
        gw_free(&b);
    }
    nested_file(&b, GGUF_MAX_ARR_DEPTH + 1);
    expect_fail(&b, "nested deeper than 8 levels");
    gw_free(&b);
    nested_file(&b, 1000);
    expect_fail(&b, "nested deeper than 8 levels");
    gw_free(&b);

    /* many empty inner arrays: cheap, valid */
    gw_init(&b);
    gw_header(&b, 3, 0, 1);
    gw_key(&b, "nest", GGUF_VT_ARR);
    gw_arr(&b, GGUF_VT_ARR, 1000);
    for (int i = 0; i < 1000; i++)
        gw_arr(&b, GGUF_VT_STR, 0);
    expect_ok(&b);
    gw_free(&b);
}

static void tensor_file(gw_buf *b, uint32_t n_dims, const uint64_t *ne, uint32_t type,
                        uint64_t offset, size_t data_bytes)
{
    one_kv_file(b, 1);
    gw_tensor_info(b, "blk.0.attn_q.weight", n_dims, ne, type, offset);
    gw_pad(b, 32);
    gw_zeros(b, data_bytes);
}

Test(gguf, tensor_info_validation)
{
    gw_buf b;
    uint64_t ne[5] = { 32, 4, 1, 1, 1 };

    tensor_file(&b, 2, ne, GGUF_T_F32, 0, 512);
    expect_ok(&b);
    gw_free(&b);

    tensor_file(&b, 5, ne, GGUF_T_F32, 0, 512);
    expect_fail(&b, "n_dims 5 at offset");
    expect_fail(&b, "tensor 'blk.0.attn_q.weight' (#0)");
    gw_free(&b);

    tensor_file(&b, 0, ne, GGUF_T_F32, 0, 512);
    expect_fail(&b, "n_dims 0");
    gw_free(&b);

    tensor_file(&b, 2, ne, GGUF_T_F32, 16, 512);
    expect_fail(&b, "tensor data offset 16 at offset");
    expect_fail(&b, "is not a multiple of the alignment 32");
    gw_free(&b);

    tensor_file(&b, 2, ne, GGUF_T_F32, 0, 511);
    expect_fail(&b, "tensor 'blk.0.attn_q.weight' (#0) data [offset 0, 512 bytes] runs past end "
                    "of file");
    gw_free(&b);

    tensor_file(&b, 2, ne, GGUF_T_F32, 1ull << 63, 512);
    expect_fail(&b, "runs past end of file");
    gw_free(&b);

    tensor_file(&b, 2, ne, GGUF_T_F32, UINT64_MAX - 31, 512);
    expect_fail(&b, "runs past end of file");
    gw_free(&b);

    tensor_file(&b, 2, ne, 4, 0, 512);
    expect_fail(&b, "tensor 'blk.0.attn_q.weight' has unknown type 4");
    gw_free(&b);

    tensor_file(&b, 2, ne, 1000, 0, 512);
    expect_fail(&b, "unknown type 1000");
    gw_free(&b);

    uint64_t odd[2] = { 33, 2 };
    tensor_file(&b, 2, odd, GGUF_T_Q4_0, 0, 512);
    expect_fail(&b, "row length 33 is not a multiple of the Q4_0 block size 32");
    gw_free(&b);

    /* K-quant rows are whole 256-element super-blocks */
    static const struct {
        uint32_t type;
        uint64_t row;
        const char *msg;
    } krows[] = {
        { GGUF_T_Q4_K, 32, "row length 32 is not a multiple of the Q4_K block size 256" },
        { GGUF_T_Q6_K, 320, "row length 320 is not a multiple of the Q6_K block size 256" },
        { GGUF_T_Q2_K, 255, "row length 255 is not a multiple of the Q2_K block size 256" },
        { GGUF_T_Q3_K, 4097, "row length 4097 is not a multiple of the Q3_K block size 256" },
        { GGUF_T_Q5_K, 128, "row length 128 is not a multiple of the Q5_K block size 256" },
        { GGUF_T_IQ4_XS, 288, "row length 288 is not a multiple of the IQ4_XS block size 256" },
        { 16 /* IQ2_XXS */, 64, "row length 64 is not a multiple of the IQ2_XXS block size 256" },
        { GGUF_T_Q4_1, 48, "row length 48 is not a multiple of the Q4_1 block size 32" },
        { GGUF_T_IQ4_NL, 16, "row length 16 is not a multiple of the IQ4_NL block size 32" },
    };
    for (size_t i = 0; i < sizeof krows / sizeof krows[0]; i++) {
        uint64_t kne[2] = { krows[i].row, 2 };
        tensor_file(&b, 2, kne, krows[i].type, 0, 4096);
        expect_fail(&b, krows[i].msg);
        expect_fail(&b, "tensor 'blk.0.attn_q.weight' (#0)");
        gw_free(&b);
    }
    /* K-quant data cut inside the last super-block, or a whole one short */
    uint64_t q6[2] = { 512, 3 };
    tensor_file(&b, 2, q6, GGUF_T_Q6_K, 0, 6 * 210);
    expect_ok(&b);
    gw_free(&b);
    tensor_file(&b, 2, q6, GGUF_T_Q6_K, 0, 6 * 210 - 1);
    expect_fail(&b, "tensor 'blk.0.attn_q.weight' (#0) data [offset 0, 1260 bytes] runs past end "
                    "of file");
    gw_free(&b);
    uint64_t q4k[2] = { 256, 8 };
    tensor_file(&b, 2, q4k, GGUF_T_Q4_K, 0, 7 * 144 + 100);
    expect_fail(&b, "[offset 0, 1152 bytes] runs past end of file");
    gw_free(&b);
    uint64_t q2k[2] = { 1024, 1 };
    tensor_file(&b, 2, q2k, GGUF_T_Q2_K, 0, 3 * 84);
    expect_fail(&b, "[offset 0, 336 bytes] runs past end of file");
    gw_free(&b);

    uint64_t neg[2] = { 32, (uint64_t)-1 };
    tensor_file(&b, 2, neg, GGUF_T_F32, 0, 512);
    expect_fail(&b, "dimension 1 = 18446744073709551615");
    gw_free(&b);

    uint64_t big[4] = { 1ull << 32, 1ull << 32, 1, 1 };
    tensor_file(&b, 4, big, GGUF_T_F32, 0, 512);
    expect_fail(&b, "overflow the element or byte count");
    gw_free(&b);

    /* element count fits int64 but the byte count does not */
    uint64_t big2[2] = { 1ull << 31, 1ull << 31 };
    tensor_file(&b, 2, big2, 28 /* F64 */, 0, 512);
    expect_fail(&b, "overflow the element or byte count");
    gw_free(&b);

    uint64_t big3[4] = { 1ull << 20, 1ull << 20, 1ull << 20, 1ull << 20 };
    tensor_file(&b, 4, big3, GGUF_T_Q8_0, 0, 512);
    expect_fail(&b, "overflow");
    gw_free(&b);

    /* a plausible but too large tensor: no overflow, past EOF */
    uint64_t large[2] = { 4096, 4096 };
    tensor_file(&b, 2, large, GGUF_T_Q4_0, 0, 512);
    expect_fail(&b, "[offset 0, 9437184 bytes] runs past end of file");
    gw_free(&b);

    /* ne == 0 is a legal empty tensor */
    uint64_t empty[2] = { 0, 7 };
    gguf_file g;
    gl_error err;
    tensor_file(&b, 2, empty, GGUF_T_Q8_0, 0, 0);
    cr_assert_eq(gguf_parse(&g, b.data, b.len, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(g.tensors[0].nbytes, 0);
    gguf_free(&g);
    gw_free(&b);

    /* empty name */
    one_kv_file(&b, 1);
    gw_tensor_info(&b, "", 2, ne, GGUF_T_F32, 0);
    gw_pad(&b, 32);
    gw_zeros(&b, 512);
    expect_fail(&b, "empty tensor name");
    gw_free(&b);
}

Test(gguf, tensor_names_quoted_in_messages)
{
    gw_buf b;
    uint64_t ne[1] = { 8 };
    one_kv_file(&b, 1);
    gw_tensor_info(&b, "a\nb'\x01", 1, ne, 77, 0);
    expect_fail(&b, "tensor 'a\\x0ab\\x27\\x01' has unknown type 77");
    gw_free(&b);
}

Test(gguf, duplicate_tensor_names)
{
    gw_buf b;
    uint64_t ne[1] = { 8 };
    one_kv_file(&b, 2);
    gw_tensor_info(&b, "w", 1, ne, GGUF_T_F32, 0);
    gw_tensor_info(&b, "w", 1, ne, GGUF_T_F32, 32);
    gw_pad(&b, 32);
    gw_zeros(&b, 64);
    expect_fail(&b, "duplicate tensor name 'w'");
    gw_free(&b);
}

/* n tensors of 1-D F32 data at the given byte offsets and sizes (multiples
 * of 32) in a data section of data_bytes. */
static void layout_file(gw_buf *b, int n, const uint64_t *off, const uint64_t *bytes,
                        size_t data_bytes)
{
    static const char *names[] = { "A", "B", "C", "D" };
    one_kv_file(b, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        uint64_t ne[1] = { bytes[i] / 4 };
        gw_tensor_info(b, names[i], 1, ne, GGUF_T_F32, off[i]);
    }
    gw_pad(b, 32);
    gw_zeros(b, data_bytes);
}

Test(gguf, nested_and_chained_overlaps)
{
    gw_buf b;
    /* B and C both lie inside A: after B, the furthest-reaching tensor is
     * still A, so C must be caught against A, not against B (which it only
     * touches) */
    const uint64_t nest_off[3] = { 0, 32, 64 }, nest_len[3] = { 128, 32, 32 };
    layout_file(&b, 3, nest_off, nest_len, 128);
    expect_fail(&b, "overlaps tensor 'A' data [offset 0, 128 bytes]");
    gw_free(&b);
    /* the same listed in another order */
    const uint64_t rev_off[3] = { 64, 32, 0 }, rev_len[3] = { 32, 32, 128 };
    layout_file(&b, 3, rev_off, rev_len, 128);
    expect_fail(&b, "overlaps tensor 'C' data [offset 0, 128 bytes]");
    gw_free(&b);
    /* a chain: each overlaps only its neighbour */
    const uint64_t chain_off[3] = { 0, 64, 128 }, chain_len[3] = { 96, 96, 64 };
    layout_file(&b, 3, chain_off, chain_len, 192);
    expect_fail(&b, "tensor 'B'");
    expect_fail(&b, "overlaps tensor 'A'");
    gw_free(&b);
    /* a chain whose first pair is clean: C overlaps B only */
    const uint64_t chain2_off[3] = { 0, 32, 64 }, chain2_len[3] = { 32, 64, 64 };
    layout_file(&b, 3, chain2_off, chain2_len, 128);
    expect_fail(&b, "tensor 'C'");
    expect_fail(&b, "overlaps tensor 'B'");
    gw_free(&b);
    /* two tensors at one offset */
    const uint64_t same_off[2] = { 32, 32 }, same_len[2] = { 32, 64 };
    layout_file(&b, 2, same_off, same_len, 96);
    expect_fail(&b, "overlaps");
    gw_free(&b);
    /* a small tensor at the very end of a big one: touching is fine, and so
     * is an empty tensor inside another */
    const uint64_t touch_off[4] = { 0, 96, 128, 32 }, touch_len[4] = { 96, 32, 32, 0 };
    layout_file(&b, 4, touch_off, touch_len, 160);
    expect_ok(&b);
    gw_free(&b);
    /* nested inside the last tensor, deep in the section */
    const uint64_t deep_off[4] = { 0, 32, 64, 160 }, deep_len[4] = { 32, 32, 256, 64 };
    layout_file(&b, 4, deep_off, deep_len, 320);
    expect_fail(&b, "tensor 'D'");
    gw_free(&b);
}

Test(gguf, data_section_past_eof)
{
    gw_buf b;
    uint64_t ne[1] = { 0 };
    one_kv_file(&b, 1);
    gw_tensor_info(&b, "w", 1, ne, GGUF_T_F32, 0);
    /* no padding: the data section would start past the end */
    expect_fail(&b, "data section at offset");
    gw_free(&b);
}

static void align_file(gw_buf *b, uint32_t vtype, uint64_t v)
{
    uint64_t ne[1] = { 8 };
    gw_init(b);
    gw_header(b, 3, 1, 1);
    gw_key(b, "general.alignment", vtype);
    if (vtype == GGUF_VT_U64)
        gw_u64(b, v);
    else if (vtype == GGUF_VT_STR)
        gw_str(b, "32");
    else
        gw_u32(b, (uint32_t)v);
    gw_tensor_info(b, "w", 1, ne, GGUF_T_F32, 0);
    gw_pad(b, 64);
    gw_zeros(b, 32);
}

Test(gguf, alignment_values)
{
    gw_buf b;
    align_file(&b, GGUF_VT_U32, 0);
    expect_fail(&b, "general.alignment 0 at offset 53 is not a nonzero power of two");
    gw_free(&b);
    align_file(&b, GGUF_VT_U32, 3);
    expect_fail(&b, "general.alignment 3");
    gw_free(&b);
    align_file(&b, GGUF_VT_U32, 0x80000001u);
    expect_fail(&b, "not a nonzero power of two");
    gw_free(&b);
    align_file(&b, GGUF_VT_U64, 32);
    expect_fail(&b, "general.alignment at offset 53 has type u64, expected u32");
    gw_free(&b);
    align_file(&b, GGUF_VT_I32, 32);
    expect_fail(&b, "has type i32");
    gw_free(&b);
    align_file(&b, GGUF_VT_STR, 32);
    expect_fail(&b, "has type string");
    gw_free(&b);
    align_file(&b, GGUF_VT_U32, 64);
    expect_ok(&b);
    gw_free(&b);
    align_file(&b, GGUF_VT_U32, 1);
    expect_ok(&b);
    gw_free(&b);
    /* a huge alignment pushes the data section past the end */
    align_file(&b, GGUF_VT_U32, 0x80000000u);
    expect_fail(&b, "starts past end of file");
    gw_free(&b);
}

Test(gguf, many_keys_duplicate_check_is_fast)
{
    gw_buf b;
    char key[32];
    const int n = 100000;
    gw_init(&b);
    gw_header(&b, 3, 0, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "k.%d", (i * 7919) % n);
        gw_kv_u8(&b, key, 1);
    }
    expect_ok(&b);
    gw_free(&b);

    gw_init(&b);
    gw_header(&b, 3, 0, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "k.%d", i == n - 1 ? 12345 : i);
        gw_kv_u8(&b, key, 1);
    }
    expect_fail(&b, "duplicate key 'k.12345'");
    gw_free(&b);
}

/* ---- real files ----------------------------------------------------- */

static void map_shared(gl_mapping *m, const char *rel)
{
    char path[4200];
    gl_error err;
    snprintf(path, sizeof path, "%s/%s", td_need_shared(), rel);
    cr_assert_eq(gl_map_file(m, path, &err), GL_OK, "%s", err.msg);
}

Test(gguf_real, every_shared_file_parses)
{
    static const char *files[] = {
        "models/stories260K.gguf",
        "models/stories260K-F16.gguf",
        "models/stories260K-mixQ8_0.gguf",
        "models/stories260K-mixQ4_0.gguf",
        "models/synthetic-gpt2-tiny.gguf",
        "tokenizers/ggml-vocab-gpt-2.gguf",
        "tokenizers/ggml-vocab-llama-spm.gguf",
    };
    td_need_shared();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        gl_mapping m;
        gguf_file g;
        gl_error err;
        map_shared(&m, files[i]);
        cr_assert_eq(gguf_parse(&g, m.data, m.size, &err), GL_OK, "%s: %s", files[i], err.msg);
        cr_assert_not_null(gguf_find(&g, "general.architecture"), "%s", files[i]);
        cr_assert_not_null(gguf_find(&g, "tokenizer.ggml.tokens"), "%s", files[i]);
        gguf_free(&g);
        gl_unmap_file(&m);
        cr_assert_null(m.data);
    }
}

Test(gguf_real, stories260K_contents)
{
    gl_mapping m;
    gguf_file g;
    gl_error err;
    gguf_str s;
    int64_t v;

    map_shared(&m, "models/stories260K.gguf");
    cr_assert_eq(gguf_parse(&g, m.data, m.size, &err), GL_OK, "%s", err.msg);
    cr_assert(g.version == 2 || g.version == 3);
    cr_assert(gguf_get_str(&g, "general.architecture", &s) && gguf_str_eq(s, "llama"));
    cr_assert(gguf_get_i64(&g, "llama.embedding_length", &v) && v == 64);
    cr_assert(gguf_get_i64(&g, "llama.block_count", &v) && v == 5);
    cr_assert(gguf_get_i64(&g, "llama.attention.head_count", &v) && v == 8);
    cr_assert(gguf_get_i64(&g, "llama.attention.head_count_kv", &v) && v == 4);
    cr_assert(gguf_get_i64(&g, "llama.feed_forward_length", &v) && v == 172);

    const gguf_tensor *t = gguf_find_tensor(&g, "token_embd.weight");
    cr_assert_not_null(t);
    cr_assert_eq(t->n_dims, 2);
    cr_assert_eq(t->ne[0], 64);
    cr_assert_eq(t->ne[1], 512);
    cr_assert_eq(t->type, GGUF_T_F32);
    cr_assert_eq(t->nbytes, 64 * 512 * 4);

    const gguf_kv *kv = gguf_find(&g, "tokenizer.ggml.tokens");
    cr_assert(kv && kv->type == GGUF_VT_ARR && kv->arr_type == GGUF_VT_STR);
    cr_assert_eq(kv->arr_n, 512);
    uint64_t pos = 0, n = 0;
    const uint8_t *cur = NULL;
    while (gguf_arr_next_str(kv, &pos, &cur, &s))
        n++;
    cr_assert_eq(n, 512);
    kv = gguf_find(&g, "tokenizer.ggml.scores");
    double d;
    cr_assert(kv && kv->arr_n == 512 && gguf_arr_get_num(kv, 511, &d) && isfinite(d));

    /* every tensor lies inside the file, aligned, and none overlap the infos */
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        t = &g.tensors[i];
        cr_assert(t->data >= m.data + g.data_offset);
        cr_assert(t->data + t->nbytes <= m.data + m.size);
        cr_assert_eq((uint64_t)(t->data - m.data) % g.alignment, 0);
    }
    gguf_free(&g);
    gl_unmap_file(&m);
}

Test(gguf_real, quantized_files_have_their_types)
{
    static const struct {
        const char *file;
        uint32_t type;
    } cases[] = {
        { "models/stories260K-F16.gguf", GGUF_T_F16 },
        { "models/stories260K-mixQ8_0.gguf", GGUF_T_Q8_0 },
        { "models/stories260K-mixQ4_0.gguf", GGUF_T_Q4_0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gl_mapping m;
        gguf_file g;
        gl_error err;
        int found = 0;
        map_shared(&m, cases[i].file);
        cr_assert_eq(gguf_parse(&g, m.data, m.size, &err), GL_OK, "%s", err.msg);
        for (uint64_t j = 0; j < g.n_tensors; j++)
            found += g.tensors[j].type == cases[i].type;
        cr_assert_gt(found, 0, "%s has no %s tensor", cases[i].file, gguf_type_name(cases[i].type));
        gguf_free(&g);
        gl_unmap_file(&m);
    }
}

Test(gguf_real, vocab_sizes)
{
    static const struct {
        const char *file;
        uint64_t n;
    } cases[] = {
        { "tokenizers/ggml-vocab-llama-spm.gguf", 32000 },
        { "tokenizers/ggml-vocab-gpt-2.gguf", 50257 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gl_mapping m;
        gguf_file g;
        gl_error err;
        map_shared(&m, cases[i].file);
        cr_assert_eq(gguf_parse(&g, m.data, m.size, &err), GL_OK, "%s", err.msg);
        const gguf_kv *kv = gguf_find(&g, "tokenizer.ggml.tokens");
        cr_assert(kv && kv->arr_n == cases[i].n, "%s", cases[i].file);
        gguf_free(&g);
        gl_unmap_file(&m);
    }
}

/* Cuts the real file at each structural boundary (and one byte either side). */
Test(gguf_real, stories260K_truncations)
{
    gl_mapping m;
    gguf_file g;
    gl_error err;
    size_t cuts[4096];
    size_t nc = 0;

    map_shared(&m, "models/stories260K.gguf");
    cr_assert_eq(gguf_parse(&g, m.data, m.size, &err), GL_OK, "%s", err.msg);
#define CUT(x)                                                                                     \
    do {                                                                                           \
        size_t c_ = (size_t)(x);                                                                   \
        if (nc + 3 <= sizeof cuts / sizeof cuts[0]) {                                              \
            cuts[nc++] = c_;                                                                       \
            cuts[nc++] = c_ + 1;                                                                   \
            cuts[nc++] = c_ - 1;                                                                   \
        }                                                                                          \
    } while (0)
    for (size_t c = 0; c <= 24; c++)
        cuts[nc++] = c;
    for (uint64_t i = 0; i < g.n_kv; i++) {
        const gguf_kv *kv = &g.kv[i];
        CUT((const uint8_t *)kv->key.ptr - m.data - 8);
        CUT((const uint8_t *)kv->key.ptr - m.data);
        CUT(kv->offset);
        CUT(kv->data - m.data);
    }
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const gguf_tensor *t = &g.tensors[i];
        CUT((const uint8_t *)t->name.ptr - m.data - 8);
        CUT((const uint8_t *)t->name.ptr - m.data + t->name.len);
        CUT(t->data - m.data);
        CUT(t->data - m.data + t->nbytes);
    }
    CUT(g.data_offset);
    CUT(m.size - 1);
#undef CUT
    int tested = 0;
    for (size_t i = 0; i < nc; i++) {
        if (cuts[i] >= m.size)
            continue;
        gl_error e2 = { 0 };
        gl_status st = parse_copy(m.data, cuts[i], &e2);
        cr_assert_eq(st, GL_ERR_FORMAT, "prefix of %zu bytes parsed", cuts[i]);
        tested++;
    }
    cr_assert_gt(tested, 100);
    /* one message as users see it */
    gl_error e3;
    parse_copy(m.data, m.size - 1, &e3);
    cr_assert(strstr(e3.msg, "runs past end of file"), "%s", e3.msg);
    gguf_free(&g);
    gl_unmap_file(&m);
}

/* ---- gl_map_file ---------------------------------------------------- */

Test(mapfile, errors)
{
    gl_mapping m;
    gl_error err;
    char dir[] = "/tmp/genloop_test_XXXXXX";
    char path[256];

    cr_assert_eq(gl_map_file(&m, "/nonexistent/genloop/x.gguf", &err), GL_ERR_IO);
    cr_assert_str_eq(err.msg, "cannot open '/nonexistent/genloop/x.gguf': No such file or "
                              "directory");
    cr_assert_null(m.data);

    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(gl_map_file(&m, dir, &err), GL_ERR_IO);
    cr_assert(strstr(err.msg, "is a directory"), "%s", err.msg);

    snprintf(path, sizeof path, "%s/empty.gguf", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fclose(f);
    cr_assert_eq(gl_map_file(&m, path, &err), GL_ERR_IO);
    cr_assert(strstr(err.msg, "is empty"), "%s", err.msg);

    f = fopen(path, "wb");
    fputs("GGUF", f);
    fclose(f);
    cr_assert_eq(gl_map_file(&m, path, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(m.size, 4);
    cr_assert(memcmp(m.data, "GGUF", 4) == 0);
    gl_unmap_file(&m);
    cr_assert_null(m.data);
    gl_unmap_file(&m);

    cr_assert_eq(gl_map_file(&m, "/dev/null", &err), GL_ERR_IO);
    cr_assert(strstr(err.msg, "not a regular file"), "%s", err.msg);
    cr_assert_eq(gl_map_file(&m, "", &err), GL_ERR_ARG);

    unlink(path);
    rmdir(dir);
}
