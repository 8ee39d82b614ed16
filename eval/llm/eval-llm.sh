#!/usr/bin/env bash
# make eval-llm: the context-mode ablation with a real model (issue 15).
#
# Starts the cached llama-server (eval/llm/setup.sh builds it and the pinned
# Qwen2.5-Coder-1.5B-Instruct weights once), then runs `quorum-lab eval` on the
# storefront subset (and, with EVAL_LLM_SETS, the click and requests
# held-out subsets), in all three context modes, twice per set: offline
# alone, and offline + model (which also scores the model's findings alone,
# after and before the critic). The same model is the judge of "explained"
# scores; its agreement with eval/judge/labels.json is measured at the start
# of every run (replayed from the response cache after the first) and
# printed beside the figures.
#
# Budget (2 cores, measured): llama-server reads prompts at ~31 tokens/s and
# writes ~12 tokens/s, so one model role's review takes one to two minutes
# (graph_rag's second turn carries the tool results) and a case in three
# modes about five. To fit about 80 minutes, only the reviewer role calls the
# model (2 turns: one round of tools, then the answer); static and security
# run their offline rules (`--model-effort security=0`), and every model role
# runs its offline rules beside the model anyway. The storefront run takes
# its ten defect cases and three of its six clean controls (the first three
# by id); EVAL_LLM_SETS adds the click and requests subsets below when there
# is time (about 45 and 40 minutes more). Model answers are recorded in a
# response cache (QUORUM_LLM_CACHE), so a re-run with unchanged prompts
# re-scores in seconds; every results.json says how many answers were live.
#
# Writes docs/eval-llm/<date>/: one directory per run (results.json,
# report.md, charts), command.txt, model.txt (file, sha256, server flags),
# and report.md (eval/llm/summarise.py).
#
# Settings: QUORUM (the quorum-lab binary), EVAL_LLM_URL (use a running
# OpenAI-compatible server instead of starting llama-server),
# EVAL_LLM_MODEL, EVAL_LLM_OUT, EVAL_LLM_SETS (default: storefront; add click and requests).
set -euo pipefail
QUORUM=${QUORUM:?set QUORUM to the quorum-lab binary}
OUT=${EVAL_LLM_OUT:-docs/eval-llm/$(date -u +%F)}
NAME=${EVAL_LLM_MODEL:-qwen2.5-coder-1.5b-instruct}
HELDOUT=${HELDOUT_DIR:-$HOME/.cache/quorum/heldout}
mkdir -p "$OUT"
. eval/llm/serve.sh

JUDGE=(--judge-url "$EVAL_LLM_URL" --judge-model "$NAME")
MODEL=(--model-url "$EVAL_LLM_URL" --model "$NAME" --model-tools json --model-first-turn-tools
  --model-timeout-secs 600 --model-max-tokens 768 --model-effort reviewer=2,security=0
  --roles static,reviewer,security)

# set name, fixture, cases, case subset (empty: all)
sets() {
  echo "storefront storefront-fixture storefront-fixture/cases 01-,02-,03-,04-,05-,06-,07-,08-,09-,10-,11-,12-,13-"
  echo "click $HELDOUT/click-8.1.7/src eval/heldout/click h01-,h02-,h03-,h04-,h05-,h06-,h10-,h12-,h13-"
  echo "requests $HELDOUT/requests-2.32.3/src eval/heldout/requests -"
}
wanted=${EVAL_LLM_SETS:-storefront}
# Appends: runs of other sets on the same day share the directory.
touch "$OUT/command.txt"
sets | while read -r name fixture cases only; do
  case " $wanted " in *" $name "*) ;; *) continue ;; esac
  [ -d "$fixture" ] || { echo "$fixture is missing: run make heldout-check once to fetch it" >&2; exit 1; }
  subset=()
  if [ "$only" != "-" ]; then
    ids=$(for p in ${only//,/ }; do ls "$cases" | grep "^$p" | sed 's/\.json$//'; done | paste -sd,)
    subset=(--only "$ids")
  fi
  for engine in offline model; do
    extra=("${JUDGE[@]}")
    [ "$engine" = model ] && extra+=("${MODEL[@]}")
    cmd=("$QUORUM" eval --fixture "$fixture" --cases "$cases" --out "$OUT/$name-$engine" "${subset[@]}" "${extra[@]}")
    echo "${cmd[*]}" >>"$OUT/command.txt"
    "${cmd[@]}" 2>&1 | tee "$OUT/$name-$engine.log"
  done
done
python3 eval/llm/summarise.py "$OUT"
