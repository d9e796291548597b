#!/usr/bin/env bash
# Helpers for bench scripts (source it): timing with peak RSS, medians.
# measure OUTVAR CMD...: runs CMD (a shell string) 3 times, sets
#   OUTVAR_wall (median seconds) and OUTVAR_rss (median peak RSS in MiB).
measure() {
	local var="$1" cmd="$2" f walls=() rsss=()
	f=$(mktemp)
	for _ in 1 2 3; do
		/usr/bin/time -f '%e %M' -o "$f" bash -c "$cmd" >/dev/null
		read -r w r <"$f"
		walls+=("$w")
		rsss+=("$r")
	done
	rm -f "$f"
	printf -v "${var}_wall" '%s' "$(printf '%s\n' "${walls[@]}" | sort -g | sed -n 2p)"
	printf -v "${var}_rss" '%s' "$(printf '%s\n' "${rsss[@]}" | sort -g | sed -n 2p | awk '{printf "%.1f", $1/1024}')"
}
# rate COUNT SECONDS UNIT: "12.3 M UNIT/s"
rate() {
	awk -v n="$1" -v s="$2" -v u="$3" 'BEGIN { if (s <= 0) s = 0.001; printf "%.2f M %s/s", n / s / 1e6, u }'
}
mib() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }

gen_colls() { # gen_colls NCOLL FILE: 64 ranks in one communicator, time-ordered,
	# mixed kinds, sizes and protocols (input of coll-expand and ev2goal benches)
	[ -s "$2" ] && return 0
	awk -v n="$1" 'BEGIN {
		OFS = "\t"
		printf "#ev 1.0 96 clock=ns origin=trace\n#meta nccl_version=2.22.3\n#comm 5 nranks=64 ranks=0"
		for (r = 1; r < 64; r++) printf ",%d", r
		printf "\n"
		for (r = 0; r < 64; r++) printf "#rank %d host=node%d\n", r, int(r / 8)
		print "type", "op", "rank", "stream", "ts", "dur", "bytes", "comm", "seq", "algo", "proto", "dtype", "channel", "aux"
		split("16384 65536 262144 1048576 4096 524288", sz, " ")
		split("allreduce allgather reducescatter allreduce", op, " ")
		split("simple ll ll128 simple", pr, " ")
		for (i = 0; i < n; i++)
			for (r = 0; r < 64; r++)
				print "coll", op[i % 4 + 1], r, 7, i * 100000 + r, 50000, sz[i % 6 + 1] * (op[i % 4 + 1] == "allreduce" ? 1 : 64),
				      5, i, "ring", pr[int(i / 4) % 4 + 1], "float32", 1 + i % 2, 64
	}' | ev-view --pack -o "$2"
}
