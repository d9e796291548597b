# shellcheck shell=bash
# evkit-common.sh - shell functions shared by the evkit pipelines (sourced,
# not run).  Bash; callers use `set -euo pipefail`.

# evk_die MSG: print "PROG: MSG" and exit 1.
evk_die() {
	printf '%s: %s\n' "${EVK_PROG:-evkit}" "$*" >&2
	exit 1
}

# evk_usage_error MSG: print the message and a hint, exit 2.
evk_usage_error() {
	printf '%s: %s\nTry '"'"'%s --help'"'"'.\n' "${EVK_PROG:-evkit}" "$*" "${EVK_PROG:-evkit}" >&2
	exit 2
}

# evk_need TOOL...: fail clearly when a program is missing from PATH.
evk_need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || evk_die "cannot find '$t' in PATH (build evkit with 'make' and add bin/ to PATH)"
	done
}

# evk_parallel N: run the NUL-separated shell commands read on stdin, N at a
# time, with GNU parallel when it is installed, else xargs -P.  Fails if any
# command fails.
evk_parallel() {
	local n="$1"
	if command -v parallel >/dev/null 2>&1 && parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
		parallel --will-cite --halt now,fail=1 -0 -j "$n" bash -c '{}'
	else
		xargs -0 -r -P "$n" -I '{}' bash -c '{}'
	fi
}

# evk_rank_traces DIR: print the trace files of one run, one per line, in
# rank order: DIR/torch_profiler/rank<N>/*.json[.gz] or DIR/rank<N>/*, or the
# Kineto/Chrome JSON files directly in DIR.
evk_rank_traces() {
	local dir="$1" base
	if [ -d "$dir/torch_profiler" ]; then
		base="$dir/torch_profiler"
	else
		base="$dir"
	fi
	{
		find "$base" -mindepth 2 -maxdepth 2 -type f \( -name '*.json' -o -name '*.json.gz' \) -path '*rank*' 2>/dev/null
		find "$base" -mindepth 1 -maxdepth 1 -type f \( -name '*.json' -o -name '*.json.gz' \) 2>/dev/null
	} | awk '{ r = $0; if (match(r, /rank[_-]?[0-9]+/)) { s = substr(r, RSTART, RLENGTH); gsub(/[^0-9]/, "", s); print s "\t" $0 } else print "999999999\t" $0 }' |
		sort -t$'\t' -k1,1n -k2,2 | cut -f2-
}

# evk_nsys_exports DIR: the Nsight Systems SQLite exports in DIR (sorted).
evk_nsys_exports() {
	find "$1" -maxdepth 2 -type f \( -name '*.sqlite' -o -name '*.sqlite3' \) 2>/dev/null | sort
}

# evk_sweep_configs DIR: print "LABEL<TAB>CONFIG_DIR<TAB>key=value ..." for
# every configuration of a sweep, sorted numerically by its keys.  Layouts:
#   <T>thread/nccl_<C>channels/   -> threads=T channels=C
#   <CU>cu_<T>threads/            -> cu=CU threads=T
# A DIR that is itself one run (has torch_profiler/ or rank*/ or *.sqlite)
# is printed as a single configuration.
evk_sweep_configs() {
	local dir="${1%/}" d rel
	while IFS= read -r d; do
		rel="${d#"$dir"/}"
		if [[ "$rel" =~ ^([0-9]+)thread/nccl_([0-9]+)channels$ ]]; then
			printf '%s\t%s\t%s\n' "${BASH_REMATCH[1]}thread_${BASH_REMATCH[2]}ch" "$d" "threads=${BASH_REMATCH[1]} channels=${BASH_REMATCH[2]}"
		elif [[ "$rel" =~ ^([0-9]+)cu_([0-9]+)threads?$ ]]; then
			printf '%s\t%s\t%s\n' "${BASH_REMATCH[1]}cu_${BASH_REMATCH[2]}threads" "$d" "cu=${BASH_REMATCH[1]} threads=${BASH_REMATCH[2]}"
		fi
	done < <(find "$dir" -mindepth 1 -maxdepth 2 -type d | sort) |
		sort -t$'\t' -k3,3V
	if [ -d "$dir/torch_profiler" ] || compgen -G "$dir/rank*" >/dev/null || compgen -G "$dir/*.sqlite" >/dev/null; then
		printf '%s\t%s\t\n' "$(basename "$dir")" "$dir"
	fi
}
