#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios against picode's MCP client
# (docs/benchmarks.md, "MCP conformance"). Not in CI: it needs the npm registry and Node 22,
# which it installs, with the suite, into a throwaway folder (kept between runs with
# --keep DIR). The client under test is bench/_mcp_conformance_client.py run with the
# project's virtualenv.
#
#   bench/mcp_conformance.sh [--keep DIR] [--version 0.1.16] [SCENARIO...]
#
# Without scenarios, every client scenario the suite lists is run, one at a time; a line
# per scenario says passed/failed/warnings, and the suite's own results (checks.json and
# the client's stdout/stderr) stay under DIR/results.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
python="$root/.venv/bin/python"
version="0.1.16"
keep=""
scenarios=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep="$2"; shift 2 ;;
    --version) version="$2"; shift 2 ;;
    *) scenarios+=("$1"); shift ;;
  esac
done
dir="${keep:-$(mktemp -d -t picode-conformance-XXXXXX)}"
mkdir -p "$dir"
if [ ! -x "$dir/node_modules/.bin/conformance" ]; then
  npm install --silent --prefix "$dir" node@22 "@modelcontextprotocol/conformance@$version" >&2
fi
export PATH="$dir/node_modules/node/bin:$PATH"
echo "node $(node --version), @modelcontextprotocol/conformance $version, $("$python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))')" >&2
cd "$dir"
if [ ${#scenarios[@]} -eq 0 ]; then
  mapfile -t scenarios < <(node_modules/.bin/conformance list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
fi
for scenario in "${scenarios[@]}"; do
  out="$(node_modules/.bin/conformance client \
    --command "$python $root/bench/_mcp_conformance_client.py" \
    --scenario "$scenario" --timeout 60000 -o "$dir/results" 2>&1 || true)"
  summary="$(printf '%s\n' "$out" | sed -n 's/^Passed: //p' | tail -1)"
  printf '%-48s %s\n' "$scenario" "${summary:-no result (see $dir/results)}"
done
[ -n "$keep" ] || echo "results: $dir/results" >&2
