#!/usr/bin/env bash
# usage: run_depth.sh <lang|all> [depth] [-- extra driver args]
#        run_depth.sh -h|--help
#
# Cron-friendly daily crawl.  Crawls <seeds>/<lang>.txt with
# <seeds>/<lang>.yaml, depth 3 unless told, into <root>/<lang>/<YYYY-MM-DD>/:
# one directory per language and day, as the thesis crawled every language
# once a day.  The day is the UTC date the run started, or the one of the
# driver's --now when the arguments after -- give one (a backfill, or a
# simulated day).  The day's runs of a language share its crawl db,
# <root>/<lang>/db: each run fetches the seeds, the pages due again and the
# URLs it has never fetched, and its xml/ holds the pages that are new or
# changed since.  "all" crawls every <lang>.yaml in <seeds>.  Arguments
# after -- go to the driver (python -m mrcrawl.driver), and only there:
# run_depth.sh news 3 -- --runner local.
# The driver's output is appended to <root>/<lang>/<YYYY-MM-DD>.log.
# If that day's directory already holds a crawl, the run continues it with
# --resume: running the script again finishes a crawl that died.
#
# Languages run one after another.  A lock per language (<root>/<lang>/.lock,
# taken with flock) keeps two runs of one language from overlapping: a
# language whose lock is held is not started, and counts as failed.
#
# Exit status: 0 when every language succeeded; 1 when any failed (its
# driver exited non-zero, or it was not started), each named on stderr with
# the end of its log; 2 on bad usage (driver arguments the driver refuses
# included), an unknown language, or an interpreter that cannot run the
# driver, with nothing crawled; 130, 143 or 129 when
# Ctrl-C, SIGTERM or SIGHUP stopped a crawl (or this script, which then
# stops once its crawl has), named on stderr with the end of its log: the
# languages after it are not started, and running the script again resumes.
#
# Environment:
#   MRCRAWL_SEEDS  directory of the <lang>.txt and <lang>.yaml files
#                  (default: seeds/ beside this script)
#   MRCRAWL_ROOT   where the crawls go (default: crawl/ beside this script)
#   PYTHON         the interpreter that runs the driver, with the project's
#                  dependencies (default: .venv/bin/python beside this script,
#                  the README's set-up, else python3 on PATH).  A relative
#                  path is looked for in the current directory, then beside
#                  this script; a bare name is looked up on PATH.
#   MRCRAWL_CONTACT  your contact (an http(s) URL or an e-mail address),
#                  sent in every request's User-Agent; passed to the driver,
#                  which refuses to crawl without one unless a config has it
#
# Crontab lines: every language at 02:00 each day, three layers, on the
# local runner.  cron's bare environment is enough, as the interpreter is
# found by the rules above:
#   MRCRAWL_CONTACT=https://your-site.example/about-your-crawler
#   0 2 * * *  /srv/mrcrawl/run_depth.sh all 3 -- --runner local
set -uo pipefail

# The help is the comment at the head of this file: one text to keep true.
help_text() { awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; }
usage() {
    help_text | awk '/^$/ { exit } { print }' >&2  # the synopsis: the lines before the first blank one
    echo "$0 -h tells the arguments, the environment and the exit statuses" >&2
    exit 2
}
# An option, as opposed to a depth (a negative one is a bad depth).
is_option() { [[ "$1" =~ ^-[^0-9] ]]; }
# A word where only -- may stand (run_depth.sh news 3 --runner local): name
# it, and show the command line with the words after it moved behind the --.
misplaced() {
    local word rest=() dashes_seen=
    for word in "$@"; do
        if [ "$word" = "--" ] && [ -z "$dashes_seen" ]; then dashes_seen=1; continue; fi
        rest+=("$word")
    done
    echo "$0: $1 is misplaced: driver options go after --, as in:" \
        "$0$(printf ' %q' "${given[@]}") --$(printf ' %q' "${rest[@]}")" >&2
    exit 2
}
[ $# -ge 1 ] || usage
case "$1" in
    -h|--help) help_text; exit 0 ;;
    --) usage ;;
    -*) echo "$0: $1 is misplaced: the language comes first, and driver options go after --" >&2; usage ;;
