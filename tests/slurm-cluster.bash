# shellcheck shell=bash
# A one-node Slurm cluster on this machine for the tests: munged, slurmctld
# and slurmd with their own key, sockets, state and ports under a test
# directory.  slurm_start DIR exports SLURM_CONF and returns 0, or prints
# why it cannot start and returns 1 (the caller skips); slurm_stop DIR ends
# the daemons.

slurm_start() {
	local d="$1" host port i
	for t in munged mungekey slurmctld slurmd sbatch sinfo; do
		command -v "$t" >/dev/null 2>&1 || { echo "$t not installed (Debian: slurm-wlm, munge)"; return 1; }
	done
	host=$(hostname -s)
	mkdir -p "$d/state" "$d/spool" "$d/munge"
	mungekey -c -k "$d/munge/munge.key" >/dev/null 2>&1 || { echo "mungekey failed"; return 1; }
	munged --force --socket="$d/munge/sock" --key-file="$d/munge/munge.key" --pid-file="$d/munge/pid" \
		--log-file="$d/munge/log" --seed-file="$d/munge/seed" >/dev/null 2>&1 || { echo "munged did not start"; return 1; }
	# Ports of our own so that concurrent runs and a real cluster don't meet.
	port=$((20000 + (RANDOM % 20000) * 2))
	cat >"$d/slurm.conf" <<CONF
ClusterName=evkit-test
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$d/munge/sock
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF="$d/slurm.conf"
	slurmctld -f "$SLURM_CONF" >/dev/null 2>&1 || { echo "slurmctld did not start: $(tail -n 3 "$d/slurmctld.log" 2>/dev/null)"; return 1; }
	slurmd -f "$SLURM_CONF" >/dev/null 2>&1 || { echo "slurmd did not start (needs root): $(tail -n 3 "$d/slurmd.log" 2>/dev/null)"; return 1; }
	for ((i = 0; i < 100; i++)); do
		sinfo -h -o '%t' 2>/dev/null | grep -q idle && return 0
		sleep 0.2
	done
	echo "the test node never became idle: $(sinfo 2>&1 | tail -n 1)"
	return 1
}

slurm_stop() {
	local d="$1" f p pids="" i
	for f in "$d/slurmd.pid" "$d/slurmctld.pid" "$d/munge/pid"; do
		[ -s "$f" ] || continue
		pids+=" $(cat "$f")"
		kill "$(cat "$f")" 2>/dev/null
	done
	# Let the daemons finish writing their state before bats removes it.
	for ((i = 0; i < 50; i++)); do
		for p in $pids; do kill -0 "$p" 2>/dev/null && break; p=; done
		[ -n "$p" ] || break
		sleep 0.1
	done
	return 0
}

# For a suite's setup_file / teardown_file: start the cluster under
# $BATS_FILE_TMPDIR/slurm, or export SLURM_WHY, the reason it cannot start
# (the tests skip with it).  Not in $(...): slurm_start exports SLURM_CONF.
slurm_setup_file() {
	export SLURM_DIR="$BATS_FILE_TMPDIR/slurm"
	mkdir -p "$SLURM_DIR"
	if slurm_start "$SLURM_DIR" >"$SLURM_DIR/why"; then
		export SLURM_WHY=
	else
		SLURM_WHY=$(cat "$SLURM_DIR/why")
		export SLURM_WHY
	fi
}

slurm_teardown_file() {
	slurm_stop "$SLURM_DIR"
}
