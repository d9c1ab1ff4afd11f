#!/usr/bin/env bash
# What `make synth` runs (and what test/determinism_test.go runs, so the
# tests prove the Makefile's behaviour): synthesize the app ONCE, with its
# Go functions bundled, into the cloud assembly OUT, then list the stacks
# from that assembly.
#
# Never `cdk list --app "go run ."` after the synth: it runs the app again
# with bundling skipped and overwrites OUT with an assembly whose Lambda
# assets point at the source tree, so `cdk deploy --app cdk.out` (CDK
# Pipelines, most CI) would upload the repository as function code.
# `--app <directory>` reads an existing assembly and runs nothing.
#
# Usage: [ENV=dev|prod] [OUT=dir] scripts/synth.sh [more cdk synth args]
#   e.g. scripts/synth.sh -c webPlaceholder=true
set -euo pipefail
cd "$(dirname "$0")/.."
env="${ENV:-dev}"
out="${OUT:-cdk.out}"
cdk --app "go run ." -c "env=$env" synth --quiet -o "$out" "$@"
ls "$out"/*.template.json
cdk --app "$out" list