esac
here="$(cd "$(dirname "$0")" && pwd)"
target="$1"; shift
given=("$target")  # the script's own arguments, for a message
depth=3
if [ $# -ge 1 ] && [ "$1" != "--" ] && ! is_option "$1"; then depth="$1"; given+=("$1"); shift; fi
if [ $# -ge 1 ]; then [ "$1" = "--" ] || misplaced "$@"; shift; fi
[[ "$depth" =~ ^[1-9][0-9]*$ ]] || { echo "$0: depth: must be a whole number of at least 1, got '$depth'" >&2; exit 2; }
command -v flock >/dev/null || { echo "$0: needs flock(1) (util-linux) for its per-language lock" >&2; exit 2; }

seeds="${MRCRAWL_SEEDS:-$here/seeds}"
root="${MRCRAWL_ROOT:-$here/crawl}"

configured=()  # every <lang>.yaml's stem, whether or not its seeds exist: "all" names a missing one as failed
for conf in "$seeds"/*.yaml; do
    [ -f "$conf" ] && configured+=("$(basename "$conf" .yaml)")
done
if [ "$target" = all ]; then
    [ ${#configured[@]} -gt 0 ] || { echo "$0: no <lang>.yaml in $seeds" >&2; exit 2; }
    langs=("${configured[@]}")
else
    # A language is a file stem, never a path.
    [[ "$target" =~ ^[A-Za-z0-9_-]+$ ]] || { echo "$0: '$target' is not a language name" >&2; exit 2; }
    for needed in "$seeds/$target.yaml" "$seeds/$target.txt"; do
        [ -f "$needed" ] && continue
        known=()
        for lang in "${configured[@]}"; do
            [ -f "$seeds/$lang.txt" ] && known+=("$lang")
        done
        echo "$0: unknown language '$target': no $needed; the languages in $seeds (a <lang>.txt and a <lang>.yaml) are: ${known[*]:-none}" >&2
        exit 2
    done
    langs=("$target")
fi

# The interpreter, resolved and tried once before anything is crawled.  cron
# starts this script in $HOME with PATH=/usr/bin:/bin and no venv active, so
# the default is the venv the README's set-up makes beside this script.
python_unusable() {
    echo "$0: ${PYTHON:+PYTHON=}${PYTHON:-PYTHON is unset}: $1; set PYTHON to an interpreter that has the project's dependencies, or make the default one with the README's set-up: cd $here && python3 -m venv .venv && .venv/bin/pip install -e '.[test]'" >&2
    exit 2
}
if [ -z "${PYTHON:-}" ]; then
    if [ -e "$here/.venv/bin/python" ]; then
        python="$here/.venv/bin/python"
    else
        python="$(type -P python3)" || python_unusable "there is no $here/.venv/bin/python, nor a python3 on PATH ($PATH)"
        python_origin=" (python3 on PATH, as there is no $here/.venv/bin/python)"
    fi
else
    case "$PYTHON" in
        /*) python="$PYTHON" ;;
        */*)  # relative: to where the script was called from, else to the script itself
            if [ -e "$PWD/$PYTHON" ]; then python="$PWD/$PYTHON"
            elif [ -e "$here/$PYTHON" ]; then python="$here/$PYTHON"
            else python_unusable "neither $PWD/$PYTHON nor $here/$PYTHON exists"
            fi ;;
        *) python="$(type -P "$PYTHON")" || python_unusable "no such command on PATH ($PATH)" ;;
    esac
fi

# The driver runs from whatever directory cron starts in: let Python find the
# project here whether or not it is installed.
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
import_error="$("$python" -c 'import mrjob, mrcrawl' 2>&1)" ||
    python_unusable "$python${python_origin:-} cannot import mrjob and mrcrawl: $(printf '%s\n' "$import_error" | tail -n 1)"

# The UTC date of the day the run stands for: the driver's --now when the
# arguments after -- give one, else now, taken once (a run that passes
# midnight keeps its day).  The driver's own parser reads the arguments, so
# every spelling it takes counts (--now X, --now=X), and arguments it would
# refuse stop the script here, before any directory is made.
day_of_run() {
    "$python" -c '
import sys
from datetime import datetime, timezone
from mrcrawl import UsageError
from mrcrawl.driver import parse_args
script, *driver_args = sys.argv[1:]
out = sys.stdout
sys.stdout = sys.stderr  # what the parser prints (its --help) is no day
try:
    now = parse_args(driver_args).now or datetime.now(timezone.utc)
except UsageError as error:
    sys.exit(f"{script}: the driver arguments after --: {error}")
try:
    day = now.astimezone(timezone.utc).date()
except OverflowError:  # within hours of year 1 or 9999
    sys.exit(f"{script}: --now {now.isoformat()}: its UTC date is out of range")
print(day.isoformat(), file=out)
' "$0" SEEDS --depth "$depth" --conf CONF "$@"
}
day="$(day_of_run "$@")" && [[ "$day" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || exit 2

# Crawl one language, appending to its log; returns the driver's exit status.
crawl_language() {
    local lang="$1"; shift
    local out="$root/$lang/$day" log="$root/$lang/$day.log"
    local args=("$@")
    [ -f "$out/crawl.json" ] && args=(--resume "$@")  # a crawl of today that stopped: continue it
    echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) run_depth.sh: $lang, depth $depth${args[*]:+, ${args[*]}}" >>"$log"
    # -u: the driver's stdout and stderr reach the log in the order written,
    # so the end of the log, shown when a language fails, is its last word.
    "$python" -u -m mrcrawl.driver "$seeds/$lang.txt" --depth "$depth" --conf "$seeds/$lang.yaml" \
        --output "$out" --db "$root/$lang/db" "${args[@]}" >>"$log" 2>&1
    local status=$?
    echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) exit status $status" >>"$log"
    return $status
}

# A stopping signal sent to this script as well as the driver (a terminal's
# Ctrl-C, systemd's stop, timeout) is noted, and acted on when the driver has
# said where it stopped: the script's status is then 128 + the signal's number.
stopped=""
trap 'stopped=130' INT
trap 'stopped=143' TERM
trap 'stopped=129' HUP

failed=()
started=0
for lang in "${langs[@]}"; do
    [ -z "$stopped" ] || break
    started=$((started + 1))
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
    case $status in 129|130|143) stopped=$status ;; esac  # the driver's own, for a stopping signal
    if [ $status -eq 0 ]; then
        echo "$lang: ok ($dir/$day)"
        continue
    elif [ "$status" = "$stopped" ]; then
        echo "$lang: STOPPED with status $status, see $dir/$day.log; running $0 again resumes it; it ends:" >&2
    else
        echo "$lang: FAILED with status $status, see $dir/$day.log; it ends:" >&2
        failed+=("$lang")
    fi
    grep -v '^== ' "$dir/$day.log" | tail -n 3 | sed 's/^/    /' >&2
done

if [ -n "$stopped" ]; then
    not_started=("${langs[@]:started}")
    echo "stopped by a signal: exit status $stopped${not_started[*]:+; not started: ${not_started[*]}}${failed[*]:+; failed: ${failed[*]}}" >&2
    exit "$stopped"
fi

if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
