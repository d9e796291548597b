# shellcheck shell=bash
# evkit-common.sh - shell functions shared by the evkit pipelines (sourced,
# not run).  Bash.
#
# A pipeline loads this file only, from beside itself (the source tree's
# pipelines/) or from ../libexec/evkit (`make install` puts the programs in
# $(bindir), the helpers in $(libexecdir) = $(prefix)/libexec/evkit):
#   case "$0" in */*) lib=${0%/*} ;; *) lib=. ;; esac
#   [ -f "$lib/evkit-common.sh" ] || lib+=/../libexec/evkit
#   . "$lib/evkit-common.sh" || exit 1
# Loaded so by a pipeline (the file sourcing it is the program run), it also
# starts the pipeline: `set -euo pipefail`, EVK_PROG from the program's
# name, and evk_supervise with its arguments (below, at the end).  Sourced
# from anywhere else (the tests), it only defines.
# This file then loads its companions from its own directory, so that the
# way to find them is written once: evkit-report.sh always (definitions
# only, a millisecond), evkit-slurm.sh (--slurm) when it is installed.
#
# What a pipeline gets here:
#   errors        evk_die, evk_usage_error, evk_need, evk_rename_in
#   conventions   evk_version (--version), evk_say / evk_step (progress with
#                 elapsed time on stderr; EVK_QUIET=1 silences it)
#   signals       evk_supervise: the pipeline runs as a worker in its own
#                 process group; TERM/INT/HUP end the whole group, wait for
#                 it and remove the temporary and staging directories
#   outputs       evk_stage_dir / evk_publish: outputs are built in a hidden
#                 directory inside OUT and renamed into place at the end, so
#                 an interrupted run leaves the previous outputs as they were
#   discovery     evk_discover: configurations of a sweep (known layouts, a
#                 path regex with keys, a single run, a flat folder of JSON),
#                 --select and --ranks subsets, symlinks followed
#   options       evk_option: -h, -V, -o, -j, -k, -q, --xlsx, --slurm and
#                 the discovery options
#   jobs          evk_parallel, evk_convert_cmd, evk_convert_files_cmd
#   reports       evkit-report.sh: rpt_* (HTML), plot_* (gnuplot), tsv_*

