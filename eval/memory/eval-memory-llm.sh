#!/usr/bin/env bash
# make eval-memory-llm: the review-memory eval (eval/memory/README.md) with
# a real model beside the offline engine (issue 25; not in `make test`).
#
# Starts the cached llama-server (eval/llm/serve.sh; Qwen2.5-Coder-1.5B-
# Instruct Q4_K_M on 2 cores) and runs `quorum-lab eval-memory` on every
# case, without and with memory, with the reviewer and security roles
# calling the model for one turn each (the cases are a few small files, so
# a round of tools adds little but minutes) and the tests role on its
# offline rules. With memory the model's prompt carries the case's past
# review threads and the learned conventions; the critic applies suppress
# items to its findings. Answers are cached (QUORUM_LLM_CACHE), so a re-run
# with unchanged prompts re-scores in seconds.
#
# Writes eval/memory/model-run/: results.json (the offline figures plus the
# model's own findings, `model`), command.txt, model.txt, run.log.
set -euo pipefail
QUORUM=${QUORUM:?set QUORUM to the quorum-lab binary}
OUT=${EVAL_MEMORY_LLM_OUT:-eval/memory/model-run}
NAME=${EVAL_LLM_MODEL:-qwen2.5-coder-1.5b-instruct}
mkdir -p "$OUT"
. eval/llm/serve.sh

cmd=("$QUORUM" eval-memory --cases eval/memory/cases --out "$OUT/results.json"
  --model-url "$EVAL_LLM_URL" --model "$NAME" --model-tools json
  --model-timeout-secs 900 --model-max-tokens 768 --model-effort reviewer=1,security=1,tests=0)
echo "quorum-lab ${cmd[*]:1}" | sed "s#$EVAL_LLM_URL#\$EVAL_LLM_URL#" >"$OUT/command.txt"
"${cmd[@]}" 2>&1 | tee "$OUT/run.log"
