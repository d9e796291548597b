# shellcheck shell=bash
# evkit-slurm.sh - run a pipeline's per-file jobs as one Slurm job array
# instead of on this machine (sourced by evkit-common.sh).
#
# evk_slurm_run N OPTS: reads NUL-separated shell commands on stdin, writes
# each to a task directory on a filesystem the nodes share, submits one
# array job running at most N tasks at once (`sbatch --array=0-K%N`, OPTS
# passed through word by word: partition, account, time, --nodelist...),
# waits for it, passes every task's stderr on (prefixed with the task), and
# fails naming each task that failed or never ran, with its command.  On
# TERM/INT/HUP of the pipeline, evk_slurm_cancel cancels the array.
#
# The task directory is made under $EVKIT_SLURM_DIR (default: the current
# directory, which must be shared with the nodes, as the traces are).

EVK_SLURM_JOB=
EVK_SLURM_TASKDIR=

# The array's id and task directory are also recorded in EVK_WORK/.slurm:
# on TERM/INT/HUP the supervisor ends the worker at once and cancels them.
evk_slurm_cancel() {
	if [ -n "$EVK_SLURM_JOB" ] && command -v scancel >/dev/null 2>&1; then
		scancel "$EVK_SLURM_JOB" 2>/dev/null || true
	fi
	[ -z "$EVK_SLURM_TASKDIR" ] || rm -rf "$EVK_SLURM_TASKDIR"
	EVK_SLURM_JOB=
	EVK_SLURM_TASKDIR=
	[ -z "${EVK_WORK:-}" ] || rm -f "$EVK_WORK/.slurm"
}

evk_slurm_run() {
	local n="$1" opts="${2:-}" dir k=0 cmd pid rc=0 t failed=0
	command -v sbatch >/dev/null 2>&1 || { echo "evkit: --slurm: sbatch not found (is this a Slurm login node?)" >&2; return 1; }
	dir=$(mktemp -d "${EVKIT_SLURM_DIR:-$PWD}/.evkit-slurm.XXXXXX") ||
		{ echo "evkit: --slurm: cannot make a task directory in ${EVKIT_SLURM_DIR:-$PWD}" >&2; return 1; }
	EVK_SLURM_TASKDIR=$dir
	# Recorded for the supervisor, which cancels and removes them when the
	# run is interrupted (the worker is then ended at once).
	[ -z "${EVK_WORK:-}" ] || printf '\t%s\n' "$dir" >"$EVK_WORK/.slurm"
	while IFS= read -r -d '' cmd; do
		printf '%s\n' "$cmd" >"$dir/cmd.$k"
		k=$((k + 1))
	done
	if [ "$k" -eq 0 ]; then
		rm -rf "$dir"
		EVK_SLURM_TASKDIR=
		return 0
	fi
	cat >"$dir/task.sh" <<'TASK'
#!/usr/bin/env bash
# One array task: run its command, keep its stderr and exit status.
d="$1"
t="$SLURM_ARRAY_TASK_ID"
bash "$d/cmd.$t" 2>"$d/err.$t"
echo "$?" >"$d/rc.$t"
TASK
	# --parsable prints the job id at submission; --wait returns when every
	# task has ended.  The id is kept so that a signal can cancel the array.
	# shellcheck disable=SC2086 # OPTS are sbatch options, split on purpose
	sbatch --parsable --wait --array="0-$((k - 1))%$n" --job-name=evkit --output=/dev/null \
		$opts "$dir/task.sh" "$dir" >"$dir/jobid" 2>"$dir/sbatch.err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null && [ ! -s "$dir/jobid" ]; do sleep 0.2; done
	EVK_SLURM_JOB=$(cut -d';' -f1 "$dir/jobid" 2>/dev/null || true)
	[ -z "${EVK_WORK:-}" ] || printf '%s\t%s\n' "$EVK_SLURM_JOB" "$dir" >"$EVK_WORK/.slurm"
	wait "$pid" || rc=$?
	if [ -z "$EVK_SLURM_JOB" ]; then
		echo "evkit: --slurm: sbatch refused the job: $(cat "$dir/sbatch.err")" >&2
		evk_slurm_cancel
		return 1
	fi
	for ((t = 0; t < k; t++)); do
		if [ -s "$dir/err.$t" ]; then
			sed "s/^/[slurm task $t] /" "$dir/err.$t" >&2
		fi
		if [ ! -s "$dir/rc.$t" ]; then
			echo "evkit: slurm job $EVK_SLURM_JOB task $t never finished: $(cat "$dir/cmd.$t")" >&2
			failed=$((failed + 1))
		elif [ "$(cat "$dir/rc.$t")" != 0 ]; then
			echo "evkit: slurm job $EVK_SLURM_JOB task $t exited $(cat "$dir/rc.$t"): $(cat "$dir/cmd.$t")" >&2
			failed=$((failed + 1))
		fi
	done
	if [ "$failed" -eq 0 ] && [ "$rc" -ne 0 ]; then
		echo "evkit: slurm job $EVK_SLURM_JOB: sbatch exited $rc: $(cat "$dir/sbatch.err")" >&2
		failed=1
	fi
	rm -rf "$dir"
	EVK_SLURM_JOB=
	EVK_SLURM_TASKDIR=
	[ -z "${EVK_WORK:-}" ] || rm -f "$EVK_WORK/.slurm"
	[ "$failed" -eq 0 ]
}