# The directory of this file, as dirname prints it (a parameter expansion:
# the pipelines start thousands of small processes in the tests).
case "${BASH_SOURCE[0]}" in
*/*) EVK_LIBDIR="${BASH_SOURCE[0]%/*}" && EVK_LIBDIR="${EVK_LIBDIR:-/}" ;;
*) EVK_LIBDIR=. ;;
esac

# shellcheck source=pipelines/evkit-report.sh
. "$EVK_LIBDIR/evkit-report.sh"

# --- errors -----------------------------------------------------------------

# evk_msg MSG: "PROG: MSG" on stderr.  Messages quote paths and names:
# their control bytes are shown as '?' so that they cannot drive the
# terminal (the C tools show them as \xNN).
evk_msg() {
	# One write, the newline with it: jobs running side by side print
	# whole lines.
	local LC_ALL=C s="${EVK_PROG:-evkit}: $*"
	s=${s//[$'\001'-$'\037'$'\177']/?}
	printf '%s\n' "$s" >&2
}

# evk_show FILE...: the messages the tools of a stage wrote to FILE..., each
# distinct line once (first-seen order) with its count, control bytes shown
# as '?'; adds the number of warning lines to EVK_NWARN for evk_warn_total.
# Lines that differ only in their numbers ("12 kernels overrun", "7 kernels
# overrun") are one line, each number that varies shown as its range
# ("7..12 kernels overrun [2 times]").  A number is a run of digits (and
# decimals) not glued to a letter or '_' before it: the 3 of "rank3" is part
# of a name, and lines about two files stay two lines.
EVK_NWARN=0
evk_show() {
	local f nw
	for f in "$@"; do
		[ -s "$f" ] || continue
		nw=$(grep -c ': warning: ' "$f" || true)
		EVK_NWARN=$((EVK_NWARN + nw))
		LC_ALL=C awk '
		{
			# The line as a template (numbers as \036) and its numbers.
			t = ""; r = $0; k = 0
			while (match(r, /[0-9]+(\.[0-9]+)?/)) {
				pre = substr(r, 1, RSTART - 1); num = substr(r, RSTART, RLENGTH)
				before = (pre != "") ? substr(pre, length(pre), 1) : substr(t, length(t), 1)
				r = substr(r, RSTART + RLENGTH)
				if (before ~ /[A-Za-z_.]/ || (before == "-" && pre == "" && t == "")) { t = t pre num; continue }
				t = t pre "\036"; v[++k] = num
			}
			t = t r
			if (!(t in c)) { o[n++] = t; nk[t] = k; first[t] = $0 }
			c[t]++
			if (!((t, $0) in seen)) { seen[t, $0] = 1; lines[t]++ }
			for (i = 1; i <= k; i++) {
				x = v[i] + 0
				if (c[t] == 1 || x < lo[t, i] + 0) lo[t, i] = v[i]
				if (c[t] == 1 || x > hi[t, i] + 0) hi[t, i] = v[i]
			}
		}
		END {
			for (j = 0; j < n; j++) {
				t = o[j]; out = first[t]
				if (lines[t] > 1) {
					out = ""; r = t
					for (i = 1; i <= nk[t]; i++) {
						p = index(r, "\036")
						out = out substr(r, 1, p - 1) (lo[t, i] == hi[t, i] ? lo[t, i] : lo[t, i] ".." hi[t, i])
						r = substr(r, p + 1)
					}
					out = out r
				}
				print (c[t] > 1 ? out " [" c[t] " times]" : out)
			}
		}' "$f" |
			LC_ALL=C tr '\001-\010\013-\037\177' '?' >&2
	done
}

# evk_warn_total: the closing line "N warning(s) from the tools, shown above"
# when evk_show saw any (a result with caveats must not look clean).
evk_warn_total() {
	[ "$EVK_NWARN" = 0 ] || evk_msg "$EVK_NWARN warning(s) from the tools, shown above: read them before the results"
}

# evk_die MSG: print "PROG: MSG" and exit 1.
evk_die() {
	EVK_EXPLAINED=1
	evk_msg "$*"
	exit 1
}

# evk_usage_error MSG: print the message and a hint, exit 2.
evk_usage_error() {
	EVK_EXPLAINED=1
	evk_msg "$*"
	printf "Try '%s --help'.\\n" "${EVK_PROG:-evkit}" >&2
	exit 2
}

# evk_need TOOL...: fail clearly when a program is missing from PATH.
evk_need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || evk_die "cannot find '$t' in PATH (build evkit with 'make' and add bin/ to PATH)"
	done
}

# --- conventions ------------------------------------------------------------

# evk_version: the --version text, "PROG (evkit) X.Y.Z", from the tools of
# the same build (bin/ next to pipelines/ in the source tree, or the same
# bin/ when installed).
evk_version() {
	local here v="" t
	here="$(cd "$EVK_LIBDIR" && pwd)"
	for t in "$here/../bin/ev-view" "$here/../../bin/ev-view" "$(command -v ev-view 2>/dev/null || true)"; do
		if [ -z "$t" ] || [ ! -x "$t" ]; then continue; fi
		v=$("$t" --version 2>/dev/null | awk 'NR == 1 { print $NF }') && [ -n "$v" ] && break
	done
	printf '%s (evkit) %s\n' "${EVK_PROG:-evkit}" "${v:-unknown}"
	printf 'Copyright: the evkit authors; MIT licence.\n'
}

# EVK_T0: start of the run (EPOCHREALTIME), for the elapsed times printed.
EVK_T0="${EVK_T0:-${EPOCHREALTIME:-$(date +%s)}}"
export EVK_T0 EVK_PROG EVK_QUIET

# evk_elapsed: seconds since EVK_T0, one decimal.
evk_elapsed() {
	local a="$EVK_T0" b="${EPOCHREALTIME:-}" t
	# Both SECONDS.MICROSECONDS (EPOCHREALTIME in a locale with a '.'):
	# shell arithmetic on microseconds, rounded to tenths.  Else awk.
	if [[ "$a" =~ ^[0-9]+\.[0-9]{6}$ && "$b" =~ ^[0-9]+\.[0-9]{6}$ ]]; then
		t=$(((10#${b/./} - 10#${a/./} + 50000) / 100000))
		if [ "$t" -ge 0 ]; then
			printf '%d.%d' $((t / 10)) $((t % 10))
			return
		fi
	fi
	awk -v a="$a" -v b="${b:-$(date +%s)}" 'BEGIN { printf "%.1f", b - a }'
}

# evk_say MSG: a progress line "PROG: [  1.2s] MSG" on stderr (not with
# EVK_QUIET=1).
evk_say() {
	[ "${EVK_QUIET:-0}" = 1 ] || evk_msg "$(printf '[%6ss] %s' "$(evk_elapsed)" "$*")"
}

# evk_step N TOTAL MSG: "PROG: [  1.2s] step N/TOTAL: MSG".
evk_step() {
	evk_say "step $1/$2: $3"
}

# evk_job_done COUNTFILE TOTAL WHAT: called by a finished job (exported to
# the job shells): counts it and prints "done K/TOTAL: WHAT".
evk_job_done() {
	local fd
	local -a lines
	# flock holds the lock on the shell's descriptor (released when it is
	# closed): the count is read here, not by a sh and a wc.
	exec {fd}>>"$1"
	flock "$fd"
	printf '.\n' >&"$fd"
	mapfile -t lines <"$1"
	exec {fd}>&-
	evk_say "done ${#lines[@]} of $2: $3"
}
export -f evk_job_done evk_say evk_msg evk_elapsed

# --- signals, temporary files, staged outputs ---------------------------------

# evk_supervise "$@": call before parsing options.  The first call makes
# this shell a supervisor: it creates the temporary directory EVK_WORK,
# starts the same script again as the worker in a new process group, waits
# for it and passes on its exit status.  On TERM, INT or HUP it ends the
# whole group (the worker, xargs, the converters, gnuplot, ...), waits until
# none is left (KILL after 10 s), removes EVK_WORK and every staging
# directory the worker registered, says so and exits 128 + signal.  In the
# worker the call returns at once, with TMPDIR inside EVK_WORK (the tools'
# spill files go there too) and an EXIT trap that explains any failure that
# was not explained yet.
evk_supervise() {
	if [ -n "${EVK_SUPERVISOR:-}" ] && [ "$EVK_SUPERVISOR" = "$PPID" ] && [ -d "${EVK_WORK:-}" ]; then
		# The worker.  Pipelines it starts are supervisors of their own.
		export -n EVK_SUPERVISOR EVK_WORK
		unset EVK_SUPERVISOR
		mkdir -p "$EVK_WORK/tmp"
		export TMPDIR="$EVK_WORK/tmp"
		set -E
		trap 'EVK_FAILED_CMD=$BASH_COMMAND EVK_FAILED_LINE=$LINENO' ERR
		trap '_evk_worker_exit' EXIT
		# Ended with its group by the supervisor, which explains it.
		# A submitted Slurm array is cancelled (evk_slurm_cancel).
		trap 'EVK_EXPLAINED=1; _evk_cancel_slurm; exit 143' TERM
		trap 'EVK_EXPLAINED=1; _evk_cancel_slurm; exit 130' INT
		trap 'EVK_EXPLAINED=1; _evk_cancel_slurm; exit 129' HUP
		return 0
	fi
	local pid rc=0 self="$0"
	EVK_WORK=$(mktemp -d "${TMPDIR:-/tmp}/${EVK_PROG:-evkit}.XXXXXX") || {
		printf '%s: cannot create a temporary directory in %s\n' "${EVK_PROG:-evkit}" "${TMPDIR:-/tmp}" >&2
		exit 1
	}
	export EVK_WORK EVK_SUPERVISOR=$$
	set -m
	"$BASH" "$self" "$@" &
	pid=$!
	set +m
	EVK_CHILD_PGID=$pid
	trap '_evk_interrupted 15 TERM' TERM
	trap '_evk_interrupted 2 INT' INT
	trap '_evk_interrupted 1 HUP' HUP
	wait "$pid" || rc=$?
	trap - TERM INT HUP
	_evk_reap "$pid"
	# A failed run leaves no output directory of its own (its outputs are
	# staged, published only at the end).
	[ "$rc" = 0 ] || _evk_new_outs >/dev/null
	_evk_remove_work
	exit "$rc"
}

_evk_cancel_slurm() {
	if command -v evk_slurm_cancel >/dev/null 2>&1; then evk_slurm_cancel; fi
}

# The worker's exit: a non-zero status that no message explained yet gets
# one (the command that failed and where), and becomes 1 (the exit status
# table: 1 data or I/O error, 2 usage error, 128+N signal).
_evk_worker_exit() {
	local rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ] && [ -z "${EVK_EXPLAINED:-}" ] && [ "$rc" -lt 128 ]; then
		printf '%s: failed (exit %d) at line %s: %s\n' "${EVK_PROG:-evkit}" "$rc" "${EVK_FAILED_LINE:-?}" "${EVK_FAILED_CMD:-?}" >&2
		exit 1
	fi
	return "$rc"
}

# evk_remove_on_exit DIR [NEW_OUT]: remove DIR (a pipeline's own scratch
# directory) when the worker exits, keeping the explanation of a failure;
# after a failure also NEW_OUT, an output directory the run created (a
# failed run leaves no partial output).
evk_remove_on_exit() {
	EVK_REMOVE_ON_EXIT=$1 EVK_REMOVE_ON_FAILURE=${2:-}
	trap '_evk_exit_remove' EXIT
}

_evk_exit_remove() {
	local rc=$?
	rm -rf "$EVK_REMOVE_ON_EXIT"
	[ "$rc" = 0 ] || [ -z "$EVK_REMOVE_ON_FAILURE" ] || rm -rf -- "$EVK_REMOVE_ON_FAILURE"
	(exit "$rc")
	_evk_worker_exit
}

# _evk_reap PGID: wait until no process of the group is left (KILL after
# 10 s).
_evk_reap() {
	local i=0
	while _evk_group_runs "$1"; do
		i=$((i + 1))
		if [ $i -ge 100 ]; then
			kill -KILL -- "-$1" 2>/dev/null || true
			sleep 0.1
			break
		fi
		sleep 0.1
	done
}

# _evk_group_runs PGID: a process of the group is still running.  A zombie
# does not count: one left by a process substitution the worker did not
# wait for is reaped by init, which in a container may take a while or
# never happen.  Without /proc every member counts.
_evk_group_runs() {
	local f line st pg
	kill -0 -- "-$1" 2>/dev/null || return 1
	[ -r /proc/self/stat ] || return 0
	for f in /proc/[0-9]*/stat; do
		IFS= read -r line 2>/dev/null <"$f" || continue
		# After the command name (in parentheses): state, ppid, pgrp.
		read -r st _ pg _ <<<"${line##*) }"
		if [ "$pg" = "$1" ] && [ "$st" != Z ]; then return 0; fi
	done
	return 1
}

