#!/usr/bin/env bash
# Written by mcpspec ci-init: test the MCP server from any CI system (or by hand).
# Needs Go on PATH; reports go to mcpspec-report/ (publish it as the job's artefact).
# Runs every check, then exits non-zero when any of them failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export MCPSPEC_SERVER=${MCPSPEC_SERVER:-testserver}

go install github.com/mcpspec/mcpspec/cmd/mcpspec@v1.2.3 || exit 2
export PATH="$(go env GOPATH)/bin:$PATH"
mkdir -p mcpspec-report

status=0
run() {
  echo "+ $*"
  "$@" || { rc=$?; echo "mcpspec ci: '$1 $2' failed with exit code $rc" >&2; [ "$status" -ne 0 ] || status=$rc; }
}
run mcpspec test collections/ --reporter junit=mcpspec-report/junit.xml --reporter html=mcpspec-report/report.html
run mcpspec audit --server "$MCPSPEC_SERVER" --format sarif --output mcpspec-report/audit.sarif --fail-on high
run mcpspec score --server "$MCPSPEC_SERVER" --min-score 80 --badge mcpspec-report/score.svg
run mcpspec load --server "$MCPSPEC_SERVER" --collection collections/ --rate 10/s --duration 10s --out mcpspec-report/runs --progress plain
exit "$status"
