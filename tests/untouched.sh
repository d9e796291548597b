#!/usr/bin/env bash
# untouched.sh - tests must not touch their inputs.  `snapshot FILE` records
# every file of the shared data ($SHARED_DATA, default ../shared/data: path,
# size, modification time, checksum) and the source tree's git status;
# `compare FILE` fails, naming what changed, when a test run wrote, added
# or removed any of them.
set -euo pipefail
cd "$(dirname "$0")/.."

state() {
	local data="${SHARED_DATA:-../shared/data}"
	if [ -d "$data" ]; then
		find "$data" -type f -printf '%p %s %T@\n' | sort
		find "$data" -type f -print0 | sort -z | xargs -0 -r md5sum
	fi
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git status --porcelain --untracked-files=all
	fi
}

case "${1:-}" in
snapshot) state >"$2" ;;
compare)
	if ! diff <(cat "$2") <(state) >"$2.diff"; then
		echo "untouched.sh: the test run changed its inputs or the source tree:" >&2
		cat "$2.diff" >&2
		exit 1
	fi
	;;
*) echo "usage: untouched.sh snapshot|compare FILE" >&2; exit 2 ;;
esac