_evk_remove_work() {
	local d
	if [ -f "$EVK_WORK/.stages" ]; then
		while IFS= read -r -d '' d; do rm -rf -- "$d"; done <"$EVK_WORK/.stages"
	fi
	rm -rf -- "$EVK_WORK"
}

# _evk_new_outs: remove the output directories the worker created
# (evk_mkout), after an interruption or a failure: an interrupted or failed
# run leaves no directory of its own behind.  Prints how many it removed.
_evk_new_outs() {
	local d n=0
	if [ -f "$EVK_WORK/.outs" ]; then
		while IFS= read -r -d '' d; do
			[ -d "$d" ] || continue
			rm -rf -- "$d" && n=$((n + 1))
		done <"$EVK_WORK/.outs"
	fi
	echo "$n"
}

# _evk_slurm_recorded: cancel the Slurm array the worker submitted (its id
# and task directory in EVK_WORK/.slurm) and remove its task directory.
_evk_slurm_recorded() {
	local job="" dir=""
	[ -s "$EVK_WORK/.slurm" ] || return 0
	IFS=$'\t' read -r job dir <"$EVK_WORK/.slurm" || true
	if [ -n "$job" ] && command -v scancel >/dev/null 2>&1; then scancel "$job" 2>/dev/null || true; fi
	[ -z "$dir" ] || rm -rf -- "$dir"
}

_evk_interrupted() {
	local n
	trap '' TERM INT HUP
	# The worker first, by KILL: a shell whose foreground command a signal
	# ends prints "Terminated" (or "Hangup") on reaping it, a stray line
	# before the explanation below.  Everything it would clean up is the
	# supervisor's: its jobs (TERM, below), the Slurm array, the
	# temporary and staging directories, the output directories it made.
	# (Disowned first, or this shell would report it "Killed".)
	disown "$EVK_CHILD_PGID" 2>/dev/null || true
	kill -KILL "$EVK_CHILD_PGID" 2>/dev/null || true
	kill -TERM -- "-$EVK_CHILD_PGID" 2>/dev/null || true
	_evk_reap "$EVK_CHILD_PGID"
	_evk_slurm_recorded
	n=$(_evk_new_outs)
	_evk_remove_work
	if [ "$n" = 0 ]; then
		printf '%s: interrupted by SIG%s: stopped its jobs, removed its temporary files; earlier outputs are left as they were\n' "${EVK_PROG:-evkit}" "$2" >&2
	else
		printf '%s: interrupted by SIG%s: stopped its jobs, removed its temporary files and the output directory it had created; earlier outputs are left as they were\n' "${EVK_PROG:-evkit}" "$2" >&2
	fi
	exit $((128 + $1))
}

# evk_workdir: the run's temporary directory (the supervisor's EVK_WORK, or
# a new one removed at exit when the pipeline did not call evk_supervise).
evk_workdir() {
	if [ -z "${EVK_WORK:-}" ]; then
		EVK_WORK=$(mktemp -d "${TMPDIR:-/tmp}/${EVK_PROG:-evkit}.XXXXXX")
		# shellcheck disable=SC2064
		trap "rm -rf -- '$EVK_WORK'" EXIT
	fi
	printf '%s\n' "$EVK_WORK"
}

