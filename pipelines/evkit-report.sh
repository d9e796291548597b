# shellcheck shell=bash
# evkit-report.sh - self-contained HTML reports and gnuplot SVG plots for the
# evkit pipelines (sourced, not run).  The HTML embeds its CSS and SVG plots
# inline: no scripts, no network fetches, it opens from disk.

# rpt_begin FILE TITLE
rpt_begin() {
	RPT_FILE="$1"
	cat >"$RPT_FILE" <<HTML
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>$(rpt_escape "$2")</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f0f0f0; } td.t { text-align: left; }
td.better { background: #c8e6c9; } td.worse { background: #ffcdd2; } td.similar { background: #f5f5f5; }
td.pos { color: #b71c1c; } td.neg { color: #1b5e20; }
.plot { margin: 1em 0; } .note { color: #555; font-size: 0.9em; }
</style></head><body>
<h1>$(rpt_escape "$2")</h1>
HTML
}

rpt_escape() {
	local s="$1"
	s="${s//&/&amp;}"
	s="${s//</&lt;}"
	s="${s//>/&gt;}"
	printf '%s' "${s//\"/&quot;}"
}

rpt_h2() { printf '<h2>%s</h2>\n' "$(rpt_escape "$1")" >>"$RPT_FILE"; }
rpt_p() { printf '<p class="note">%s</p>\n' "$(rpt_escape "$1")" >>"$RPT_FILE"; }

# rpt_table TSV [MAX_ROWS]: the TSV (first line = header) as an HTML table.
# A column named "status" is coloured Better/Worse/Similar; columns whose
# name ends in "pct" or "change" show their sign by colour.
rpt_table() {
	local max="${2:-200}"
	awk -F'\t' -v max="$max" '
	function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
	NR == 1 { print "<table><tr>"; for (i = 1; i <= NF; i++) { h[i] = $i; printf "<th>%s</th>", esc($i) } print "</tr>"; next }
	NR > max + 1 { more++; next }
	{
		printf "<tr>"
		for (i = 1; i <= NF; i++) {
			cls = ($i ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) ? "" : "t"
			if (h[i] == "status") cls = tolower($i)
			else if (h[i] ~ /(pct|change)$/ && $i ~ /^-?[0-9.]+$/) cls = ($i + 0 > 0) ? "pos" : ($i + 0 < 0) ? "neg" : ""
			printf "<td class=\"%s\">%s</td>", cls, esc($i)
		}
		print "</tr>"
	}
	END { print "</table>"; if (more) printf "<p class=\"note\">%d more rows in the TSV file.</p>\n", more }' "$1" >>"$RPT_FILE"
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
	printf '<p class="note">Made by evkit %s on %s.</p>\n</body></html>\n' \
		"$(ev-view --version 2>/dev/null | head -n 1 | awk '{print $3}')" "$(date -u '+%Y-%m-%d %H:%M UTC')" >>"$RPT_FILE"
}

# plot_bars TSV XCOL YCOLS OUT.svg TITLE YLABEL: grouped bars of the named
# columns (YCOLS comma-separated) against the labels in XCOL.
plot_bars() {
	local tsv="$1" xcol="$2" ycols="$3" out="$4" title="$5" ylabel="${6:-}"
	local xi using="" i=0 c ci
	xi=$(head -n 1 "$tsv" | tr '\t' '\n' | grep -nx "$xcol" | cut -d: -f1)
	[ -n "$xi" ] || return 0
	IFS=, read -ra cols <<<"$ycols"
	for c in "${cols[@]}"; do
		ci=$(head -n 1 "$tsv" | tr '\t' '\n' | grep -nx "$c" | cut -d: -f1)
		[ -n "$ci" ] || continue
		[ $i -eq 0 ] && using="'$tsv' using $ci:xtic($xi) title '$c'" || using="$using, '' using $ci title '$c'"
		i=$((i + 1))
	done
	[ -n "$using" ] || return 0
	gnuplot <<GP
set terminal svg size 900,420 noenhanced font 'sans,10'
set output '$out'
set datafile separator '\t'
set title '$title'
set ylabel '$ylabel'
set key outside right top
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set xtics rotate by -35
set grid ytics
set yzeroaxis
plot $using
GP
}

# plot_box TSV GROUPCOL VALCOL OUT.svg TITLE YLABEL: one box plot per group.
plot_box() {
	local tsv="$1" gcol="$2" vcol="$3" out="$4" title="$5" ylabel="${6:-}"
	local gi vi tmp
	gi=$(head -n 1 "$tsv" | tr '\t' '\n' | grep -nx "$gcol" | cut -d: -f1)
	vi=$(head -n 1 "$tsv" | tr '\t' '\n' | grep -nx "$vcol" | cut -d: -f1)
	[ -n "$gi" ] && [ -n "$vi" ] || return 0
	tmp=$(mktemp)
	# gnuplot boxplots group by a numeric x: number the groups in sorted order.
	tail -n +2 "$tsv" | awk -F'\t' -v g="$gi" -v v="$vi" '{ print $g "\t" $v }' | sort -t$'\t' -k1,1V |
		awk -F'\t' '{ if (!($1 in n)) n[$1] = ++k; print n[$1] "\t" $1 "\t" $2 }' >"$tmp"
	[ -s "$tmp" ] || { rm -f "$tmp"; return 0; }
	gnuplot <<GP
set terminal svg size 700,400 noenhanced font 'sans,10'
set output '$out'
set datafile separator '\t'
set title '$title'
set ylabel '$ylabel'
set style fill solid 0.4 border -1
set style boxplot outliers pointtype 7
set boxwidth 0.5
set pointsize 0.5
unset key
set grid ytics
plot '$tmp' using 1:3:(0.5):xtic(2) with boxplot
GP
	rm -f "$tmp"
}

# plot_heatmap TSV ROWCOL COLCOL VALCOL OUT.svg TITLE: a matrix of values.
plot_heatmap() {
	local tsv="$1" rcol="$2" ccol="$3" vcol="$4" out="$5" title="$6"
	local ri ci vi tmp xt yt
	ri=$(head -n 1 "$tsv" | tr '\t' '\n' | grep -nx "$rcol" | cut -d: -f1)
	ci=$(head -n 1 "$tsv" | tr '\t' '\n' | grep -nx "$ccol" | cut -d: -f1)
	vi=$(head -n 1 "$tsv" | tr '\t' '\n' | grep -nx "$vcol" | cut -d: -f1)
	[ -n "$ri" ] && [ -n "$ci" ] && [ -n "$vi" ] || return 0
	tmp=$(mktemp)
	tail -n +2 "$tsv" | awk -F'\t' -v r="$ri" -v c="$ci" -v v="$vi" '
		{ if (!($r in R)) R[$r] = nr++; if (!($c in C)) C[$c] = nc++; print C[$c] "\t" R[$r] "\t" $v }
	' >"$tmp"
	[ -s "$tmp" ] || { rm -f "$tmp"; return 0; }
	xt=$(tail -n +2 "$tsv" | awk -F'\t' -v c="$ci" '!($c in s) { s[$c] = n++; printf "%s\"%s\" %d", (n > 1 ? ", " : ""), $c, s[$c] }')
	yt=$(tail -n +2 "$tsv" | awk -F'\t' -v r="$ri" '!($r in s) { s[$r] = n++; printf "%s\"%s\" %d", (n > 1 ? ", " : ""), $r, s[$r] }')
	gnuplot <<GP
set terminal svg size 800,420 noenhanced font 'sans,10'
set output '$out'
set datafile separator '\t'
set title '$title'
set xtics ($xt) rotate by -35
set ytics ($yt)
set palette defined (-1 '#1b5e20', 0 '#ffffff', 1 '#b71c1c')
set cbrange [*:*]
set view map
unset key
plot '$tmp' using 1:2:3 with image
GP
	rm -f "$tmp"
}
