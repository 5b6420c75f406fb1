#!/usr/bin/env bash
# Cron-friendly daily crawl: run_depth.sh <lang|all> [depth] [-- extra driver args]
#
# Crawls seeds/<lang>.txt with seeds/<lang>.yaml into crawl/<lang>/<YYYY-MM-DD>/
# (one directory per language and day, as the thesis crawled every language
# once a day), logging to that day's log file.  A lock per language keeps two
# runs of one language from overlapping.  Exits non-zero if any language
# failed, and says which.
set -uo pipefail

usage() { echo "usage: $0 <lang|all> [depth] [-- extra driver args]" >&2; exit 2; }
[ $# -ge 1 ] || usage
here="$(cd "$(dirname "$0")" && pwd)"
target="$1"; shift
depth=3
if [ $# -ge 1 ] && [ "$1" != "--" ]; then depth="$1"; shift; fi
if [ $# -ge 1 ]; then [ "$1" = "--" ] || usage; shift; fi
python="${PYTHON:-python3}"
root="${MRCRAWL_ROOT:-$here/crawl}"
day="$(date -u +%Y-%m-%d)"

if [ "$target" = all ]; then
    langs=$(cd "$here/seeds" && ls *.yaml | sed 's/\.yaml$//')
else
    [ -f "$here/seeds/$target.yaml" ] || { echo "$0: no seeds/$target.yaml" >&2; exit 2; }
    langs="$target"
fi

failed=()
for lang in $langs; do
    out="$root/$lang/$day"
    mkdir -p "$root/$lang"
    log="$root/$lang/$day.log"
    resume=()
    [ -f "$out/crawl.json" ] && resume=(--resume)  # a crawl of today that stopped: continue it
    (
        flock -n 9 || { echo "$lang: another run holds $root/$lang/.lock" >&2; exit 75; }
        "$python" -m mrcrawl.driver "$here/seeds/$lang.txt" --depth "$depth" \
            --conf "$here/seeds/$lang.yaml" --output "$out" "${resume[@]}" "$@"
    ) 9>"$root/$lang/.lock" >>"$log" 2>&1
    status=$?
    if [ $status -eq 0 ]; then
        echo "$lang: ok ($out)"
    else
        echo "$lang: FAILED with status $status, see $log" >&2
        failed+=("$lang")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
