#!/usr/bin/env bash
# Checks every example under examples/ the way users meet them:
#   1. `terraform fmt -check -recursive examples/`;
#   2. `terraform validate` of every root example directory, and of every
#      doc snippet directory (examples/resources/<type>, data-sources/<type>,
#      actions/<type>, functions/<name>, provider) wrapped with a terraform
#      block and, where it has none, a provider block;
#   3. the sample terraform.tfvars.json an example directory ships: loaded
#      by `terraform console` (without the example's backend block, if
#      any), which checks its values against the variables' types and
#      validation rules (a required sensitive variable, which the README
#      says to give in the environment, gets a placeholder);
# with the provider built from this checkout and selected through a CLI
# configuration with dev_overrides, so nothing is downloaded.
#
# Examples that need a provider not available offline are validated with that
# provider's blocks stubbed: their resources become terraform_data holding
# the same arguments, so the zerotrust side and every reference are still
# checked (STUB_PROVIDERS, default "dns" for hashicorp/dns). Examples for
# OpenTofu only (directories whose name starts with "opentofu-") are
# validated with `tofu`: TOFU if set, else the pinned one from
# scripts/tool.sh (TOFU=skip skips them, saying so).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0
STUB_PROVIDERS=${STUB_PROVIDERS:-dns}