# evk_mkout DIR: mkdir -p DIR; when DIR did not exist, the topmost
# directory this made is recorded for the supervisor, which removes it if
# the run is interrupted or fails.
evk_mkout() {
	local top="" d="$1"
	while [ -n "$d" ] && [ ! -e "$d" ]; do
		top="$d"
		[[ "$d" == */* ]] || break
		d="${d%/*}"
	done
	mkdir -p -- "$1"
	if [ -n "$top" ] && [ -n "${EVK_WORK:-}" ] && [ -d "$EVK_WORK" ]; then
		printf '%s\0' "$(realpath -- "$top")" >>"$EVK_WORK/.outs"
	fi
}

# evk_stage_dir OUT: create (and print) a hidden staging directory inside
# OUT (evk_mkout), removed by the supervisor if the run is interrupted.
evk_stage_dir() {
	local s
	evk_mkout "$1"
	s=$(mktemp -d "$1/.${EVK_PROG:-evkit}.stage.XXXXXX")
	[ -z "${EVK_WORK:-}" ] || printf '%s\0' "$s" >>"$EVK_WORK/.stages"
	printf '%s\n' "$s"
}

# evk_publish STAGE OUT: move every file of STAGE to the same place in OUT
# (renames within one file system), then remove STAGE.
evk_publish() {
	local stage="$1" out="$2" f rel d
	# One mkdir for all the directories, one mv per directory (a mv per
	# file cost a process each): files keep their names, so moving them
	# into OUT/DIR/ is the same rename.
	local -A bydir=()
	while IFS= read -r -d '' f; do
		rel="${f#"$stage"/}"
		d=.
		[[ "$rel" != */* ]] || d="${rel%/*}"
		bydir[$d]+="$(printf '%q' "$f") "
	done < <(find "$stage" -type f -print0)
	if [ ${#bydir[@]} -gt 0 ]; then
		local -a dests=() fl
		for d in "${!bydir[@]}"; do dests+=("$out/$d"); done
		mkdir -p -- "${dests[@]}"
		for d in "${!bydir[@]}"; do
			eval "fl=(${bydir[$d]})"
			mv -f -- "${fl[@]}" "$out/$d/"
		done
	fi
	rm -rf -- "$stage"
}

# --- parallel jobs ------------------------------------------------------------

# Slurm job arrays (evkit-slurm.sh, next to this file): --slurm[=OPTS] sets
# EVK_SLURM=1 and EVK_SLURM_OPTS (sbatch options, split on blanks).
EVK_SLURM=0 EVK_SLURM_OPTS=""
if [ -f "$EVK_LIBDIR/evkit-slurm.sh" ]; then
	# shellcheck source=pipelines/evkit-slurm.sh
	. "$EVK_LIBDIR/evkit-slurm.sh"
fi

# evk_slurm_help: the --help lines of --slurm.
evk_slurm_help() {
	cat <<'EOF'
      --slurm[=OPTS]    run the per-file conversions as one Slurm job array
                        (sbatch --array, at most --jobs tasks at once; OPTS
                        are passed to sbatch, e.g. --slurm='-p gpu -t 30');
                        the traces and OUT must be on a file system the
                        nodes share (the task files go to $EVKIT_SLURM_DIR,
                        default a hidden directory in OUT)
EOF
}

# evk_job_dir STAGE: the directory the jobs write their intermediate files
# to: the run's temporary directory, or with --slurm one the nodes share
# (in $EVKIT_SLURM_DIR or STAGE; removed with the stage).
evk_job_dir() {
	local d
	if [ "$EVK_SLURM" = 1 ]; then
		d=$(mktemp -d "${EVKIT_SLURM_DIR:-$1}/.${EVK_PROG:-evkit}.jobs.XXXXXX")
		[ -z "${EVK_WORK:-}" ] || printf '%s\0' "$d" >>"$EVK_WORK/.stages"
		mkdir -p "$d/tmp"
		printf '%s\n' "$d"
	else
		evk_workdir
	fi
}

# evk_job_prefix JOBDIR: what each job command starts with: with --slurm,
# TMPDIR on the shared job directory (the submitting shell's TMPDIR does
# not exist on the nodes).
evk_job_prefix() {
	if [ "$EVK_SLURM" = 1 ]; then printf 'export TMPDIR=%q; ' "$1/tmp"; fi
}

# evk_job_note COUNTFILE TOTAL WHAT: the "&& evk_job_done ..." suffix of a
# job command (none with --slurm: the nodes report through Slurm).
evk_job_note() {
	if [ "$EVK_SLURM" = 1 ]; then return 0; fi
	printf ' && evk_job_done %q %q %q' "$1" "$2" "$3"
}

# evk_run_jobs N: run the NUL-separated commands on stdin: here, N at a time
# (evk_parallel), or with --slurm as one job array of at most N running
# tasks (evk_slurm_run; cancelled if the pipeline is interrupted).
evk_run_jobs() {
	if [ "$EVK_SLURM" = 1 ]; then
		command -v evk_slurm_run >/dev/null 2>&1 || evk_die "--slurm: evkit-slurm.sh is not installed next to evkit-common.sh"
		evk_say "submitting the jobs as one Slurm job array${EVK_SLURM_OPTS:+ (sbatch $EVK_SLURM_OPTS)}"
		evk_slurm_run "$1" "$EVK_SLURM_OPTS"
	else
		evk_parallel "$1"
	fi
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

# --- discovery ------------------------------------------------------------------

# evk_safe_path P: P, with "./" in front when it starts with '-' (so no
# tool reads it as an option).
evk_safe_path() {
	case "$1" in
	-*) printf './%s\n' "$1" ;;
	*) printf '%s\n' "$1" ;;
	esac
}

# evk_label_clean TEXT: a label for tables and file names: control
# characters (TAB, newline, ...) become spaces, '/' becomes '_'.
evk_label_clean() {
	# Bytes (C locale), as tr did; a shell string holds no NUL.
	local LC_ALL=C s="$1"
	s=${s//[$'\001'-$'\037']/ }
	printf '%s' "${s//\//_}"
}

# evk_basename PATH: what basename PATH prints (the last component,
# trailing '/'s ignored; / for a path of '/'s only), without the process.
evk_basename() {
	local p="$1"
	while [[ "$p" == ?*/ ]]; do p="${p%/}"; done
	if [ "$p" = / ]; then printf '/\n'; else printf '%s\n' "${p##*/}"; fi
}

# evk_first_dup WORD...: the first (in sort order) of the words given more
# than once, or nothing: what sort | uniq -d | head -n 1 prints, with the
# processes started only when there is a duplicate.
evk_first_dup() {
	local w
	local -A seen=()
	local -a dups=()
	for w in "$@"; do
		[ -z "${seen[$w]+x}" ] || dups+=("$w")
		seen[$w]=1
	done
	[ ${#dups[@]} -eq 0 ] || printf '%s\n' "${dups[@]}" | sort | head -n 1
}

# evk_dirname PATH: what dirname PATH prints (. for a name without '/';
# trailing '/'s ignored), without the process.
evk_dirname() {
	local p="$1"
	while [[ "$p" == ?*/ ]]; do p="${p%/}"; done
	case "$p" in
	/) ;;
	*/*)
		p="${p%/*}"
		while [[ "$p" == ?*/ ]]; do p="${p%/}"; done
		p="${p:-/}"
		;;
	*) p=. ;;
	esac
	printf '%s\n' "$p"
}

# _evk_find_traces BASE MAXDEPTH: trace files under BASE, NUL-separated,
# symlinks followed (loops are skipped).
_evk_find_traces() {
	find -L "$1" -mindepth 1 -maxdepth "$2" -type f \( -name '*.json' -o -name '*.json.gz' \) -print0 2>/dev/null || true
}

# _evk_path_rank PATH: the rank in a path (rank3, rank_3, rank-3), or empty.
_evk_path_rank() {
	if [[ "$1" =~ rank[_-]?0*([0-9]+)[^/]*$ ]] || [[ "$1" =~ rank[_-]?0*([0-9]+)/[^/]*$ ]]; then
		printf '%s\n' "${BASH_REMATCH[1]}"
	fi
}

