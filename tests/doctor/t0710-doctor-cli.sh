#!/usr/bin/env bash
# 'sparkctl doctor': output, exit statuses, --json, --only/--skip, --list and docs/checks.md.
. "$SRCDIR/tests/lib.sh"
cd "$SRCDIR"
F=tests/fixtures

# docs/checks.md is generated from the table.
"$SPARKCTL" doctor --list --markdown > "$TMP/checks.md"
same docs/checks.md "$TMP/checks.md"

# --help: one block of options; the hostfile in the form the host list reads.
expect 0 "$SPARKCTL" doctor --help
[ "$(grep -c '^options:' "$TMP/out")" = 1 ] || fail "doctor --help has $(grep -c '^options:' "$TMP/out") 'options:' blocks"
contains "$TMP/out" "'host slots=N'"

# --list as text (id, scope, title) and, with --json, as JSON with the same checks.
expect 0 "$SPARKCTL" doctor --list
cp "$TMP/out" "$TMP/list.txt"
grep -qE '^fabric\.twins +node +both twins' "$TMP/list.txt" || fail "--list: no fabric.twins line"
expect 0 "$SPARKCTL" doctor --list --json
python3 - "$TMP/out" "$TMP/list.txt" <<'PY' || fail "doctor --list --json is not the list"
import json, sys
d = json.load(open(sys.argv[1]))
text = [l.split()[:2] for l in open(sys.argv[2]).read().splitlines()]
assert d["schema_version"] == 1, d.get("schema_version")
assert [[c["check"], c["scope"]] for c in d["checks"]] == text, "the checks differ from the text"
assert {c["severity"] for c in d["checks"]} <= {"FAIL", "WARN"}, "severities"
assert all(c["title"] for c in d["checks"]), "a check without a title"
PY
expect 2 "$SPARKCTL" doctor --list --json --markdown

# A healthy node: exit 0.  spark-2cable has unlimited memlock; its only warning is the socket buffers.
expect 0 "$SPARKCTL" doctor --root $F/spark-2cable --nodes 2
contains "$TMP/out" "WARN  net.buffers"
lacks "$TMP/out" "FAIL"
tail -1 "$TMP/out" | grep -q "^1 node: 0 failed, 1 warning, " || fail "summary line: $(tail -1 "$TMP/out")"
# Failures first, each with its fix.
expect 4 "$SPARKCTL" doctor --root $F/spark-1cable
first=$(grep -m1 -E '^  (FAIL|WARN|PASS|SKIP)' "$TMP/out")
case $first in *FAIL*) ;; *) fail "failures are not first: $first" ;; esac
grep -A1 "FAIL  limits.memlock" "$TMP/out" | grep -q "fix: add '\* soft memlock unlimited'" || fail "no fix under the failure"
# -q leaves out PASS and SKIP.
expect 4 "$SPARKCTL" doctor --root $F/spark-1cable -q
lacks "$TMP/out" "PASS"
# No colour when not a terminal.
lacks "$TMP/out" $'\033['

# --only/--skip by id and by group.
expect 0 "$SPARKCTL" doctor --root $F/spark-1cable --only fabric
grep -E '^  [A-Z]{4}  ' "$TMP/out" | grep -v '  fabric\.' && fail "--only fabric ran other checks"
expect 0 "$SPARKCTL" doctor --root $F/spark-1cable --skip limits.memlock,net
lacks "$TMP/out" "limits.memlock"
lacks "$TMP/out" "net.mtu"
expect 2 "$SPARKCTL" doctor --only fabric.twin
contains "$TMP/err" "no check 'fabric.twin'; did you mean 'fabric.twins'?"

# JSON report.
expect 4 "$SPARKCTL" doctor --root $F/spark-1cable --json
python3 - "$TMP/out" <<'PY' || fail "the JSON report is not as documented"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1
assert d["nodes"] == [{"host": "spark-01", "name": "spark-01", "inspected": True, "error": None}], d["nodes"]
f = [x for x in d["findings"] if x["check"] == "limits.memlock"][0]
assert f["status"] == "FAIL" and f["fix"] and f["node"] == "spark-01", f
assert set(d["summary"]) == {"nodes", "uninspected", "fail", "warn", "pass", "skip"}
assert d["summary"]["fail"] == 1 and d["summary"]["nodes"] == 1
assert all(set(x) == {"check", "node", "status", "message", "fix", "evidence"} for x in d["findings"])
PY

