#!/bin/sh
# srep against `sed -E` with the same rules on a generated log, in the same
# run: first that the outputs are byte-identical, then the times. The log
# (gen_log.py, deterministic) has CRLF lines, long lines, trailing blanks and
# no newline at the end; the rules are anchored to line ends (^, $) and use
# bracket and POSIX classes, which srep, like sed, keeps within a line.
# Needs python3, GNU sed and hyperfine; run from the workspace root after
# `cargo build --release -p stream-replace-cli`.
#
#   crates/stream-replace-cli/scripts/vs_sed.sh [SIZE_MB]    # default 20
#
# RUNS (default 5) sets hyperfine's runs, RUNS=0 checks the outputs only
# (no hyperfine needed); SREP names the binary.
set -eu
here=$(dirname "$0")
size=${1:-20}
srep=${SREP:-${CARGO_TARGET_DIR:-target}/release/srep}
work=${TMPDIR:-/tmp}/srep-vs-sed
mkdir -p "$work"
log=$work/app-lines-$size.log
[ -f "$log" ] || python3 "$here/gen_log.py" "$size" > "$log"

# The same nine rules, in the same order. sed runs them one after the other
# on each line, srep in one pass; they give the same text because no
# replacement can be matched by a later rule and, where two rules can match
# in one line, the one whose match starts first also comes first in sed or
# takes the other's text with it. As in sed, `\r` is part of a line: on a
# CRLF line `$` is after it (so `trace=...$` and `[[:blank:]]+$` do not
# match there), and `.*` or a final `[^ ]+` take it.
cat > "$work/rules.json" <<'RULES'
[
  {"pattern": "^Authorization: .*", "replacement": "Authorization: ***"},
  {"pattern": "^([0-9]{4}-[0-9]{2}-[0-9]{2})T[0-9:.]+Z", "replacement": "${1}T[TIME]"},
  {"pattern": "trace=[0-9a-f]+$", "replacement": "trace=[TRACE]"},
  {"pattern": "[[:blank:]]+$", "replacement": ""},
  {"pattern": "password=[^ ]+", "replacement": "password=***"},
  {"pattern": "[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+", "replacement": "[EMAIL]"},
  {"pattern": "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}", "replacement": "[IP]"},
  {"pattern": "sk-[A-Za-z0-9]{20}", "replacement": "[KEY]"},
  {"pattern": "[[:digit:]]{3}-[[:digit:]]{2}-[[:digit:]]{4}", "replacement": "[SSN]"}
]
RULES
cat > "$work/rules.sed" <<'RULES'
s/^Authorization: .*/Authorization: ***/
s/^([0-9]{4}-[0-9]{2}-[0-9]{2})T[0-9:.]+Z/\1T[TIME]/
s/trace=[0-9a-f]+$/trace=[TRACE]/
s/[[:blank:]]+$//
s/password=[^ ]+/password=***/g
s/[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+/[EMAIL]/g
s/[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}/[IP]/g
s/sk-[A-Za-z0-9]{20}/[KEY]/g
s/[[:digit:]]{3}-[[:digit:]]{2}-[[:digit:]]{4}/[SSN]/g
RULES

count() { grep -c "$1" "$2" || true; }
echo "input: $(wc -c < "$log") bytes, $(wc -l < "$log") newlines (the last line has none)," \
  "$(count "$(printf '\r$')" "$log") CRLF lines," \
  "$(awk 'length($0) > 40000' "$log" | wc -l) lines over 40 kB," \
  "$(count '^Authorization: ' "$log") Authorization lines"

"$srep" -f "$work/rules.json" < "$log" > "$work/srep.out"
LC_ALL=C sed -E -f "$work/rules.sed" < "$log" > "$work/sed-c.out"
LC_ALL=C.UTF-8 sed -E -f "$work/rules.sed" < "$log" > "$work/sed-utf8.out"
cmp "$work/srep.out" "$work/sed-c.out"
cmp "$work/srep.out" "$work/sed-utf8.out"
# Counts that show the line rules fired: each would be 0 if `^`, `$` or
# `[^ ]` ran across lines or missed a line end.
echo "outputs identical: $(wc -c < "$work/srep.out") bytes;" \
  "$(count '^Authorization: \*\*\*$' "$work/srep.out") Authorization lines masked," \
  "$(count 'T\[TIME\]' "$work/srep.out") timestamps," \
  "$(count 'trace=\[TRACE\]$' "$work/srep.out") trace ids," \
  "$(count 'password=\*\*\*$' "$work/srep.out") passwords ending a line," \
  "$(count "$(printf '\r$')" "$work/srep.out") CRLF lines kept"
# Rules that can match empty text, one at a time (sed's one-rule-after-
# another and srep's one pass only agree on each alone): nothing may match
# after the last line, and empty matches must fall where sed's do.
# Also on the log with a final newline, after which sed sees no line.
cat "$log" > "$work/app-nl.log" && echo >> "$work/app-nl.log"
for input in "$log" "$work/app-nl.log"; do
  for rule in '^=> ' '$=;' '[[:blank:]]*$=|' 'x*=-' '\b=|'; do
    "$srep" -e "$rule" < "$input" > "$work/srep-one.out"
    LC_ALL=C sed -E "s/${rule%=*}/${rule##*=}/g" < "$input" > "$work/sed-one.out"
    cmp "$work/srep-one.out" "$work/sed-one.out"
  done
done
echo "rules matching empty text, each alone, with and without a final newline: identical to sed"
# The same rules over the whole input (-z) do not give sed's output: `^`
# matches once, and `password=[^ ]+` runs into the next line.
if "$srep" -z -f "$work/rules.json" < "$log" | cmp -s - "$work/sed-c.out"; then
  echo "with -z: identical to sed (unexpected)"
else
  echo "with -z: differs from sed, as expected"
fi

[ "${RUNS:-5}" = 0 ] && exit 0
hyperfine --warmup 1 --runs "${RUNS:-5}" \
  --export-markdown "$work/result.md" \
  -n srep "$srep -f $work/rules.json < $log > /dev/null" \
  -n "sed -E (LC_ALL=C)" "LC_ALL=C sed -E -f $work/rules.sed < $log > /dev/null" \
  -n "sed -E (C.UTF-8)" "LC_ALL=C.UTF-8 sed -E -f $work/rules.sed < $log > /dev/null"
cat "$work/result.md"
