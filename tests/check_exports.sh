#!/bin/sh
# The shared library exports exactly the functions include/genloop.h declares
# with GL_API (nothing internal: the ISA kernels are built with hidden
# visibility) and carries a versioned SONAME. Exit 77: meson's "skipped".
set -u
so=$1 header=$2
for tool in nm objdump; do
    command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool not found"; exit 77; }
done
[ -f "$so" ] || { echo "FAIL: no library at $so"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
sed -n 's/^GL_API[^(]*[^a-z_0-9]\(gl_[a-z_0-9]*\)(.*/\1/p' "$header" | sort -u >"$tmp/declared"
nm -D --defined-only "$so" | awk '{ print $NF }' | sort -u >"$tmp/exported"
[ "$(wc -l <"$tmp/declared")" -gt 30 ] || { echo "FAIL: cannot read the API from $header"; exit 1; }
status=0
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
[ -z "$extra" ] || { echo "FAIL: exported but not public:" $extra; status=1; }
[ -z "$missing" ] || { echo "FAIL: public but not exported:" $missing; status=1; }
soname=$(objdump -p "$so" | awk '$1 == "SONAME" { print $2 }')
case $soname in
libgenloop.so.[0-9]*) ;;
*) echo "FAIL: SONAME is '$soname', want libgenloop.so.<version>"; status=1 ;;
esac
[ $status = 0 ] && echo "ok: $(wc -l <"$tmp/exported") public symbols, SONAME $soname"
exit $status
