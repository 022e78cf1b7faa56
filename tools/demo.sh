#!/usr/bin/env bash
# Builds genloop and lets a model write a story.
#   tools/demo.sh                 uses models/stories260K.gguf, the real model shipped
#                                 with the repository (see models/README.md)
#   tools/demo.sh MODEL.gguf      uses the llama-architecture GGUF you give
# Installs the Debian packages the build needs when they are missing (tools/deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh
ensure_packages meson ninja-build gcc pkg-config

if [ ! -f build/build.ninja ]; then
    meson setup build --buildtype=release
fi
meson compile -C build

model="${1:-}"
if [ -z "$model" ]; then
    shared="${GENLOOP_SHARED:-../shared}"
    if [ -f models/stories260K.gguf ]; then
        model=models/stories260K.gguf
    elif [ -f "$shared/models/stories260K.gguf" ]; then
        model="$shared/models/stories260K.gguf"
    else
        # No trained model here: generate a TinyStories-15M-shaped one with
        # genloop's own tool, so the whole pipeline still runs.
        model=build/demo-stories15m-q8_0.gguf
        [ -f "$model" ] || build/genloop synth --shape stories15m --type q8_0 -o "$model"
        echo "genloop demo: models/stories260K.gguf is missing, so this runs a" >&2
        echo "  synthetic model (random weights: the text is noise, the speed is real)." >&2
        echo "  For real text: tools/demo.sh path/to/any-llama-model.gguf" >&2
    fi
fi
echo "genloop demo: $model" >&2
build/genloop run -m "$model" -p "Once upon a time" -n 200 --temp 0