# evk_rank_traces_z DIR: the trace files of one run, NUL-separated, in rank
# order: DIR/torch_profiler/rank<N>/*.json[.gz], DIR/rank<N>/*, or the
# Kineto/Chrome JSON files directly in DIR (a flat folder); symlinks
# followed.
evk_rank_traces_z() {
	local dir="$1" base f r
	if [ -d "$dir/torch_profiler" ]; then
		base="$dir/torch_profiler"
	else
		base="$dir"
	fi
	{
		while IFS= read -r -d '' f; do
			case "${f#"$base"/}" in
			*/*/*) continue ;;
			*/*) [[ "${f#"$base"/}" == *rank* ]] || continue ;;
			esac
			r=$(_evk_path_rank "${f#"$base"/}")
			printf '%s\t%s\0' "${r:-999999999}" "$f"
		done < <(_evk_find_traces "$base" 2)
	} | sort -z -t$'\t' -k1,1n -k2,2 | while IFS= read -r -d '' f; do printf '%s\0' "${f#*$'\t'}"; done
}

# evk_rank_traces DIR: the same, one per line (paths without newlines).
evk_rank_traces() {
	evk_rank_traces_z "$1" | tr '\0' '\n'
}

# evk_find_files DIR MAXDEPTH NAME...: the files under DIR (MAXDEPTH levels
# deep, '' for any depth) whose name matches one of the NAME patterns, sorted,
# into the array EVK_FOUND.  Any name works: DIR may start with '-' or hold
# newlines.  Symlinked files and folders are followed, as everywhere in the
# discovery.  A symlink that leads nowhere is a missing input, not a file
# to skip: "LINK: No such file or directory" and exit 1 (a job read without
# one of its exports is a different job).  Call it in the pipeline's shell,
# not in a command substitution, so that the exit stops the pipeline.
evk_find_files() {
	local dir="$1" depth="$2" n f
	shift 2
	case "$dir" in -*) dir="./$dir" ;; esac
	local -a how=(-mindepth 1) names=()
	[ -z "$depth" ] || how+=(-maxdepth "$depth")
	for n in "$@"; do
		[ ${#names[@]} -eq 0 ] || names+=(-o)
		names+=(-name "$n")
	done
	EVK_FOUND=()
	# With -L, -type l is true only for a symlink whose target is missing.
	while IFS= read -r -d '' f; do
		[ -e "$f" ] || evk_die "$f: No such file or directory"
		EVK_FOUND+=("$f")
	done < <(find -L "$dir" "${how[@]}" \( -type f -o -type l \) \( "${names[@]}" \) -print0 2>/dev/null | sort -z)
}

# evk_nsys_exports DIR: the Nsight Systems SQLite exports in DIR (sorted).
evk_nsys_exports() {
	find -L "$1" -maxdepth 2 -type f \( -name '*.sqlite' -o -name '*.sqlite3' \) 2>/dev/null | sort
}

# _evk_any DIR GLOB...: DIR holds an entry matching one of the GLOBs.  Only
# the GLOB is a pattern: a '*', '?' or '[' in DIR's own name is a plain
# character (compgen -G "$DIR/..." would read it as a pattern).
_evk_any() {
	local d="$1" g m
	shift
	for g in "$@"; do
		# shellcheck disable=SC2231 # $g is the pattern, "$d" is literal
		for m in "$d"/$g; do
			if [ -e "$m" ] || [ -L "$m" ]; then return 0; fi
		done
	done
	return 1
}

# _evk_is_run DIR: DIR holds one run's traces.
_evk_is_run() {
	[ -d "$1/torch_profiler" ] || _evk_any "$1" 'rank*' '*.sqlite' '*.json' '*.json.gz'
}

# _evk_sweep_configs_z DIR: "LABEL<US>key=value ...<US>CONFIG_DIR\0" (US = \x1f,
# not a blank, so an empty key list is kept by read) for
# every configuration of a sweep (NUL-terminated: the directory may hold any
# character), sorted numerically by its keys.  Layouts:
#   <T>thread/nccl_<C>channels/   -> threads=T channels=C
#   <CU>cu_<T>threads/            -> cu=CU threads=T
# A DIR without such configurations that is itself one run (has
# torch_profiler/, rank*/, *.sqlite or JSON files) is one configuration
# without keys.  Symlinked directories are followed.
_evk_sweep_configs_z() {
	local dir="${1%/}" d rel
	local -a recs=()
	while IFS= read -r -d '' d; do
		rel="${d#"$dir"/}"
		if [[ "$rel" =~ ^([0-9]+)thread/nccl_([0-9]+)channels$ ]]; then
			recs+=("${BASH_REMATCH[1]}thread_${BASH_REMATCH[2]}ch"$'\037'"threads=${BASH_REMATCH[1]} channels=${BASH_REMATCH[2]}"$'\037'"$d")
		elif [[ "$rel" =~ ^([0-9]+)cu_([0-9]+)threads?$ ]]; then
			recs+=("${BASH_REMATCH[1]}cu_${BASH_REMATCH[2]}threads"$'\037'"cu=${BASH_REMATCH[1]} threads=${BASH_REMATCH[2]}"$'\037'"$d")
		fi
	done < <(find -L "$dir" -mindepth 1 -maxdepth 2 -type d -print0 2>/dev/null)
	if [ ${#recs[@]} -gt 0 ]; then
		printf '%s\0' "${recs[@]}" | sort -z -t$'\037' -k2,2V
	elif _evk_is_run "$dir"; then
		# Not a sweep: the directory is one run (files of its own, such as
		# a sweep's metadata.json, do not make a sweep a run).
		printf '%s\037\037%s\0' "$(evk_label_clean "$(evk_basename "$dir")")" "$dir"
	fi
}

# evk_sweep_configs DIR: the same as lines "LABEL<TAB>CONFIG_DIR<TAB>key=value
# ..." (for paths without TAB or newline; evk_discover handles any name).
evk_sweep_configs() {
	local label kv d
	while IFS=$'\037' read -r -d '' label kv d; do
		printf '%s\t%s\t%s\n' "$label" "$d" "$kv"
	done < <(_evk_sweep_configs_z "$1")
}

# Discovery options, shared by the pipelines that take a sweep:
#   EVK_REGEX, EVK_REGEX_KEYS   -x REGEX -k KEYS: keys from a path regex
#   EVK_SELECT (array)          --select key=v1,v2 (repeatable; all must hold)
#   EVK_RANKS                   --ranks LIST (0,2,4-7)
EVK_REGEX="" EVK_REGEX_KEYS="" EVK_RANKS=""
EVK_SELECT=()

# evk_discovery_help: the --help lines for those options.
evk_discovery_help() {
	cat <<'EOF'
  -x, --path-regex=RE   configurations from a POSIX extended RE matched
                        against each trace file's path (relative to the
                        sweep directory); its groups are the keys named by
                        --path-keys; a key named 'rank' is the rank
  -K, --path-keys=LIST  names of the groups of --path-regex, e.g.
                        system,threads,rank
      --select=KEY=V1,V2  only configurations whose KEY is one of the values
                        (repeatable: all must hold)
      --ranks=LIST      only these ranks, e.g. 0,2,4-7
EOF
}

# evk_rename_in TEMP NAME FILE...: in the message files FILE..., the path of
# TEMP, a temporary file a stage read, replaced by NAME, the user's words
# for it: a message never names a file the user cannot see.
evk_rename_in() {
	local from="$1" to="$2" f line text
	shift 2
	for f in "$@"; do
		[ -s "$f" ] || continue
		text=""
		while IFS= read -r line || [ -n "$line" ]; do text+="${line//"$from"/"$to"}"$'\n'; done <"$f"
		printf '%s' "$text" >"$f"
	done
}

# evk_option OPT ARG: the options the pipelines share, as getopt gives
# them, so that each pipeline's option loop ends with
#   --) shift; break ;;
#   *) evk_option "$1" "$2"; shift "$EVK_NSHIFT" ;;
# EVK_NSHIFT is the number of words the option took.  -h and -V print the
# pipeline's usage or version and exit; -o, -j, -k, -q and --xlsx set the
# pipeline's out, jobs, keep, quiet (and EVK_QUIET) and xlsx (their defaults
# are set when the pipeline starts); --slurm and the discovery options set
# the variables above.  A pipeline gives an option of its own, or another
# meaning to a letter, in its own cases before this one.
# shellcheck disable=SC2034 # EVK_NSHIFT, out, jobs...: the pipeline's
evk_option() {
	EVK_NSHIFT=2
	case "$1" in
	-h | --help) usage; exit 0 ;;
	-V | --version) evk_version; exit 0 ;;
	-o | --output | --output-dir) out="$2" ;;
	-j | --jobs)
		[[ "$2" =~ ^[1-9][0-9]*$ ]] || evk_usage_error "--jobs: not a positive number: '$2'"
		jobs="$2" ;;
	-k | --keep) keep=1 EVK_NSHIFT=1 ;;
	-q | --quiet) quiet=1 EVK_QUIET=1 EVK_NSHIFT=1 ;;
	--xlsx) xlsx=1 EVK_NSHIFT=1 ;;
	--slurm) EVK_SLURM=1 EVK_SLURM_OPTS="$2" ;;
	-x | --path-regex) EVK_REGEX="$2" ;;
	-K | --path-keys) EVK_REGEX_KEYS="$2" ;;
	--select) EVK_SELECT+=("$2") ;;
	--ranks) EVK_RANKS="$2" ;;
	*) evk_die "internal error: no case for the option '$1'" ;;
	esac
}