# Several inventories: local checks on each, then the cluster checks (no probes offline).
"$SPARKCTL" topo --root $F/spark-1cable --json > "$TMP/a.json"
python3 - "$TMP/a.json" "$TMP/b.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["system"]["hostname"] = "spark-02"
for n in d["netdevs"]:
    for a in n["ipv4"]:
        if a["address"].startswith("192.168.17"):
            a["address"] = a["address"].rsplit(".", 1)[0] + ".12"
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "$SPARKCTL" doctor --from "$TMP/a.json" --from "$TMP/b.json" --only cluster
contains "$TMP/out" "PASS  cluster.hca_pairing  the HCA lists of 2 nodes pair (2 HCAs each)"
contains "$TMP/out" "PASS  cluster.hostnames"
contains "$TMP/out" "SKIP  cluster.ping"
contains "$TMP/out" "SKIP  cluster.clock"
# Planted cluster faults: the same name twice (cluster.hostnames), different plans, an MTU mismatch, NCCL versions.
expect 4 "$SPARKCTL" doctor --from "$TMP/a.json" --from "$TMP/a.json" --only cluster.hostnames
contains "$TMP/out" "are both named spark-01"
"$SPARKCTL" topo --root $F/spark-2cable --json > "$TMP/c.json"
expect 4 "$SPARKCTL" doctor --from "$TMP/a.json" --from "$TMP/c.json" --only cluster.plan
contains "$TMP/out" "has 1 cabled port (2 rails, RoCE) but"
python3 - "$TMP/b.json" "$TMP/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
next(n for n in d["netdevs"] if n["name"] == "enP2p1s0f1np1")["mtu"] = 1500
d["system"]["nccl"]["version"] = "2.28.3"
json.dump(d, open(sys.argv[2], "w"))
PY
expect 4 "$SPARKCTL" doctor --from "$TMP/a.json" --from "$TMP/d.json" --only cluster.mtu,cluster.versions
contains "$TMP/out" "spark-01 enP2p1s0f1np1 has MTU 9000 but spark-02 enP2p1s0f1np1 has 1500"
contains "$TMP/out" "the NCCL version differs: 2.28.9 on spark-01, 2.28.3 on spark-02"
# Different ports cabled on the two nodes: the HCA lists would not pair.
"$SPARKCTL" topo --root $F/spark-ofed --json > "$TMP/e.json"
expect 4 "$SPARKCTL" doctor --from "$TMP/a.json" --from "$TMP/e.json" --only cluster.hca_pairing
contains "$TMP/out" "FAIL  cluster.hca_pairing  HCA 1 is rocep1s0f1 (port p1 half 0) on spark-01 but mlx5_0 (port p0 half 0) on spark-dgx-1"
# An inventory that cannot be read: that node is not inspected, exit 3.
expect 1 "$SPARKCTL" doctor --from "$TMP/a.json" --from "$TMP/missing.json"
contains "$TMP/out" "not inspected: cannot open"

# Usage errors.
expect 2 "$SPARKCTL" doctor -H a,b --from "$TMP/a.json"
expect 2 "$SPARKCTL" doctor -H -evil
contains "$TMP/err" "-evil"
expect 2 "$SPARKCTL" doctor -H a,a
contains "$TMP/err" "a"
printf 'node1\nnode1 slots=2\n' > "$TMP/hosts"
expect 2 "$SPARKCTL" doctor --hostfile "$TMP/hosts"
contains "$TMP/err" "$TMP/hosts:2:"
# Each hostfile form reads; a malformed line is one error naming the file and line.
printf 'node1 slots=2 max_slots=4\nnode2 Slots=2\n' > "$TMP/hosts"
expect 2 "$SPARKCTL" doctor --hostfile "$TMP/hosts"
contains "$TMP/err" "$TMP/hosts:2: unknown field 'Slots=2' (expected slots=N or max_slots=N)"
printf 'node1:2\nnode2:0\n' > "$TMP/hosts"
expect 2 "$SPARKCTL" status --hostfile "$TMP/hosts"
contains "$TMP/err" "$TMP/hosts:2: the count after ':' must be a number from 1 to 1024, not '0'"
expect 2 "$SPARKCTL" doctor --hostfile "$TMP/nohosts"
contains "$TMP/err" "cannot read"

# Inside a Slurm allocation, doctor without -H checks the allocation's nodes: a
# nodelist that is not one is the command line's error, named.
expect 2 env SLURM_JOB_ID=7 SLURM_JOB_NODELIST='spark-[02-01]' "$SPARKCTL" doctor
contains "$TMP/err" "(in SLURM_JOB_NODELIST)"
# --local stays this node (a tree of one: --root).
run env SLURM_JOB_ID=7 SLURM_JOB_NODELIST='spark-[02-01]' "$SPARKCTL" doctor --root "$SRCDIR/tests/fixtures/spark-2cable"
[ "$status" != 2 ] || fail "doctor --root read SLURM_JOB_NODELIST: $(cat "$TMP/err")"
