# shellcheck shell=bash
# evkit-report.sh - self-contained HTML reports and gnuplot SVG plots for the
# evkit pipelines (sourced by evkit-common.sh, not run).  The HTML embeds
# its CSS and SVG plots inline: no scripts, no network fetches, it opens
# from disk.

# Numbers in the page are rounded to 5 significant digits (at most 6
# decimals; the full value is on hover); TSV/CSV files keep full precision.
# Text cells longer than RPT_MAXTEXT (60) characters are shortened in the
# middle, the full text on hover.  Plots: gnuplot SVG (deterministic: no
# temporary paths in them) with a PNG beside each when gnuplot has the
# pngcairo terminal, unless EVKIT_PNG=0.  SOURCE_DATE_EPOCH, when set, fixes the date in the
# page footer.

# rpt_begin FILE TITLE
rpt_begin() {
	RPT_FILE="$1"
	cat >"$RPT_FILE" <<HTML
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>$(rpt_escape "$2")</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; white-space: nowrap; }
th { background: #f0f0f0; white-space: normal; } td.t, th.t { text-align: left; }
td.w { text-align: left; white-space: normal; overflow-wrap: anywhere; min-width: 8em; max-width: 22em; }
.tw { max-width: 100%; overflow-x: auto; }
td.better { background: #c8e6c9; } td.worse { background: #ffcdd2; } td.similar { background: #f5f5f5; }
td.pos { color: #b71c1c; } td.neg { color: #1b5e20; }
.plot { margin: 1em 0; } .plot img, .plot svg { max-width: 100%; height: auto; } .note { color: #555; font-size: 0.9em; }
</style></head><body>
<h1>$(rpt_escape "$2")</h1>
HTML
}

# rpt_escape TEXT: TEXT with & < > " as HTML entities.  (The replacements
# are quoted: bash 5.2 reads an unquoted '&' in ${s//x/y} as the match.)
rpt_escape() {
	local s="$1" amp='&amp;' lt='&lt;' gt='&gt;' quot='&quot;'
	s="${s//&/"$amp"}"
	s="${s//</"$lt"}"
	s="${s//>/"$gt"}"
	printf '%s' "${s//\"/"$quot"}"
}

rpt_h2() { printf '<h2>%s</h2>\n' "$(rpt_escape "$1")" >>"$RPT_FILE"; }
rpt_p() { printf '<p class="note">%s</p>\n' "$(rpt_escape "$1")" >>"$RPT_FILE"; }

# rpt_table TSV [MAX_ROWS]: the TSV (first line = header) as an HTML table.
# A column named "status" is coloured Better/Worse/Similar; columns whose
# name ends in "pct" or "change" show their sign by colour (positive = more
# time = red); columns whose name starts with "improvement" the other way
# round (positive = better = green).  Numbers are rounded for reading (the
# exact value in the title); long names are shortened (the full name in
# the title).  So that a table fits the page: a text column with a cell
# longer than 24 characters wraps (at most 22 em wide), headers break after
# '_', and columns named ts or *_ts get their unit, (ns), in the header.
# RPT_WIDE=COL,... keeps up to three times as much text in those columns
# (an op signature that tells rows apart).  A text column holding one value
# in every row (of more than one) is left out and named once above the
# table ("baseline: X in every row").  On a page too narrow for the rest,
# the table scrolls inside its own box, not the page.
rpt_table() {
	local max="${2:-200}"
	awk -F'\t' -v max="$max" -v maxtext="${RPT_MAXTEXT:-60}" -v wide="${RPT_WIDE:-}" '
	function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); gsub(/"/, "\\&quot;", s); return s }
	function isnum(s) { return s ~ /^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
	function round(s,   x, a, e, d, r) {
		if (s ~ /^-?[0-9]+$/) return s           # integers stay exact
		x = s + 0; a = x < 0 ? -x : x
		if (a == 0) return "0"
		e = int(log(a) / log(10)); if (a < 1) e--
		d = 4 - e; if (d < 0) d = 0; if (d > 6) d = 6
		r = sprintf("%." d "f", x)
		if (r ~ /\./) { sub(/0+$/, "", r); sub(/\.$/, "", r) }
		if (r == "-0") r = "0"
		return r
	}
	function shorten(s, mt,   l, k) {
		l = length(s)
		if (l <= mt) return ""
		k = int((mt - 1) * 2 / 3)
		return substr(s, 1, k) "\342\200\246" substr(s, l - (mt - 1 - k) + 1)
	}
	BEGIN { nw = split(wide, w, ","); for (i = 1; i <= nw; i++) W[w[i]] = 1 }
	# First pass: the longest text per column, as shown.
	FNR == NR {
		if (FNR == 1) { for (i = 1; i <= NF; i++) mt[i] = ($i in W) ? 3 * maxtext : maxtext; next }
		if (FNR > max + 1) next
		for (i = 1; i <= NF; i++) {
			if (!isnum($i)) { l = length($i); if (l > mt[i]) l = mt[i]; if (l > long[i]) long[i] = l; if ($i != "") text[i] = 1 }
			if (FNR == 2) first[i] = $i; else if ($i != first[i]) differs[i] = 1
		}
		rows = FNR - 1
		next
	}
	FNR == 1 {
		# Constant text columns (not status: its colour is the point).
		same = ""
		for (i = 1; i <= NF; i++)
			if (rows > 1 && !differs[i] && first[i] != "" && !isnum(first[i]) && $i != "status") {
				drop[i] = 1; same = same (same == "" ? "" : "; ") esc($i) ": " esc(first[i])
			}
		if (same != "") printf "<p class=\"note\">%s in every row.</p>\n", same
		print "<div class=\"tw\"><table><tr>"
		for (i = 1; i <= NF; i++) {
			h[i] = $i; t = esc($i)
			if (drop[i]) continue
			if ($i ~ /(^|_)ts$/) t = t " (ns)"
			gsub(/_/, "_<wbr>", t)
			# Over a text column the header is left-aligned, as its cells.
			printf "<th%s>%s</th>", (text[i] ? " class=\"t\"" : ""), t
		}
		print "</tr>"; next
	}
	FNR > max + 1 { more++; next }
	{
		printf "<tr>"
		for (i = 1; i <= NF; i++) {
			if (drop[i]) continue
			num = isnum($i)
			cls = num ? "" : (long[i] > 24 ? "w" : "t")
			if (h[i] == "status") cls = tolower($i)
			else if (h[i] ~ /^improvement/ && num) cls = ($i + 0 > 0) ? "neg" : ($i + 0 < 0) ? "pos" : ""
			else if (h[i] ~ /(pct|change)$/ && num) cls = ($i + 0 > 0) ? "pos" : ($i + 0 < 0) ? "neg" : ""
			tip = ""; shown = $i
			if (num) { shown = round($i); if (shown != $i) tip = $i }
			else { sh = shorten($i, mt[i]); if (sh != "") { shown = sh; tip = $i } }
			printf "<td%s%s>%s</td>", (cls == "" ? "" : " class=\"" cls "\""), (tip == "" ? "" : " title=\"" esc(tip) "\""), esc(shown)
		}
		print "</tr>"
	}
	END { print "</table></div>"; if (more) printf "<p class=\"note\">%d more rows in the TSV file.</p>\n", more }' "$1" "$1" >>"$RPT_FILE"
}

# rpt_svg FILE.svg: embed a plot inline.
rpt_svg() {
	[ -s "$1" ] || return 0
	{
		printf '<div class="plot">\n'
		sed '/^<?xml/d' "$1"
		printf '</div>\n'
	} >>"$RPT_FILE"
}

rpt_end() {
	local when v="" TZ=UTC0
	# The date by printf (UTC: TZ is local here); date for what printf
	# cannot read as seconds.
	if [[ "${SOURCE_DATE_EPOCH:-}" =~ ^[0-9]{1,11}$ ]]; then
		printf -v when '%(%Y-%m-%d %H:%M UTC)T' "$((10#$SOURCE_DATE_EPOCH))"
	elif [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
		when=$(date -u -d "@$SOURCE_DATE_EPOCH" '+%Y-%m-%d %H:%M UTC')
	else
		printf -v when '%(%Y-%m-%d %H:%M UTC)T' -1
	fi
	# The version: the third word of the first line.
	read -r _ _ v _ < <(ev-view --version 2>/dev/null) || true
	printf '<p class="note">Made by evkit %s on %s.</p>\n</body></html>\n' "$v" "$when" >>"$RPT_FILE"
}

# rpt_gnuplot: gnuplot (commands on stdin) without its notices about a flat axis range
# (one value plotted), which it adjusts by itself.
rpt_gnuplot() {
	local rc=0
	# Its stderr through grep by a pipe (no temporary file to make and
	# remove), its stdout kept on fd 3; the status is gnuplot's.
	{
		if gnuplot 2>&1 >&3 3>&- | { grep -v '^Warning: empty [a-z0-9]* *range' >&2 3>&- || true; }; then
			rc=0
		else
			rc=${PIPESTATUS[0]}
		fi
	} 3>&1
	return "$rc"
}

# rpt_gq TEXT: TEXT as a gnuplot single-quoted string ('' is a quote).
rpt_gq() {
	local s="$1" q="''"
	printf "'%s'" "${s//\'/"$q"}"
}

# rpt_has_png: a PNG is wanted beside each SVG (EVKIT_PNG is not 0) and
# gnuplot has the pngcairo terminal (asked once, cached).
rpt_has_png() {
	if [ -z "${RPT_PNG:-}" ]; then
		if [ "${EVKIT_PNG:-1}" = 0 ]; then
			RPT_PNG=0
		elif gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1; then
			RPT_PNG=1
		else
			RPT_PNG=0
		fi
	fi
	[ "$RPT_PNG" = 1 ]
}

# rpt_plot DIR OUT.svg WIDTH HEIGHT BODY: run the gnuplot commands BODY in
# DIR (the plot's data files, named relatively, so no temporary path ends
# up in the SVG), writing OUT.svg and, with pngcairo, OUT.png beside it:
# one gnuplot draws both, the settings reset in between.  Written under
# temporary names and renamed.
rpt_plot() {
	local dir="$1" out="$2" w="$3" h="$4" body="$5" rc=0 png=0 head
	head="set datafile separator '\\t'"
	! rpt_has_png || png=1
	(
		cd "$dir" || exit 1
		{
			printf "set terminal svg size %d,%d noenhanced font 'sans,10'\nset output 'plot.svg'\n%s\n%s\n" "$w" "$h" "$head" "$body"
			if [ "$png" = 1 ]; then
				printf "reset\nset terminal pngcairo size %d,%d noenhanced font 'sans,10'\nset output 'plot.png'\n%s\n%s\n" "$w" "$h" "$head" "$body"
			fi
			printf 'unset output\n'
		} | rpt_gnuplot || exit 1
	) || rc=$?
	[ "$rc" -eq 0 ] || return "$rc"
	mv -f -- "$dir/plot.svg" "$out"
	if [ -f "$dir/plot.png" ]; then mv -f -- "$dir/plot.png" "${out%.svg}.png"; fi
}

# Configuration order.  Every chart of one report shows the configurations
# in one order: rpt_order LABEL... sets it (the order the user gave them,
# or sorted by label; the caller says which, once, with rpt_order_note).
# Labels not in it (ranks, metric names) keep their own order.
rpt_order() {
	local IFS=$'\n'
	RPT_ORDER="$*"
	export RPT_ORDER
}

# rpt_order_note HOW: one sentence under the title naming the order.
rpt_order_note() {
	local IFS=$'\n' l list=""
	for l in $RPT_ORDER; do list+="${list:+, }$l"; done
	[ -z "$list" ] || rpt_p "Configurations appear in every table and chart in this order ($1): $list."
}

# rpt_sort_key COL [FALLBACK]: awk program text printing each line of a
# TSV with a sort key in front: the label's place in RPT_ORDER, else
# (FALLBACK "v") the label for a version sort, else its line number.
# Used as: awk -F'\t' -v col=N "$(rpt_sort_key)" | sort -t$'\t' -k1,1V -s | cut -f2-
rpt_sort_key() {
	cat <<'AWK'
BEGIN { n = split(ENVIRON["RPT_ORDER"], o, "\n"); for (i = 1; i <= n; i++) if (!(o[i] in pos)) pos[o[i]] = i }
{ l = $col; printf "%s\t%s\n", (l in pos) ? sprintf("0 %09d", pos[l]) : (fb == "v" ? "1 " l : sprintf("1 %09d", NR)), $0 }
AWK
}

# rpt_sort_rows TSV COLNAME: TSV's rows (the header stays first) in the
# report's configuration order of column COLNAME, stably; rows whose label
# is not in the order keep their place after the others.  In place.
rpt_sort_rows() {
	local ci
	ci=$(tsv_col "$1" "$2")
	[ -n "$ci" ] || return 0
	{
		IFS= read -r h
		printf '%s\n' "$h"
		awk -F'\t' -v col="$ci" "$(rpt_sort_key)" | sort -t$'\t' -k1,1V -s | cut -f2-
	} <"$1" >"$1.sorted" && mv -f -- "$1.sorted" "$1"
}

# rpt_xtics BASE SLOT < LABELS: a gnuplot "set xtics (...)" for tick labels
# (one per line: LABEL, or LABEL TAB SECOND-LINE) at x = BASE, BASE+1, ...,
# SLOT pixels apart.  Laid out by their length at the 10 px font (a
# character taken as 6 px): horizontal when they fit; else wrapped at
# '_', '-', '/', '.', ':', ',' or blanks into at most 3 lines that fit;
# else rotated by 35 degrees, or 90 when the slot is narrower than two
# lines; below one line, only every k-th label is written.
rpt_xtics() {
	awk -F'\t' -v base="$1" -v slot="$2" '
	function gq(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
	# wrap(s, w): s in lines of at most w characters, broken after a
	# separator; "" when a piece is still longer than w or needs > 3 lines.
	function wrap(s, w,   out, line, piece, n, c, i) {
		out = ""; line = ""; n = 1
		while (s != "") {
			# The next piece: up to and including the next separator.
			for (i = 1; i <= length(s); i++) { c = substr(s, i, 1); if (c ~ /[-_\/.:, ]/) break }
			piece = substr(s, 1, i); s = substr(s, i + 1)
			if (line != "" && length(line piece) > w) {
				sub(/ $/, "", line); out = out line "\n"; line = ""; n++
			}
			line = line piece
			if (length(line) > w + (line ~ / $/)) return ""
		}
		return n > 3 ? "" : out line
	}
	{ lab[NR] = $1; sec[NR] = $2; if (length($1) > max) max = length($1); if (length($2) > max) max = length($2) }
	END {
		if (NR == 0) exit
		w = int((slot - 8) / 6); mode = "h"
		if (max > w) {
			mode = "w"
			for (i = 1; i <= NR; i++) { out[i] = wrap(lab[i], w); if (out[i] == "") { mode = (slot >= 22 ? "r" : "v"); break } }
		}
		step = (slot >= 12 || mode != "v") ? 1 : int(12 / slot + 0.999)
		printf "set xtics ("
		for (i = 1; i <= NR; i++) {
			if ((i - 1) % step) continue
			t = (mode == "w") ? out[i] : lab[i]
			t = gq(t); gsub(/\n/, "\\n", t)
			if (sec[i] != "") t = t "\\n" gq(sec[i])
			printf "%s\"%s\" %d", (i > 1 ? ", " : ""), t, base + i - 1
		}
		printf ") %s\n", mode == "r" ? "rotate by -35" : mode == "v" ? "rotate by -90" : "norotate"
		# gnuplot places the axis label as if under one line of labels:
		# under several it is moved down, with the margin to hold it (in
		# character heights).
		if (mode == "h" || mode == "w") {
			lines = 1
			for (i = 1; i <= NR; i++) { k = (mode == "w") ? split(out[i], x, "\n") : 1; k += (sec[i] != ""); if (k > lines) lines = k }
			if (lines > 1) printf "set bmargin %d\nset xlabel offset 0,%.1f\n", int(lines * 1.3 + 3.5), -0.6 * lines
		}
	}'
}

# plot_bars TSV XCOL YCOLS OUT.svg TITLE YLABEL [XLABEL]: grouped bars of
# the named columns (YCOLS comma-separated; '*' = every column but XCOL)
# against the labels in XCOL.
plot_bars() {
	local tsv="$1" xcol="$2" ycols="$3" out="$4" title="$5" ylabel="${6:-}" xlabel="${7:-}"
	local xi using="" i=0 c ci tmp
	local -a cols
	xi=$(tsv_col "$tsv" "$xcol")
	[ -n "$xi" ] || return 0
	tmp=$(mktemp -d)
	# gnuplot would read a header such as "512thread" as the number 512.
	# Rows in the report's configuration order (others as they come).
	tail -n +2 "$tsv" | awk -F'\t' -v col="$xi" "$(rpt_sort_key)" | sort -t$'\t' -k1,1V -s | cut -f2- >"$tmp/data.tsv"
	[ -s "$tmp/data.tsv" ] || { rm -rf "$tmp"; return 0; }
	if [ "$ycols" = '*' ]; then
		# The header's fields but XCOL, split by the shell (read would
		# merge empty fields: TAB is IFS white space).
		local line="" rest
		IFS= read -r line <"$tsv" || true
		cols=()
		rest="$line"$'\t'
		while [ -n "$rest" ]; do
			c="${rest%%$'\t'*}" rest="${rest#*$'\t'}"
			[ "$c" = "$xcol" ] || cols+=("$c")
		done
		# Series that are configurations in the report's order too.
		mapfile -t cols < <(printf '%s\n' "${cols[@]}" | awk -F'\t' -v col=1 "$(rpt_sort_key)" | sort -t$'\t' -k1,1V -s | cut -f2-)
	else
		IFS=, read -ra cols <<<"$ycols"
	fi
	local keyw=0 n xt
	for c in "${cols[@]}"; do
		ci=$(tsv_col "$tsv" "$c")
		[ -n "$ci" ] || continue
		[ ${#c} -le "$keyw" ] || keyw=${#c}
		using+="${using:+, }'data.tsv' using $ci title $(rpt_gq "$c")"
		i=$((i + 1))
	done
	[ -n "$using" ] || { rm -rf "$tmp"; return 0; }
	# Tick labels for the room each group has: 900 px less the margins
	# and the key (its longest title and sample).
	n=$(wc -l <"$tmp/data.tsv")
	xt=$(cut -f "$xi" "$tmp/data.tsv" | rpt_xtics 0 $(((900 - 80 - 6 * keyw - 50) / n)))
	# No zero axis across the plot: x = 0 is the first group, and a line
	# there reads as a marker on it.  y = 0 is the bars' base, drawn solid.
	rpt_plot "$tmp" "$out" 900 420 "set title $(rpt_gq "$title")
set ylabel $(rpt_gq "$ylabel")
set xlabel $(rpt_gq "$xlabel")
set key outside right top
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
$xt
set grid ytics
set xzeroaxis lt -1
set yrange [*<0:0<*]
plot $using" || { rm -rf "$tmp"; return 1; }
	rm -rf "$tmp"
}

# rpt_yrange COL < TSV: "set yrange [LO:HI]" padding the values of column
# COL by 5% of their span each side (of the value when they are all equal),
# so no box, whisker or violin is drawn on the edge of the plot.
rpt_yrange() {
	awk -F'\t' -v c="$1" '
	$c != "" { v = $c + 0; if (!k++ || v < lo) lo = v; if (k == 1 || v > hi) hi = v }
	END {
		if (!k) exit
		p = (hi - lo) * 0.05
		if (p == 0) p = (lo < 0 ? -lo : lo) * 0.05
		if (p == 0) p = 1
		printf "set yrange [%.10g:%.10g]\n", lo - p, hi + p
	}'
}

# plot_box TSV GROUPCOL VALCOL OUT.svg TITLE YLABEL [XLABEL]: one box per
# value of GROUPCOL (in the report's configuration order, others in
# version order), labelled with the value and its
# count (n=...); each box is its own plot, titled "VALUE (n=N)".
plot_box() {
	local tsv="$1" gcol="$2" vcol="$3" out="$4" title="$5" ylabel="${6:-}" xlabel="${7:-$2}"
	local gi vi tmp n i g cnt plots="" w maxl=0 yr
	gi=$(tsv_col "$tsv" "$gcol")
	vi=$(tsv_col "$tsv" "$vcol")
	[ -n "$gi" ] && [ -n "$vi" ] || return 0
	tmp=$(mktemp -d)
	# Groups in the report's configuration order, others in version order.
	awk -F'\t' -v g="$gi" -v v="$vi" 'NR > 1 && $v != "" { print $g "\t" $v }' "$tsv" |
		awk -F'\t' -v col=1 -v fb=v "$(rpt_sort_key)" | sort -t$'\t' -k1,1V -s | cut -f2- |
		awk -F'\t' -v d="$tmp" '{ if (!($1 in n)) { n[$1] = ++k; names[k] = $1 } c[$1]++; print n[$1] "\t" $2 > (d "/box.tsv") }
			END { for (i = 1; i <= k; i++) printf "%s\tn=%d\n", names[i], c[names[i]] > (d "/groups.tsv") }'
	[ -s "$tmp/box.tsv" ] || { rm -rf "$tmp"; return 0; }
	n=0
	while IFS=$'\t' read -r g cnt; do
		n=$((n + 1))
		[ ${#g} -le "$maxl" ] || maxl=${#g}
		plots+="${plots:+, }'box.tsv' using ($n):(\$1 == $n ? \$2 : NaN):(0.5) with boxplot lc $n title $(rpt_gq "$g (${cnt})")"
	done <"$tmp/groups.tsv"
	# Wide enough for the labels side by side (6 px a character, up to
	# 1200 px); rpt_xtics wraps or turns them when that is not enough.
	w=$((80 + n * (6 * maxl + 14)))
	[ "$w" -ge 400 ] || w=400
	[ "$w" -le 1200 ] || w=1200
	yr=$(rpt_yrange 2 <"$tmp/box.tsv")
	rpt_plot "$tmp" "$out" "$w" 400 "set title $(rpt_gq "$title")
set xlabel $(rpt_gq "$xlabel")
set ylabel $(rpt_gq "$ylabel")
$(rpt_xtics 1 $(((w - 80) / n)) <"$tmp/groups.tsv")
set xrange [0.4:$n.6]
$yr
set style fill solid 0.4 border -1
set style boxplot outliers pointtype 7
set pointsize 0.5
unset key
set grid ytics
plot $plots" || { rm -rf "$tmp"; return 1; }
	rm -rf "$tmp"
}

# plot_heatmap TSV ROWCOL COLCOL VALCOL OUT.svg TITLE: a matrix of values.
plot_heatmap() {
	local tsv="$1" rcol="$2" ccol="$3" vcol="$4" out="$5" title="$6"
	local ri ci vi tmp xt yt m
	ri=$(tsv_col "$tsv" "$rcol") ci=$(tsv_col "$tsv" "$ccol") vi=$(tsv_col "$tsv" "$vcol")
	[ -n "$ri" ] && [ -n "$ci" ] && [ -n "$vi" ] || return 0
	tmp=$(mktemp -d)
	awk -F'\t' -v r="$ri" -v c="$ci" -v v="$vi" '
		NR > 1 { if (!($r in R)) R[$r] = nr++; if (!($c in C)) C[$c] = nc++; print C[$c] "\t" R[$r] "\t" $v }
	' "$tsv" >"$tmp/data.tsv"
	[ -s "$tmp/data.tsv" ] || { rm -rf "$tmp"; return 0; }
	# White is zero: the colour range is symmetric around it.
	m=$(awk -F'\t' '{ v = $3 < 0 ? -$3 : $3; if (v > m) m = v } END { print (m > 0 ? m : 1) }' "$tmp/data.tsv")
	# Column labels in first-seen order at x = 0, 1, ..., laid out for the
	# room each has (800 px less the row labels and the colour box).
	awk -F'\t' -v c="$ci" 'NR > 1 && !($c in s) { s[$c] = 1; print $c }' "$tsv" >"$tmp/cols.txt"
	xt=$(rpt_xtics 0 $((560 / $(wc -l <"$tmp/cols.txt"))) <"$tmp/cols.txt")
	yt=$(awk -F'\t' -v r="$ri" -v q="'" 'NR > 1 && !($r in s) { s[$r] = n++; l = $r; gsub(q, q q, l); printf "%s%s%s%s %d", (n > 1 ? ", " : ""), q, l, q, s[$r] }' "$tsv")
	rpt_plot "$tmp" "$out" 800 420 "set title $(rpt_gq "$title")
set xlabel $(rpt_gq "$ccol")
set ylabel $(rpt_gq "$rcol")
$xt
set ytics ($yt)
set palette defined (-1 '#1b5e20', 0 '#ffffff', 1 '#b71c1c')
set cbrange [-$m:$m]
set view map
unset key
plot 'data.tsv' using 1:2:3 with image pixels title $(rpt_gq "$vcol")" || { rm -rf "$tmp"; return 1; }
	rm -rf "$tmp"
}

# rpt_img FILE.svg [CAPTION]: embed a plot as an <img> with a data: URI, so
# several plots on one page never share SVG element ids.  Still one
# self-contained file.
rpt_img() {
	[ -s "$1" ] || return 0
	# basename FILE .svg, without the process (a file has no trailing '/').
	local b="${1##*/}"
	[ "$b" = .svg ] || b="${b%.svg}"
	{
		printf '<figure class="plot"><img alt="%s" src="data:image/svg+xml;base64,' "$(rpt_escape "$b")"
		base64 -w 0 "$1"
		printf '">'
		[ -z "${2:-}" ] || printf '<figcaption class="note">%s</figcaption>' "$(rpt_escape "$2")"
		printf '</figure>\n'
	} >>"$RPT_FILE"
}

# rpt_html TEXT: append raw HTML (the caller escapes what needs it).
rpt_html() { printf '%s\n' "$1" >>"$RPT_FILE"; }

# rpt_tsv2csv IN.tsv OUT.csv: RFC 4180 CSV; fields holding a comma, a quote
# or leading/trailing blanks are quoted, quotes doubled.  OUT is written in
# place: the callers write into a staging directory that is published whole.
rpt_tsv2csv() {
	awk -F'\t' '
	function q(s) { if (s ~ /[",\r]|^ | $/) { gsub(/"/, "\"\"", s); return "\"" s "\"" } return s }
	{ for (i = 1; i <= NF; i++) printf "%s%s", (i > 1 ? "," : ""), q($i); printf "\r\n" }' "$1" >"$2"
}

# tsv_col TSV NAME: the 1-based index of column NAME (empty if absent).
# Shell words only: the reports look columns up dozens of times.
tsv_col() {
	local line="" i=1 tab=$'\t'
	IFS= read -r line <"$1" || [ -n "$line" ] || return 0
	while :; do
		if [ "${line%%"$tab"*}" = "$2" ]; then
			echo "$i"
			return 0
		fi
		case "$line" in *"$tab"*) ;; *) return 0 ;; esac
		line=${line#*"$tab"}
		i=$((i + 1))
	done
}

# tsv_cols TSV NAME...: the indexes of the columns present, comma-separated
# (a cut -f list).
tsv_cols() {
	local tsv="$1" c i sel=""
	shift
	for c in "$@"; do
		i=$(tsv_col "$tsv" "$c")
		[ -z "$i" ] || sel+="${sel:+,}$i"
	done
	printf '%s\n' "$sel"
}

# tsv_pivot TSV ROWCOL COLCOL VALCOL: a wide table on stdout: one row per
# value of ROWCOL (first-seen order), one column per value of COLCOL
# (first-seen order), cells from VALCOL (the last one wins; empty if none).
tsv_pivot() {
	local ri ci vi
	ri=$(tsv_col "$1" "$2") ci=$(tsv_col "$1" "$3") vi=$(tsv_col "$1" "$4")
	[ -n "$ri" ] && [ -n "$ci" ] && [ -n "$vi" ] || return 1
	awk -F'\t' -v r="$ri" -v c="$ci" -v v="$vi" -v rname="$2" '
	NR == 1 { next }
	{
		if (!($r in R)) { R[$r] = 1; rows[++nr] = $r }
		if (!($c in C)) { C[$c] = 1; cols[++nc] = $c }
		val[$r SUBSEP $c] = $v
	}
	END {
		printf "%s", rname; for (j = 1; j <= nc; j++) printf "\t%s", cols[j]; print ""
		for (i = 1; i <= nr; i++) {
			printf "%s", rows[i]
			for (j = 1; j <= nc; j++) printf "\t%s", val[rows[i] SUBSEP cols[j]]
			print ""
		}
	}' "$1"
}

# plot_lines TSV XCOL SERIESCOL VALCOL OUT.svg TITLE XLABEL YLABEL: the mean
# of VALCOL per (series, x) as one line per series over a numeric x axis.
# Cells without data are left out (not drawn as zero).
plot_lines() {
	local tsv="$1" xcol="$2" scol="$3" vcol="$4" out="$5" title="$6" xlabel="${7:-}" ylabel="${8:-}"
	local xi si vi tmp plots="" s k
	xi=$(tsv_col "$tsv" "$xcol") si=$(tsv_col "$tsv" "$scol") vi=$(tsv_col "$tsv" "$vcol")
	[ -n "$xi" ] && [ -n "$si" ] && [ -n "$vi" ] || return 0
	tmp=$(mktemp -d)
	# One file per series, numbered in version order of the series value.
	awk -F'\t' -v x="$xi" -v s="$si" -v v="$vi" 'NR > 1 && $v != "" { print $s "\t" $x "\t" $v }' "$tsv" | sort -t$'\t' -k1,1V -k2,2g |
		awk -F'\t' -v d="$tmp" '
		{ k = $1 SUBSEP $2; if (!(k in n)) { order[++m] = k; if (!($1 in S)) { S[$1] = ++ns; sname[ns] = $1 } } n[k]++; sum[k] += $3 }
		END {
			for (i = 1; i <= m; i++) { split(order[i], p, SUBSEP); printf "%s\t%.12g\n", p[2], sum[order[i]] / n[order[i]] > (d "/s" S[p[1]] ".tsv") }
			for (i = 1; i <= ns; i++) print sname[i] > (d "/series.txt")
		}'
	[ -s "$tmp/series.txt" ] || { rm -rf "$tmp"; return 0; }
	k=0
	while IFS= read -r s; do
		k=$((k + 1))
		plots+="${plots:+, }'s$k.tsv' using 1:2 with linespoints pointtype 7 title $(rpt_gq "$scol=$s")"
	done <"$tmp/series.txt"
	rpt_plot "$tmp" "$out" 700 400 "set title $(rpt_gq "$title")
set xlabel $(rpt_gq "$xlabel")
set ylabel $(rpt_gq "$ylabel")
set key outside right top
set grid
set offsets graph 0.05, graph 0.05, graph 0.05, 0
plot $plots" || { rm -rf "$tmp"; return 1; }
	rm -rf "$tmp"
}

# plot_violins TSV VALCOL OUT.svg TITLE YLABEL GROUPCOL...: one panel per
# GROUPCOL, side by side; in each a violin per group value (a Gaussian
# kernel density, Silverman's bandwidth, cut at the data range), its mean
# (dashed) and median (solid) as lines.
plot_violins() {
	local tsv="$1" vcol="$2" out="$3" title="$4" ylabel="$5"
	shift 5
	local vi gi g tmp n=0 gp
	vi=$(tsv_col "$tsv" "$vcol")
	[ -n "$vi" ] || return 0
	tmp=$(mktemp -d)
	gp="$tmp/plot.gp"
	# One y range for every panel, padded so no violin touches the edge.
	printf "set multiplot layout 1,%d title %s\nunset key\nset grid ytics\nset ylabel %s\n%s\n" "$#" "$(rpt_gq "$title")" "$(rpt_gq "$ylabel")" \
		"$(tail -n +2 "$tsv" | rpt_yrange "$vi")" >"$gp"
	for g in "$@"; do
		gi=$(tsv_col "$tsv" "$g")
		[ -n "$gi" ] || continue
		n=$((n + 1))
		# Per group: the polygon of the violin (x = slot -/+ density) and
		# the mean and median segments.
		awk -F'\t' -v g="$gi" -v v="$vi" 'NR > 1 && $v != "" { print $g "\t" $v }' "$tsv" |
			awk -F'\t' -v col=1 -v fb=v "$(rpt_sort_key)" | sort -t$'\t' -k1,1V -k3,3g -s | cut -f2- |
			awk -F'\t' -v poly="$tmp/poly$n" -v stat="$tmp/stat$n" -v tics="$tmp/tics$n" '
			function flush(   i, j, m, sd, h, lo, hi, y, d, dens, maxd, k, med) {
				if (cnt == 0) return
				slot++
				m = sum / cnt; sd = cnt > 1 ? sqrt((sq - sum * sum / cnt) / (cnt - 1)) : 0
				h = 1.06 * sd * cnt ^ -0.2
				if (h <= 0) h = (m != 0 ? (m < 0 ? -m : m) * 0.01 : 1)
				lo = val[1]; hi = val[cnt]
				maxd = 0
				for (k = 0; k <= 40; k++) {
					y = (hi > lo) ? lo + (hi - lo) * k / 40 : lo
					d = 0
					for (i = 1; i <= cnt; i++) d += exp(-0.5 * ((y - val[i]) / h) ^ 2)
					Y[k] = y; D[k] = d; if (d > maxd) maxd = d
				}
				for (k = 0; k <= 40; k++) printf "%g\t%g\n", slot - 0.4 * D[k] / maxd, Y[k] > poly
				for (k = 40; k >= 0; k--) printf "%g\t%g\n", slot + 0.4 * D[k] / maxd, Y[k] > poly
				printf "\n\n" > poly
				med = (cnt % 2) ? val[(cnt + 1) / 2] : (val[cnt / 2] + val[cnt / 2 + 1]) / 2
				printf "%d\t%g\t%g\n", slot, m, med > stat
				print cur > tics
				cnt = sum = sq = 0
			}
			!started || $1 != cur { flush(); cur = $1; started = 1 }
			{ val[++cnt] = $2; sum += $2; sq += $2 * $2 }
			END { flush(); printf "%d\n", slot > (poly ".n") }'
		[ -s "$tmp/poly$n" ] || { n=$((n - 1)); continue; }
		{
			local slots
			slots=$(<"$tmp/poly$n.n")
			printf "set title %s\nset xlabel %s\n%s\nset xrange [0.4:%s.6]\n" "$(rpt_gq "by $g")" "$(rpt_gq "$g")" \
				"$(rpt_xtics 1 $((280 / slots)) <"$tmp/tics$n")" "$slots"
			printf "plot 'poly%d' using 1:2 with filledcurves closed fillcolor rgb '#90caf9' fillstyle solid 0.6 border lc rgb '#1565c0' title 'density', " "$n"
			printf "'stat%d' using (\$1-0.3):2:(0.6):(0) with vectors nohead dashtype 2 lc rgb '#b71c1c' title 'mean', " "$n"
			printf "'stat%d' using (\$1-0.3):3:(0.6):(0) with vectors nohead lw 2 lc rgb '#222222' title 'median'\n" "$n"
		} >>"$gp"
	done
	printf 'unset multiplot\n' >>"$gp"
	local rc=0
	[ "$n" -eq 0 ] || rpt_plot "$tmp" "$out" $((360 * $#)) 420 "$(<"$gp")" || rc=$?
	rm -rf "$tmp"
	return "$rc"
}

# rpt_urlpath TEXT: TEXT percent-encoded for a relative link (a file name
# with spaces, '#', '?', '%').
rpt_urlpath() {
	local s="$1" out="" c i LC_ALL=C
	for ((i = 0; i < ${#s}; i++)); do
		c="${s:i:1}"
		case "$c" in
		[A-Za-z0-9._~/-]) out+="$c" ;;
		*) out+=$(printf '%%%02X' "'$c") ;;
		esac
	done
	printf '%s' "$out"
}
