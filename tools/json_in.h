/* A small reader for the flat JSON objects of `genloop batch` input lines:
 * string, number, boolean and null values and arrays of strings are decoded;
 * any other value (objects, other arrays) is kept as raw text. */
#ifndef GENLOOP_TOOLS_JSON_IN_H
#define GENLOOP_TOOLS_JSON_IN_H

#include <stdbool.h>
#include <stddef.h>

enum { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_STR_ARRAY, JV_OTHER /* object, mixed array */ };

typedef struct json_value {
    char key[64];
    int type;
    const char *raw; /* the value's text in the line, for echoing ids */
    size_t raw_len;
    double num;
    bool b;
    char *str; /* decoded, NUL-terminated (may hold NULs: str_len) */
    size_t str_len;
    char **arr; /* JV_STR_ARRAY */
    int n_arr;
} json_value;

typedef struct json_object {
    json_value *v;
    int n;
} json_object;

/* Parses one object; on error returns false and writes a message naming the
 * column. */
bool json_parse_object(const char *s, size_t len, json_object *o, char *msg, size_t msg_cap);
void json_object_free(json_object *o);
const json_value *json_get(const json_object *o, const char *key);

#endif
