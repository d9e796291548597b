#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# review-reports.sh [OUT] - every HTML report the pipelines write, rendered
# for a look by eye and measured.
#
# Runs the demo, gemm-variance, compare-configs and compare-sweeps (and the
# gemm-variance reports compare-sweeps makes) on generated sweeps and, when
# the shared data is there (SHARED_DATA, default ../shared/data; empty: not
# used), on the aorta sweep; then, for each report and each width (1400
# and 800 px), a PNG of the page in headless Chromium and the measurements
# of tests/fixtures/evkit-report/layout-check.sh.  merge-traces and
# process-traces write no HTML (timelines, CSV and TSV summaries): they are
# not rendered here.
#
# OUT (default ./review-out, replaced) gets reports/ (the pipelines'
# outputs) and png/NAME-WIDTH.png with png/NAME-WIDTH.txt beside each.
# Prints one line per report and width:
#   NAME WIDTH overlaps N outside N wide N scroll N
# and exits 1 when text overlaps in a plot, text is outside its plot, the
# page scrolls sideways, or a table is wider than a 1400 px page; 77 when
# Chromium is not installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="${EV_BIN:-$root/bin}:$root/pipelines:$PATH"
out="${1:-$PWD/review-out}"
check="$root/tests/fixtures/evkit-report/layout-check.sh"
shared="${SHARED_DATA-$root/../shared/data}"
browser=""
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then browser="$b"; break; fi
done
[ -n "$browser" ] || { echo "review-reports: Chromium is not installed (Debian: chromium)" >&2; exit 77; }

rm -rf -- "$out"
mkdir -p "$out/reports" "$out/png" "$out/data"
out="$(cd "$out" && pwd)"
r="$out/reports" d="$out/data"
export EVKIT_PNG=0 SOURCE_DATE_EPOCH=1700000000

# The reports.
gen="$root/tests/gen/gen-kineto.py"
python3 "$gen" --ranks 4 --iters 3 --jitter 5 "$d/sweep"
python3 "$gen" --ranks 8 --iters 3 --seed 2 --threads 256,512,1024 --channels 28,42,56 "$d/wide"
demo "$r/demo" >/dev/null
gemm-variance -q -o "$r/gemm-variance" "$d/sweep"
gemm-variance -q -o "$r/gemm-variance-wide" "$d/wide"
compare-configs -q -b "$d/sweep/256thread/nccl_28channels" -t "$d/sweep/512thread/nccl_56channels" \
	-t "$d/sweep/256thread/nccl_56channels" -o "$r/compare-configs"
compare-sweeps -q -o "$r/compare-sweeps" "base=$r/gemm-variance" "wide sweep=$d/wide"
if [ -n "$shared" ] && [ -d "$shared/kineto/aorta-sweep" ]; then
	a="$shared/kineto/aorta-sweep"
	gemm-variance -q -o "$r/aorta-gemm-variance" "$a"
	compare-configs -q -b "$a/256thread/nccl_28channels" -t "$a/512thread/nccl_56channels" -o "$r/aorta-compare-configs"
	compare-sweeps -q -o "$r/aorta-compare-sweeps" "aorta=$r/aorta-gemm-variance" "generated=$r/gemm-variance"
fi

# Each report at each width: a PNG and the measurements.
status=0
while IFS= read -r -d '' html; do
	rel="${html#"$r"/}"
	name="${rel%.html}"
	name="${name//[\/ ]/_}"
	for w in 1400 800; do
		profile=$(mktemp -d "$out/profile.XXXXXX")
		timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
			--disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
			--hide-scrollbars --window-size="$w,7000" --screenshot="$out/png/$name-$w.png" \
			"file://$html" >/dev/null 2>&1 || { echo "review-reports: $browser failed on $rel" >&2; status=1; }
		rm -rf "$profile"
		"$check" "$html" "$w" "$out/work" >"$out/png/$name-$w.txt"
		awk -v n="$name" -v w="$w" '
			$1 ~ /^(overlaps|outside|wide|scroll)$/ { v[$1] = $2 }
			END { printf "%s %s overlaps %d outside %d wide %d scroll %d\n", n, w, v["overlaps"], v["outside"], v["wide"], v["scroll"]
			      exit (v["overlaps"] || v["outside"] || v["scroll"] || (w == 1400 && v["wide"])) }' "$out/png/$name-$w.txt" || status=1
	done
done < <(find "$r" -name '*.html' -print0 | sort -z)
rm -rf "$out/work"
exit "$status"
