#!/usr/bin/env bash
# Regenerates docs/ from schema descriptions, templates/ and examples/ with
# tfplugindocs. It needs a terraform CLI; the one scripts/tool.sh provides is
# put first on PATH so tfplugindocs never tries to download one.
set -euo pipefail
cd "$(dirname "$0")/.."

# The least-privilege manifest and guide template are rendered from the
# table in internal/rbac, so tfplugindocs embeds the current ones.
go run ./internal/rbac/cmd/rbacgen

tf=$(scripts/tool.sh terraform)
tfplugindocs=$(scripts/tool.sh tfplugindocs)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'disable_checkpoint = true\n' > "$work/terraformrc"

PATH="$(dirname "$tf"):$PATH" TF_CLI_CONFIG_FILE="$work/terraformrc" CHECKPOINT_DISABLE=1 \
  "$tfplugindocs" generate --provider-name zerotrust --rendered-provider-name zerotrust >"$work/log" 2>&1 || {
  cat "$work/log" >&2
  echo "docs.sh: tfplugindocs failed (log above)" >&2
  exit 1
}
echo "docs/ regenerated"