tf=$(scripts/tool.sh terraform)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "examples-check: building the provider"
GOFLAGS=-buildvcs=false CGO_ENABLED=0 go build -o "$work/bin/terraform-provider-zerotrust" .
cat >"$work/terraformrc" <<RC
disable_checkpoint = true
provider_installation {
  dev_overrides {
    "ztfabric/zerotrust" = "$work/bin"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE=$work/terraformrc

failed=()
checked=0
skipped=()

echo "examples-check: terraform fmt -check -recursive examples/"
if ! "$tf" fmt -check -recursive -diff examples/; then
	failed+=("fmt")
fi

# stub FILE...: rewrite blocks of the providers in STUB_PROVIDERS in place.
stub() {
	STUB=$(tr ' ' '|' <<<"$STUB_PROVIDERS") perl -0pi -e '
		my $n = qr/(?:$ENV{STUB})/;
		s/^    $n = \{\n.*?^    \}\n//msg;                       # required_providers entry
		s/^provider "$n" \{\n.*?^\}\n//msg;                      # provider block
		s/^(?:resource|data) "($n\_\w+)" "(\w+)" \{\n(.*?)^\}\n/resource "terraform_data" "stub_$1_$2" {\n  input = {\n$3  }\n}\n/msg;
		s/\b(?:data\.)?($n\_\w+)\.(\w+)/terraform_data.stub_$1_$2/g;
	' "$@"
}

# validate NAME DIR [BIN]: terraform (or BIN) validate in DIR, a scratch copy.
validate() {
	local name=$1 dir=$2 bin=${3:-$tf} out
	# Local modules are installed without asking a registry for providers
	# (`init` would, even with dev_overrides).
	if grep -qs '^module ' "$dir"/*.tf; then
		if ! out=$(cd "$dir" && "$bin" get -no-color 2>&1); then
			printf 'FAIL %s (get)\n%s\n' "$name" "$out"
			failed+=("$name")
			return
		fi
	fi
	# Query files (.tfquery.hcl: list blocks) are validated too.
	if ! out=$(cd "$dir" && "$bin" validate -no-color $([[ $bin == "$tf" ]] && echo -query) 2>&1); then
		printf 'FAIL %s\n%s\n' "$name" "$out"
		failed+=("$name")
		return
	fi
	# The shipped sample variables: console loads terraform.tfvars.json and
	# evaluates every variable's type and validation rules, without
	# configuring a provider or reaching a cluster. It reports a failed rule
	# as an error but still exits 0, hence the grep.
	# A directory without one ships .tfvars samples for the reader to copy
	# (examples/quickstart): each is loaded the same way with -var-file.
	local samples=() sample
	if [[ -e $dir/terraform.tfvars.json ]]; then
		samples=("")
	else
		for sample in "$dir"/*.tfvars; do
			[[ -e $sample ]] && samples+=("$(basename "$sample")")
		done
	fi
	# console reads the state, so it refuses a backend that `init` has not
	# set up (init would also ask a registry for the providers); the samples
	# are checked in the scratch copy without its backend block, on the
	# local state, which is empty either way.
	if grep -qs '^  backend "' "$dir"/*.tf; then
		perl -0pi -e 's/^  backend "\w+" \{\n.*?^  \}\n//msg' "$dir"/*.tf
	fi
	for sample in "${samples[@]}"; do
		out=$(cd "$dir" && echo 'true' | TF_VAR_tsig_secret=placeholder "$bin" console -no-color ${sample:+-var-file="$sample"} 2>&1) || out+=$'\nError: console exited non-zero'
		if grep -q '^Error: ' <<<"$out"; then
			printf 'FAIL %s (%s)\n%s\n' "$name" "${sample:-terraform.tfvars.json}" "$out"
			failed+=("$name")
			return
		fi
	done
	printf 'ok   %s\n' "$name"
	checked=$((checked + 1))
}

# Root examples: every directory with .tf files outside the doc snippets.
# Copied whole (with examples/modules, for relative module sources).
while IFS= read -r dir; do
	rel=${dir#examples/}
	case $rel in
	resources/* | data-sources/* | actions/* | functions/* | provider) continue ;;
	esac
	scratch=$work/roots
	rm -rf "$scratch" && mkdir -p "$scratch"
	cp -r examples/. "$scratch/"
	find "$scratch" -name .terraform -prune -exec rm -rf {} + -o -name '.terraform.lock.hcl' -exec rm -f {} +
	target=$scratch/$rel
	if [[ $(basename "$rel") == opentofu-* ]]; then
		if [[ ${TOFU:-} == skip ]]; then
			skipped+=("$rel: OpenTofu-only syntax (provider for_each) and TOFU=skip")
			continue
		fi
		tofu=${TOFU:-}
		if [[ -z $tofu ]] && ! tofu=$(scripts/tool.sh tofu); then
			printf 'FAIL %s: cannot build tofu (scripts/tool.sh tofu, log above)\n' "$rel"
			failed+=("$rel")
			continue
		fi
		validate "$rel (tofu)" "$target" "$tofu"
		continue
	fi
	if grep -Eqs "source *= *\"hashicorp/($STUB_PROVIDERS)\"" "$target"/*.tf; then
		stub "$target"/*.tf
		validate "$rel (stubbed: $STUB_PROVIDERS)" "$target"
		continue
	fi
	validate "$rel" "$target"
done < <(find examples -name '*.tf' -not -path '*/.terraform/*' -printf '%h\n' | sort -u)

# Doc snippets: fragments, validated with a terraform block (and a provider
# block unless they are the provider example).
# A resource's two import examples (by ID string, by identity) target the same
# resources, so each is validated with resource.tf but without the other.
snippet() {
	local name=$1 dir=$2 without=$3 f
	scratch=$work/snippet
	rm -rf "$scratch" && mkdir -p "$scratch"
	for f in "$dir"/*.tf "$dir"/*.tfquery.hcl; do
		[[ -e $f && $(basename "$f") != "$without" ]] && cp "$f" "$scratch/"
	done
	cat >"$scratch/zz_wrapper.tf" <<'TF'
terraform {
  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}
TF
	if ! grep -qs '^provider "zerotrust"' "$scratch"/*.tf; then
		printf 'provider "zerotrust" {}\n' >>"$scratch/zz_wrapper.tf"
	fi
	validate "$name" "$scratch"
}
for dir in examples/provider examples/resources/* examples/data-sources/* examples/actions/* examples/functions/* examples/list-resources/*; do
	[[ -d $dir ]] || continue
	if [[ -e $dir/import-by-identity.tf ]]; then
		snippet "${dir#examples/}" "$dir" import-by-identity.tf
		snippet "${dir#examples/} (import by identity)" "$dir" import-by-string-id.tf
	else
		snippet "${dir#examples/}" "$dir" ""
	fi
done

echo
for s in "${skipped[@]}"; do
	echo "SKIPPED $s"
done
if ((${#failed[@]})); then
	echo "examples-check: FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "examples-check: ok ($checked directories validated, ${#skipped[@]} skipped, fmt clean)"
