#!/usr/bin/env bash
# Builds genloop and lets a model write a story.
#   tools/demo.sh                 uses ../shared/models/stories260K.gguf when present
#   tools/demo.sh MODEL.gguf      uses the llama-architecture GGUF you give
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f build/build.ninja ]; then
    meson setup build --buildtype=release
fi
meson compile -C build

model="${1:-}"
if [ -z "$model" ]; then
    shared="${GENLOOP_SHARED:-../shared}"
    if [ -f "$shared/models/stories260K.gguf" ]; then
        model="$shared/models/stories260K.gguf"
    else
        echo "genloop demo: no model given and $shared/models/stories260K.gguf is not here." >&2
        echo "Run it with a llama-architecture GGUF file: tools/demo.sh path/to/model.gguf" >&2
        exit 2
    fi
fi
echo "genloop demo: $model" >&2
build/genloop run -m "$model" -p "Once upon a time" -n 200 --temp 0