# evk_check_discovery: validate the discovery options (usage errors).
evk_check_discovery() {
	local s
	if [ -n "$EVK_REGEX" ] && [ -z "$EVK_REGEX_KEYS" ]; then evk_usage_error "--path-regex needs --path-keys (names for its groups)"; fi
	if [ -z "$EVK_REGEX" ] && [ -n "$EVK_REGEX_KEYS" ]; then evk_usage_error "--path-keys needs --path-regex"; fi
	if [ -n "$EVK_REGEX_KEYS" ] && ! [[ "$EVK_REGEX_KEYS" =~ ^[A-Za-z_][A-Za-z0-9_.-]*(,[A-Za-z_][A-Za-z0-9_.-]*)*$ ]]; then
		evk_usage_error "--path-keys: expected names like threads,channels, got '$EVK_REGEX_KEYS'"
	fi
	if [ -n "$EVK_REGEX" ]; then
		local rc=0
		# shellcheck disable=SC2319 # the status of [[ ]]: 2 = invalid RE
		if [[ "" =~ $EVK_REGEX ]]; then rc=0; else rc=$?; fi
		[ "$rc" -ne 2 ] || evk_usage_error "--path-regex: not a valid extended regular expression: '$EVK_REGEX'"
	fi
	for s in "${EVK_SELECT[@]}"; do
		[[ "$s" =~ ^[A-Za-z_][A-Za-z0-9_.-]*=[^,]+(,[^,]+)*$ ]] || evk_usage_error "--select: expected KEY=V1,V2,..., got '$s'"
	done
	if [ -n "$EVK_RANKS" ] && ! [[ "$EVK_RANKS" =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]]; then
		evk_usage_error "--ranks: expected a list like 0,2,4-7, got '$EVK_RANKS'"
	fi
}

# evk_rank_in R LIST: R is in the rank list (0,2,4-7).
evk_rank_in() {
	local r="$1" part
	local -a _evk_rparts
	IFS=, read -ra _evk_rparts <<<"$2"
	for part in "${_evk_rparts[@]}"; do
		if [[ "$part" == *-* ]]; then
			[ "$r" -ge "${part%-*}" ] && [ "$r" -le "${part#*-}" ] && return 0
		else
			[ "$r" -eq "$part" ] && return 0
		fi
	done
	return 1
}

