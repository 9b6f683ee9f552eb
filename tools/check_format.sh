#!/usr/bin/env bash
# Fails when a tracked C++ file differs from .clang-format (run `make format` to fix).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format is not installed (make deps installs it)" >&2; exit 1; }
files=$(git ls-files -co --exclude-standard -- '*.cpp' '*.h')
[ -n "$files" ] || { echo "no C++ files found: is this a git checkout?" >&2; exit 1; }
echo "$files" | xargs clang-format --dry-run --Werror
echo "$(echo "$files" | wc -l) files formatted as .clang-format says"
