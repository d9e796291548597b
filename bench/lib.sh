# Helpers for bench scripts (source it): timing with peak RSS, medians.
# measure OUTVAR CMD...: runs CMD (a shell string) 3 times, sets
#   OUTVAR_wall (median seconds) and OUTVAR_rss (median peak RSS in MiB).
measure() {
	local var="$1" cmd="$2" i f walls=() rsss=()
	f=$(mktemp)
	for i in 1 2 3; do
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