# evk_discover DIR: the configurations of DIR, into these arrays (index i =
# one configuration, sorted by key values):
#   EVK_CFG_LABEL[i]   label (free text; no TAB/newline; '/' -> '_')
#   EVK_CFG_DIR[i]     its directory (empty in --path-regex mode)
#   EVK_CFG_KV[i]      "key=value key=value" (values: no space, '/' or TAB)
#   EVK_CFG_FILES[i]   its trace files, shell-quoted (eval "f=($q)")
#   EVK_CFG_NFILES[i]  how many
#   EVK_CFG_RANKFILTER[i]  1 when --ranks must be applied to the converted
#                      stream (some file's rank is not in its path)
# and EVK_KEYS: the key names, comma-separated ('' for a single run).
# Fails (evk_die) with what it looked for when nothing is found, or when
# --select / --ranks leave nothing.
evk_discover() {
	local dir="${1%/}" label d kv i
	EVK_CFG_LABEL=() EVK_CFG_DIR=() EVK_CFG_KV=() EVK_CFG_FILES=() EVK_CFG_NFILES=() EVK_CFG_RANKFILTER=()
	EVK_KEYS=""
	[ -n "$dir" ] || dir=/
	local -a labels=() dirs=() kvs=() files=()
	if [ -n "$EVK_REGEX" ]; then
		_evk_discover_regex "$dir"
		return
	fi
	while IFS=$'\037' read -r -d '' label kv d; do
		labels+=("$label") dirs+=("$d") kvs+=("$kv")
	done < <(_evk_sweep_configs_z "$dir")
	[ ${#labels[@]} -gt 0 ] || evk_die "$dir: no run or sweep configuration found (looked for <T>thread/nccl_<C>channels/, <CU>cu_<T>threads/, torch_profiler/rank<N>/, rank<N>/, *.json[.gz] or *.sqlite; for other layouts give --path-regex and --path-keys)"
	# The names before '=' of the first configuration's words, by the shell.
	local w
	local -a words
	IFS=" " read -ra words <<<"${kvs[0]}"
	for w in "${words[@]}"; do
		[[ "$w" != *=* ]] || EVK_KEYS+="${EVK_KEYS:+,}${w%%=*}"
	done
	for i in "${!labels[@]}"; do
		_evk_select_ok "${kvs[$i]}" || continue
		files=()
		local f r filt=0
		while IFS= read -r -d '' f; do
			if [ -n "$EVK_RANKS" ]; then
				r=$(_evk_path_rank "$f")
				if [ -z "$r" ]; then filt=1; elif ! evk_rank_in "$r" "$EVK_RANKS"; then continue; fi
			fi
			files+=("$(evk_safe_path "$f")")
		done < <(evk_rank_traces_z "${dirs[$i]}")
		if [ ${#files[@]} -eq 0 ]; then
			while IFS= read -r -d '' f; do files+=("$(evk_safe_path "$f")"); done < <(find -L "${dirs[$i]}" -maxdepth 2 -type f \( -name '*.sqlite' -o -name '*.sqlite3' \) -print0 2>/dev/null | sort -z)
			[ ${#files[@]} -eq 0 ] || [ -z "$EVK_RANKS" ] || filt=1
		fi
		EVK_CFG_LABEL+=("${labels[$i]}") EVK_CFG_DIR+=("$(evk_safe_path "${dirs[$i]}")") EVK_CFG_KV+=("${kvs[$i]}")
		EVK_CFG_FILES+=("$( [ ${#files[@]} -eq 0 ] || printf '%q ' "${files[@]}")") EVK_CFG_NFILES+=("${#files[@]}") EVK_CFG_RANKFILTER+=("$filt")
	done
	_evk_discover_check "$dir"
}

# _evk_select_ok "k=v k=v": the configuration passes every --select.
_evk_select_ok() {
	local s key vals v want ok
	for s in "${EVK_SELECT[@]}"; do
		key="${s%%=*}" vals="${s#*=}"
		want=""
		for v in $1; do [ "${v%%=*}" != "$key" ] || want="${v#*=}"; done
		ok=0
		IFS=, read -ra _evk_vs <<<"$vals"
		for v in "${_evk_vs[@]}"; do [ "$v" != "$want" ] || ok=1; done
		[ "$ok" = 1 ] || return 1
	done
	return 0
}

_evk_discover_check() {
	local dir="$1" s key
	for s in "${EVK_SELECT[@]}"; do
		key="${s%%=*}"
		[[ ",$EVK_KEYS," == *",$key,"* ]] || evk_usage_error "--select: '$key' is not a key of $dir (keys: ${EVK_KEYS:-none})"
	done
	[ ${#EVK_CFG_LABEL[@]} -gt 0 ] || evk_die "$dir: --select ${EVK_SELECT[*]} leaves no configuration"
	local i
	for i in "${!EVK_CFG_LABEL[@]}"; do
		[ "${EVK_CFG_NFILES[$i]}" -gt 0 ] || evk_die "${EVK_CFG_DIR[$i]:-$dir}: no rank traces (torch_profiler/rank<N>/*.json[.gz], rank<N>/, *.json[.gz]) or Nsight Systems exports (*.sqlite)${EVK_RANKS:+ for ranks $EVK_RANKS}"
	done
}

# _evk_key_value TEXT: TEXT with every byte outside A-Za-z0-9_.+:@%-
# replaced by '_' (C locale: bytes, as tr -c did).
_evk_key_value() {
	local LC_ALL=C
	printf '%s' "${1//[^A-Za-z0-9_.+:@%-]/_}"
}

# --path-regex mode: every trace file under DIR whose relative path matches;
# the groups give the keys; 'rank' is the rank, the other keys make the
# configuration.
_evk_discover_regex() {
	local dir="$1" f rel r i key v kv label
	local -a keys vals
	IFS=, read -ra keys <<<"$EVK_REGEX_KEYS"
	local cfgkeys
	cfgkeys=""
	for key in "${keys[@]}"; do [ "$key" = rank ] || cfgkeys+="${cfgkeys:+,}$key"; done
	EVK_KEYS="$cfgkeys"
	local -A cfgfiles=() cfgfilt=()
	local nmatch=0 ngroups
	while IFS= read -r -d '' f; do
		rel="${f#"$dir"/}"
		[[ "$rel" =~ $EVK_REGEX ]] || continue
		ngroups=$((${#BASH_REMATCH[@]} - 1))
		[ "$ngroups" -eq "${#keys[@]}" ] || evk_usage_error "--path-regex has $ngroups group(s) but --path-keys names ${#keys[@]}"
		kv="" r=""
		for i in "${!keys[@]}"; do
			v="${BASH_REMATCH[$((i + 1))]}"
			if [ "${keys[$i]}" = rank ]; then
				r="$v"
				continue
			fi
			v=$(_evk_key_value "$v")
			[ -n "$v" ] || v=-
			kv+="${kv:+ }${keys[$i]}=$v"
		done
		[ -n "$r" ] || r=$(_evk_path_rank "$rel")
		nmatch=$((nmatch + 1))
		if [ -n "$EVK_RANKS" ]; then
			if [ -z "$r" ]; then cfgfilt[$kv]=1; elif ! [[ "$r" =~ ^[0-9]+$ ]] || ! evk_rank_in "$r" "$EVK_RANKS"; then continue; fi
		fi
		cfgfiles[$kv]+="$(printf '%q' "${r:-999999999}"$'\t'"$(evk_safe_path "$f")") "
	done < <({ _evk_find_traces "$dir" 64; find -L "$dir" -type f \( -name '*.sqlite' -o -name '*.sqlite3' \) -print0 2>/dev/null; } | sort -z)
	[ "$nmatch" -gt 0 ] || evk_die "$dir: no trace file (*.json, *.json.gz, *.sqlite) matches --path-regex '$EVK_REGEX'"
	while IFS= read -r kv; do
		_evk_select_ok "$kv" || continue
		local -a fl=() ent=()
		eval "ent=(${cfgfiles[$kv]})"
		while IFS= read -r -d '' f; do fl+=("${f#*$'\t'}"); done < <(printf '%s\0' "${ent[@]}" | sort -z -t$'\t' -k1,1n -k2,2)
		label=""
		for v in $kv; do label+="${label:+_}${v#*=}"; done
		EVK_CFG_LABEL+=("${label:-$(evk_label_clean "$(evk_basename "$dir")")}") EVK_CFG_DIR+=("") EVK_CFG_KV+=("$kv")
		EVK_CFG_FILES+=("$(printf '%q ' "${fl[@]}")") EVK_CFG_NFILES+=("${#fl[@]}") EVK_CFG_RANKFILTER+=("${cfgfilt[$kv]:-0}")
	done < <(printf '%s\n' "${!cfgfiles[@]}" | sort -V)
	_evk_discover_check "$dir"
}

# --- conversion -------------------------------------------------------------------

# evk_convert_files_cmd OUT.ev RANKFILTER QUOTED_FILES [KINETO2EV_OPTS...]:
# print a shell command that converts the files (shell-quoted, as in
# EVK_CFG_FILES) to one ev stream: JSON traces with kineto2ev, SQLite
# exports with nsys2ev; with RANKFILTER=1 and EVK_RANKS, the stream keeps
# those ranks only (ev-view --rank).  The converter's messages go to
# OUT.ev.err, which the pipeline shows with evk_show_conversions.
evk_convert_files_cmd() {
	local out="$1" filt="$2" q="$3" opts="" cmd
	shift 3
	local -a fl
	eval "fl=($q)"
	[ $# -eq 0 ] || opts="$(printf '%q ' "$@")"
	case "${fl[0]}" in
	*.sqlite | *.sqlite3) cmd="nsys2ev -o $(printf '%q' "$out") $q 2>$(printf '%q' "$out.err")" ;;
	*) cmd="kineto2ev ${opts}-o $(printf '%q' "$out") $q 2>$(printf '%q' "$out.err")" ;;
	esac
	if [ "$filt" = 1 ] && [ -n "$EVK_RANKS" ]; then
		cmd+=" && ev-view -q --ev --rank=$(printf '%q' "$EVK_RANKS") -o $(printf '%q %q' "$out.r" "$out") && mv -f $(printf '%q %q' "$out.r" "$out")"
	fi
	printf '%s' "$cmd"
}

# evk_nsys_check_comms EV LOG EXPORT...: stop (evk_die) when an export's
# NCCL operations all lack a communicator with members in EV, the stream
# nsys2ev made of EXPORT... (in that order; LOG is its --nccl-log, or '').
# Such an export was written without NCCL's payload values, or by an NCCL
# that writes none: no collective can be expanded, and every stage after
# nsys2ev would fail on a temporary file or write an empty result.  The
# one line names the exports and the fix: the re-export command, or
# --nccl-log (the pipelines that call this have that option).
evk_nsys_check_comms() {
	local ev="$1"
	shift
	evk_nsys_check_comms_table <(ev-view -H -t coll,p2p -c comm,rank "$ev") "$@"
}
# evk_nsys_check_comms_table TABLE LOG EXPORT...: the same check on TABLE,
# what `ev-view -H -t coll,p2p -c comm,rank[,MORE...] EV` prints (text
# lines kept), for a caller that reads that table for more.
evk_nsys_check_comms_table() {
	local table="$1" log="$2" s how list="" why
	shift 2
	local -a ex=("$@") bad=() srckind=()
	# Per #src: its NCCL operations, and how many have a #comm with ranks
	# (what coll-expand needs); #rank lines give each rank's #src, the
	# index of its export among those given to nsys2ev.
	while IFS=$'\t' read -r s how; do
		srckind+=("$how")
		if ! [[ "$s" =~ ^[0-9]+$ ]] || [ "$s" -ge ${#ex[@]} ]; then
			bad=("${ex[@]}")
			break
		fi
		bad+=("${ex[s]}")
	done < <(LC_ALL=C awk '
		$1 == "#src" { for (i = 3; i <= NF; i++) if ($i ~ /^nccl=/) kind[$2] = substr($i, 6) }
		$1 == "#rank" { for (i = 3; i <= NF; i++) if ($i ~ /^src=/) src[$2] = substr($i, 5) }
		$1 == "#comm" {
			n = 0; r = 0
			for (i = 3; i <= NF; i++) { if ($i ~ /^nranks=/) n = substr($i, 8) + 0; if ($i ~ /^ranks=./) r = 1 }
			if (n > 0 && r) ok[$2] = 1
		}
		/^#/ { next }
		{ s = ($2 in src) ? src[$2] : -1; ops[s]++; if ($1 in ok) good[s]++ }
		END { for (s in ops) if (!good[s]) print s "\t" kind[s] }' "$table" | sort -n)
	[ ${#bad[@]} -gt 0 ] || return 0
	for s in "${bad[@]}"; do list+="${list:+, }$s"; done
	if [ -n "$log" ]; then
		why="its NCCL operations have no communicator, and $log does not describe them: give the NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL output of this run"
	elif [ "${srckind[0]}" = stock ]; then
		why="exported without NCCL's payload values (no communicator, size or peer for any NCCL call): re-export the report with 'nsys export --type sqlite --include-blobs=true REPORT.nsys-rep', or give --nccl-log=FILE with the run's NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL output"
	else
		why="its NCCL wrote no payloads (no communicator, size or peer for any NCCL call; NCCL < 2.16 or NCCL_NVTX_DISABLE): give --nccl-log=FILE with the run's NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL output"
	fi
	evk_die "$list: $why"
}

# evk_show_conversions OUT.ev...: the messages of the conversions to these
# streams (evk_convert_files_cmd), each distinct line once, counted.
evk_show_conversions() {
	local e
	for e in "$@"; do evk_show "$e.err"; done
}

# evk_convert_cmd RUN_DIR OUT.ev [KINETO2EV_OPTS...]: print a shell command
# that converts the traces of one run to one ev stream: PyTorch profiler
# rank traces with kineto2ev, else Nsight Systems exports with nsys2ev.
# Fails (status 1, message on stderr) when the run has neither.
evk_convert_cmd() {
	local dir="$1" out="$2" f
	shift 2
	local -a traces=()
	while IFS= read -r -d '' f; do traces+=("$(evk_safe_path "$f")"); done < <(evk_rank_traces_z "$dir")
	if [ ${#traces[@]} -eq 0 ]; then
		while IFS= read -r f; do traces+=("$(evk_safe_path "$f")"); done < <(evk_nsys_exports "$dir")
	fi
	if [ ${#traces[@]} -eq 0 ]; then
		evk_msg "$dir: no rank traces (torch_profiler/rank<N>/*.json[.gz]) or Nsight Systems exports (*.sqlite) found"
		return 1
	fi
	evk_convert_files_cmd "$out" 0 "$(printf '%q ' "${traces[@]}")" "$@"
}

# The start of every pipeline, written once (see the top of this file).
if [ "${BASH_SOURCE[1]-}" = "$0" ]; then
	set -euo pipefail
	EVK_PROG=${0##*/}
	# The shared options' defaults (evk_option).
	# shellcheck disable=SC2034 # the pipeline's variables
	out="" keep=0 quiet=0 xlsx=0 jobs=$(nproc 2>/dev/null || echo 2)
	evk_supervise "$@"
fi
