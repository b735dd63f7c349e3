# Berth. `make` lists the targets.
.DEFAULT_GOAL := help
.PHONY: help run test lint lint-openapi bench build

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-13s %s\n", $$1, $$2}'

run: ## serve the sandbox on SQLite + the simulated driver, with a demo account
	go run ./cmd/berthd serve --demo

# The version --version prints: the tag, or the commit, "-dirty" with uncommitted changes.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS := -X github.com/berthhq/berth/internal/version.Version=$(VERSION)

build: ## build berthd, the CLI berth and the Terraform/OpenTofu provider into ./, stamped with VERSION
	go build -ldflags "$(LDFLAGS)" -o berthd ./cmd/berthd
	go build -ldflags "$(LDFLAGS)" -o berth ./cmd/berth
	go build -ldflags "$(LDFLAGS)" -o terraform-provider-berth ./cmd/terraform-provider-berth

test: ## run every test (what CI runs)
	scripts/test.sh

lint: ## gofmt and go vet
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	go vet ./...

lint-openapi: ## lint api/openapi.yaml with Redocly CLI and Spectral (from npm, cached)
	scripts/lint-openapi.sh

bench: ## GET /v1/servers/{id} under wrk vs a bare net/http handler (see bench/README.md)
	bash bench/get-server.sh
