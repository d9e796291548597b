#!/usr/bin/env bash
# modgraph.sh - the library's modules must stand on floors.
#
# A module is a directory lib/M/ with the public headers include/ev/*.h it
# implements.  docs/ARCHITECTURE.md declares, in its module table, each
# module's floor and headers (a row "| FLOOR | `M` | `h.h` ... | ... |").
# Every #include "..." of lib/**/*.[ch] and include/ev/*.h is an arrow from
# the including file's module to the module of the included file; an
# include of the umbrella include/ev.h is an arrow to every module it
# includes.  The graph is layered when no arrow goes from a lower floor to
# a higher one, no arrows go round in a circle, and no library file
# includes ev.h (it hides what a file really uses: a file includes its own
# module's header and those of the modules it calls).
#
# Prints one line per fault and exits 1; prints nothing and exits 0 when
# the graph is clean.  Run by `make lint`.
set -euo pipefail
# The tree: the argument, or the source tree this script is in.
cd "${1:-$(dirname "$0")/..}"

doc=docs/ARCHITECTURE.md


if [ ! -f "$doc" ]; then
	echo "modgraph: $doc is missing: it declares the floors" >&2
	exit 1
fi

mapfile -t files < <(find lib -type f -name '*.[ch]' | LC_ALL=C sort)
mapfile -t headers < <(find include/ev -maxdepth 1 -type f -name '*.h' | LC_ALL=C sort)

# One record per line for awk: F floor module headers... (the table), M
# module (a directory of lib), H header, E file (exists), I file
# included-path.
faults=$(
	{
		awk '/^\|[ \t]*[0-9]+[ \t]*\|/ {
			n = split($0, col, "|")
			if (n < 4)
				next
			gsub(/[` \t]/, "", col[2]); gsub(/[` \t]/, "", col[3])
			line = "F " col[2] " " col[3]
			rest = col[4]
			while (match(rest, /[A-Za-z0-9_]+\.h/)) {
				line = line " " substr(rest, RSTART, RLENGTH)
				rest = substr(rest, RSTART + RLENGTH)
			}
			print line
		}' "$doc"
		find lib -mindepth 1 -maxdepth 1 -type d -printf 'M %f\n'
		printf 'H %s\n' "${headers[@]#include/}"
		printf 'E %s\n' "${files[@]}"
		grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' include/ev.h "${headers[@]}" "${files[@]}" |
			sed -E 's/^([^:]*):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)".*/I \1 \2/'
	} | awk -v doc="$doc" '
	function fault(s) { print "modgraph: " s }
	function dir(p) { return sub(/\/[^\/]*$/, "", p) ? p : "." }
	# The module of a file of lib/ or include/ev/, "" when none.
	function module_of(f,   part) {
		if (f ~ /^lib\/[^\/]+\//) {
			split(f, part, "/")
			return part[2]
		}
		if (f ~ /^include\/ev\//)
			return (substr(f, 9) in owner) ? owner[substr(f, 9)] : ""
		return ""
	}
	function arrow(from, to, why) {
		if (from == to || from == "" || to == "")
			return
		if (!((from, to) in seen)) {
			seen[from, to] = why
			adj[from] = adj[from] " " to
		} else {
			more[from, to]++
		}
	}
	# Shortest path of arrows from a to b (BFS), as "a -> ... -> b".
	function path(a, b,   q, head, tail, prev, u, i, k, nb, s) {
		split("", prev)
		q[tail = 1] = a
		prev[a] = a
		for (head = 1; head <= tail && !(b in prev); head++) {
			u = q[head]
			k = split(adj[u], nb, " ")
			for (i = 1; i <= k; i++)
				if (!(nb[i] in prev)) {
					prev[nb[i]] = u
					q[++tail] = nb[i]
				}
		}
		for (s = b; b != a; ) {
			b = prev[b]
			s = b " -> " s
		}
		return s
	}
	$1 == "F" {
		floor[$3] = $2
		for (i = 4; i <= NF; i++) {
			if (("ev/" $i) in owner)
				fault(doc ": ev/" $i " is given to both " owner["ev/" $i] " and " $3)
			owner["ev/" $i] = $3
		}
		next
	}
	$1 == "M" { mod[++nmod] = $2; isdir[$2] = 1; next }
	$1 == "H" { hdr[++nhdr] = $2; hdrset[$2] = 1; next }
	$1 == "E" { exists[$2] = 1; next }
	$1 == "I" { inc_file[++ninc] = $2; inc_path[ninc] = $3; next }
	END {
		for (m in floor)
			if (!(m in isdir))
				fault(doc ": the module table names " m ", which has no lib/" m "/")
		for (i = 1; i <= nmod; i++)
			if (!(mod[i] in floor))
				fault("lib/" mod[i] "/ has no floor in " doc "'"'"'s module table")
		for (i = 1; i <= nhdr; i++)
			if (!(hdr[i] in owner))
				fault("include/" hdr[i] " belongs to no module in " doc "'"'"'s module table")
		for (h in owner)
			if (!(h in hdrset))
				fault(doc ": the module table names " h ", which is not in include/")
		# The modules the umbrella stands for.
		for (i = 1; i <= ninc; i++)
			if (inc_file[i] == "include/ev.h" && (inc_path[i] in owner))
				umbrella = umbrella " " owner[inc_path[i]]
		for (i = 1; i <= ninc; i++) {
			f = inc_file[i]; p = inc_path[i]
			if (f == "include/ev.h")
				continue
			from = module_of(f)
			why = f " (" p ")"
			if (p == "ev.h") {
				fault(f " includes the umbrella ev.h: include the headers of the modules it uses")
				k = split(umbrella, um, " ")
				for (j = 1; j <= k; j++)
					arrow(from, um[j], why)
				continue
			}
			if (p ~ /^ev\/[^\/]+\.h$/)
				to = (p in owner) ? owner[p] : ""
			else if ((dir(f) "/" p) in exists)
				to = module_of(dir(f) "/" p)
			else if (("lib/" p) in exists)
				to = module_of("lib/" p)
			else
				to = ""
			if (to == "") {
				# (A header of include/ev/ in no module is named once above.)
				if (!(p in hdrset))
					fault(f " includes \"" p "\", which is in no module")
				continue
			}
			arrow(from, to, why)
		}
		# Reachability (every module is a few dozen at most).
		for (a in floor)
			for (b in floor)
				reach[a, b] = ((a, b) in seen)
		for (k in floor)
			for (a in floor)
				if (reach[a, k])
					for (b in floor)
						if (reach[k, b])
							reach[a, b] = 1
		for (key in seen) {
			split(key, ab, SUBSEP)
			a = ab[1]; b = ab[2]
			why = seen[key] (((a, b) in more) ? " and " more[a, b] " more" : "")
			if ((a in floor) && (b in floor) && floor[a] + 0 < floor[b] + 0)
				fault("arrow up: " a " (floor " floor[a] ") -> " b " (floor " floor[b] "): " why)
			if (!reach[b, a])
				continue
			# a -> b closes a circle back to a: name it by its shortest
			# way round, starting from its first module in name order.
			k = split(path(b, a), step, " -> ")
			first = 1
			for (j = 2; j <= k; j++)
				if (step[j] < step[first])
					first = j
			s = step[first]
			for (j = 1; j < k; j++)
				s = s " -> " step[(first + j - 1) % k + 1]
			circle[s " -> " step[first]] = 1
		}
		for (s in circle)
			fault("circle: " s)
	}' | LC_ALL=C sort -u
)

if [ -n "$faults" ]; then
	printf '%s\n' "$faults"
	exit 1
fi
