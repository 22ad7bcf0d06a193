#!/bin/sh
# Throughput of srep against `sed -E` with equivalent rules, on a generated
# 100 MB log, in the same run. Needs python3 and hyperfine; run from the
# workspace root after `cargo build --release -p stream-replace-cli`.
#
#   crates/stream-replace-cli/scripts/vs_sed.sh [SIZE_MB]
set -eu
here=$(dirname "$0")
size=${1:-100}
srep=${SREP:-target/release/srep}
work=${TMPDIR:-/tmp}/srep-vs-sed
mkdir -p "$work"
log=$work/app-$size.log
[ -f "$log" ] || python3 "$here/gen_log.py" "$size" > "$log"

# The same five rules. The values cannot overlap and no replacement can
# match a rule, so sed's one-rule-at-a-time passes give srep's one-pass
# result: the outputs are compared below.
cat > "$work/rules.json" <<'RULES'
[
  {"pattern": "[A-Za-z0-9._+-]+@[A-Za-z0-9-]+\\.[A-Za-z]+", "replacement": "[EMAIL]"},
  {"pattern": "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}", "replacement": "[IP]"},
  {"pattern": "sk-[A-Za-z0-9]{20}", "replacement": "[KEY]"},
  {"pattern": "[0-9]{3}-[0-9]{2}-[0-9]{4}", "replacement": "[SSN]"},
  {"pattern": "password=[^ ]+", "replacement": "password=***"}
]
RULES
cat > "$work/rules.sed" <<'RULES'
s/[A-Za-z0-9._+-]+@[A-Za-z0-9-]+\.[A-Za-z]+/[EMAIL]/g
s/[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}/[IP]/g
s/sk-[A-Za-z0-9]{20}/[KEY]/g
s/[0-9]{3}-[0-9]{2}-[0-9]{4}/[SSN]/g
s/password=[^ ]+/password=***/g
RULES

ls -l "$log"
"$srep" -f "$work/rules.json" < "$log" > "$work/srep.out"
LC_ALL=C sed -E -f "$work/rules.sed" < "$log" > "$work/sed.out"
cmp "$work/srep.out" "$work/sed.out"
echo "outputs identical: $(wc -c < "$work/srep.out") bytes, $(grep -c '\[EMAIL\]' "$work/srep.out") lines with [EMAIL]"

hyperfine --warmup 1 --runs "${RUNS:-5}" \
  --export-markdown "$work/result.md" \
  -n srep "$srep -f $work/rules.json < $log > /dev/null" \
  -n "sed -E (LC_ALL=C)" "LC_ALL=C sed -E -f $work/rules.sed < $log > /dev/null" \
  -n "sed -E (C.UTF-8)" "LC_ALL=C.UTF-8 sed -E -f $work/rules.sed < $log > /dev/null"
cat "$work/result.md"
