#!/usr/bin/env bash
# Cron-friendly daily crawl: run_depth.sh <lang|all> [depth] [-- extra driver args]
#
# Crawls <seeds>/<lang>.txt with <seeds>/<lang>.yaml, depth 3 unless told,
# into <root>/<lang>/<YYYY-MM-DD>/: one directory per language and day (the
# UTC date the run started), as the thesis crawled every language once a
# day.  The driver's output is appended to <root>/<lang>/<YYYY-MM-DD>.log.
# If that day's directory already holds a crawl, the run continues it with
# --resume: running the script again finishes a crawl that died.
#
# Languages run one after another.  A lock per language (<root>/<lang>/.lock,
# taken with flock) keeps two runs of one language from overlapping: a
# language whose lock is held is not started, and counts as failed.
#
# Exit status: 0 when every language succeeded; 1 when any failed, each
# named on stderr with the end of its log; 2 on bad usage.
#
# Environment:
#   MRCRAWL_SEEDS  directory of the <lang>.txt and <lang>.yaml files
#                  (default: seeds/ beside this script)
#   MRCRAWL_ROOT   where the crawls go (default: crawl/ beside this script)
#   PYTHON         an interpreter with the project's dependencies (default: python3)
#
# A crontab line: every language at 02:00 each day, three layers, on the
# local runner:
#   0 2 * * *  /srv/mrcrawl/run_depth.sh all 3 -- --runner local
set -uo pipefail

usage() {
    echo "usage: $0 <lang|all> [depth] [-- extra driver args]" >&2
    exit 2
}
[ $# -ge 1 ] || usage
here="$(cd "$(dirname "$0")" && pwd)"
target="$1"; shift
depth=3
if [ $# -ge 1 ] && [ "$1" != "--" ]; then depth="$1"; shift; fi
if [ $# -ge 1 ]; then [ "$1" = "--" ] || usage; shift; fi
[[ "$depth" =~ ^[1-9][0-9]*$ ]] || { echo "$0: depth: must be a whole number of at least 1, got '$depth'" >&2; exit 2; }
command -v flock >/dev/null || { echo "$0: needs flock(1) (util-linux) for its per-language lock" >&2; exit 2; }

python="${PYTHON:-python3}"
seeds="${MRCRAWL_SEEDS:-$here/seeds}"
root="${MRCRAWL_ROOT:-$here/crawl}"
day="$(date -u +%Y-%m-%d)"  # taken once: a run that passes midnight keeps its day

if [ "$target" = all ]; then
    langs=()
    for conf in "$seeds"/*.yaml; do
        [ -f "$conf" ] && langs+=("$(basename "$conf" .yaml)")
    done
    [ ${#langs[@]} -gt 0 ] || { echo "$0: no <lang>.yaml in $seeds" >&2; exit 2; }
else
    # A language is a file stem, never a path.
    [[ "$target" =~ ^[A-Za-z0-9_-]+$ ]] || { echo "$0: '$target' is not a language name" >&2; exit 2; }
    [ -f "$seeds/$target.yaml" ] || { echo "$0: no $seeds/$target.yaml" >&2; exit 2; }
    langs=("$target")
fi

# The driver runs from whatever directory cron starts in: let Python find the
# project here whether or not it is installed.
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"

# Crawl one language, appending to its log; returns the driver's exit status.
crawl_language() {
    local lang="$1"; shift
    local out="$root/$lang/$day" log="$root/$lang/$day.log"
    local args=("$@")
    [ -f "$out/crawl.json" ] && args=(--resume "$@")  # a crawl of today that stopped: continue it
    echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) run_depth.sh: $lang, depth $depth${args[*]:+, ${args[*]}}" >>"$log"
    "$python" -m mrcrawl.driver "$seeds/$lang.txt" --depth "$depth" --conf "$seeds/$lang.yaml" \
        --output "$out" "${args[@]}" >>"$log" 2>&1
    local status=$?
    echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) exit status $status" >>"$log"
    return $status
}

failed=()
for lang in "${langs[@]}"; do
    dir="$root/$lang"
    if ! mkdir -p "$dir"; then
        echo "$lang: FAILED: cannot create $dir" >&2
        failed+=("$lang")
        continue
    fi
    # The driver inherits descriptor 9, so the lock lasts as long as the
    # crawl does, even if this script is killed first.
    exec 9>>"$dir/.lock"
    if ! flock -n 9; then
        echo "$lang: FAILED: not started, another run of $lang holds $dir/.lock" >&2
        exec 9>&-
        failed+=("$lang")
        continue
    fi
    crawl_language "$lang" "$@"
    status=$?
    exec 9>&-
    if [ $status -eq 0 ]; then
        echo "$lang: ok ($dir/$day)"
    else
        echo "$lang: FAILED with status $status, see $dir/$day.log; it ends:" >&2
        grep -v '^== ' "$dir/$day.log" | tail -n 3 | sed 's/^/    /' >&2
        failed+=("$lang")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
