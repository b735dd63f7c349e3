#!/usr/bin/env bash
# Generates the Terraform/OpenTofu provider's documentation in the registry's layout
# (index.md, resources/*.md, data-sources/*.md) into docs/terraform, or into the
# directory given as the argument, from the provider's schema and the examples in
# examples/terraform. `go generate ./internal/tfprovider` runs it; the test
# TestDocsUpToDate (internal/tfprovider, with the acceptance tests) fails when
# docs/terraform is not what it generates.
#
# tfplugindocs (pinned below, built by `go run` in a module of its own) renders the
# pages. The schema comes from OpenTofu (scripts/tofu.sh) as `tofu providers schema
# -json` prints it for the provider built from this checkout, found through a
# dev_overrides CLI configuration: no registry, no network once the tools are cached.
set -euo pipefail
cd "$(dirname "$0")/.."

TFPLUGINDOCS=github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs@v0.25.0
out="${1:-docs/terraform}"

tofu="${TF_ACC_TERRAFORM_PATH:-$(scripts/tofu.sh)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/config"
go build -o "$tmp/bin/terraform-provider-berth" ./cmd/terraform-provider-berth
cat >"$tmp/cli.tfrc" <<EOF
provider_installation {
  dev_overrides {
    "berth/berth" = "$tmp/bin"
  }
  direct {}
}
EOF
cat >"$tmp/config/main.tf" <<'EOF'
terraform {
  required_providers {
    berth = { source = "berth/berth" }
  }
}
EOF
(cd "$tmp/config" && TF_CLI_CONFIG_FILE="$tmp/cli.tfrc" "$tofu" providers schema -json >"$tmp/schema.json")
# tfplugindocs looks the provider up by its short name (or under hashicorp/ in
# Terraform's registry); OpenTofu names it by its full address.
sed -i 's|"registry.opentofu.org/berth/berth":|"berth":|' "$tmp/schema.json"

rm -rf "$out"
mkdir -p "$out"
# tfplugindocs takes its directories relative to the provider's.
out="$(realpath --relative-to="$PWD" "$out")"
go run "$TFPLUGINDOCS" generate --provider-name berth --rendered-provider-name Berth \
	--provider-dir "$PWD" --providers-schema "$tmp/schema.json" \
	--examples-dir examples/terraform --website-source-dir "$(realpath --relative-to="$PWD" "$tmp")/templates" \
	--website-temp-dir "$tmp/website" --rendered-website-dir "$out" >&2
