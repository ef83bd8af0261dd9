#!/usr/bin/env bash
# The NVMe/TCP storage cycle, end to end, in one boot of the storage VM
# (tests/storage/vm.sh: Debian's kernel under QEMU, with nvmet, nvme-tcp,
# null_blk and configfs; target and host in the same VM over loopback).
#
# With sparkctl's storage verbs (tests/storage/cycle.sh): target --apply,
# connect, mkfs.ext4 and plan --write, mount by UUID, check (all pass),
# bench, the faults check must find (the path on another interface than the
# plan's, nofail gone from fstab: exit 4), disconnect, target --remove.
# Until sparkctl has them ('storage plan --help' fails), the same cycle with
# nvme-cli and configfs alone (tests/storage/cycle-raw.sh) proves the rig.
# Either way: the exit statuses, the path "live" from 127.0.0.1, data
# written through the mount read back after a new connection, the JSON the
# commands printed, and nothing left of the target.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/storage/vm.sh"
vm_require

NQN_RAW=nqn.2026-11.io.sparkctl:cycle
vm_build
vm_add "$SRCDIR/tests/storage/raw.sh" /job/raw.sh
vm_add "$SRCDIR/tests/storage/cycle.sh" /job/cycle.sh

if "$SPARKCTL" storage plan --help > /dev/null 2>&1; then
  cycle=verbs
  job=$SRCDIR/tests/storage/cycle.sh
else
  cycle=raw
  job=$SRCDIR/tests/storage/cycle-raw.sh
fi
note "the $cycle cycle"
vm_run "$job" 280
[ "$VM_STATUS" = 0 ] || vm_job_failed "the $cycle cycle failed in the VM"

# json_check FILE PYTHON: PYTHON (an expression over d, the document, and
# the helpers below) must be true.
json_check() {
  "$PYTHONBIN" - "$@" <<'PY' || fail "$1: $2 (see above)"
import json, sys
path, expr = sys.argv[1], sys.argv[2]
d = json.load(open(path))
def walk(o):
    """Every dict anywhere in o."""
    if isinstance(o, dict):
        yield o
        for v in o.values():
            yield from walk(v)
    elif isinstance(o, list):
        for v in o:
            yield from walk(v)
def statuses(check):
    """The status of each finding of CHECK (doctor style: check/id, status)."""
    return [str(x.get("status")).upper() for x in walk(d)
            if check in (x.get("check"), x.get("id")) and "status" in x]
def statuses_all():
    """The status of every finding."""
    return [str(x.get("status")).upper() for x in walk(d) if "check" in x and "status" in x]
ok = eval(expr)
if not ok:
    print(json.dumps(d, indent=1)[:4000], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
PYTHONBIN=/usr/bin/python3

# What both cycles show.
[ "$(cat "$VM_OUT/version")" = "$("$SPARKCTL" --version)" ] || fail "the VM ran another sparkctl than $SPARKCTL"
[ "$(cat "$VM_OUT/data-written.sha256")" = "$(cat "$VM_OUT/data-read.sha256")" ] \
  || fail "the data read back after a new connection differs from what was written"
grep -q '^[0-9a-f]\{64\}' "$VM_OUT/data-read.sha256" || fail "no checksum of the data read back"
uuid=$(cat "$VM_OUT/uuid")
[ -n "$uuid" ] || fail "no file system UUID"
contains "$VM_OUT/mounts" " /mnt/shared ext4 "
[ ! -s "$VM_OUT/configfs-left.txt" ] || {
  cat "$VM_OUT/configfs-left.txt" >&2
  fail "the target's subsystem or port is still in configfs"
}

if [ $cycle = raw ]; then
  json_check "$VM_OUT/discover.json" \
    "any(r['subnqn'] == '$NQN_RAW' and r['traddr'] == '127.0.0.1' and r['trsvcid'] == '4420' for r in d['records'])"
  json_check "$VM_OUT/list-subsys.json" \
    "[(p['Transport'], p['State'], 'src_addr=127.0.0.1' in p['Address']) for s in d[0]['Subsystems'] if s['NQN'] == '$NQN_RAW' for p in s['Paths']] == [('tcp', 'live', True)]"
  json_check "$VM_OUT/fio.json" \
    "d['jobs'][0]['error'] == 0 and d['jobs'][0]['read']['io_bytes'] > 0 and d['jobs'][0]['read']['bw_bytes'] > 0"
  contains "$VM_OUT/disconnect.txt" "NQN:$NQN_RAW disconnected 1 controller(s)"
else
  nqn=nqn.2026-11.io.sparkctl:cycle
  # No sanitizer spoke, whatever the exit statuses were.
  if grep -l 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' "$VM_OUT"/*.err; then
    fail "a sanitizer reported in the VM"
  fi
  # Each JSON output against its schema, where the project has one.
  for pair in connect:storage-connect bench:storage-bench check:doctor check-iface:doctor \
    check-nofail:doctor; do
    [ -f "$SRCDIR/docs/schemas/${pair#*:}.schema.json" ] || continue
    "$PYTHONBIN" "$SRCDIR/tests/validate-json.py" "${pair#*:}" "$VM_OUT/${pair%%:*}.out" \
      || fail "storage ${pair%%:*} --json does not follow docs/schemas/${pair#*:}.schema.json"
  done
  json_check "$VM_OUT/connect.out" \
    "d['schema_version'] >= 1 and d['nqn'] == '$nqn' and [(c['state'], c['transport'], c['src_addr']) for c in d['controllers']] == [('live', 'tcp', '127.0.0.1')]"
  # connect names the namespace's block device: the one mkfs was run on.
  json_check "$VM_OUT/connect.out" "d['controllers'][0]['devices'] == ['$(cat "$VM_OUT/dev")']"
  # The real nvme-cli's answers to a port where nothing listens and to an NQN not offered.
  contains "$VM_OUT/connect-down.err" "no NVMe/TCP target answers at 127.0.0.1:4421"
  contains "$VM_OUT/connect-wrong.err" "does not offer $nqn-wrong; it offers: $nqn"
  grep -q "^UUID=$uuid /mnt/shared ext4 _netdev,nofail,noatime,x-systemd.requires=sparkctl-nvme-mnt-shared.service 0 0\$" \
    "$VM_OUT/fstab" || { cat "$VM_OUT/fstab" >&2; fail "plan --write wrote no fstab line for UUID=$uuid"; }
  # All pass: path live, on the route's interface, mounted, nofail there.
  json_check "$VM_OUT/check.out" \
    "'FAIL' not in statuses_all() and all(statuses(c) == ['PASS'] for c in ('storage.conf', 'storage.module', 'storage.hostnqn', 'storage.path_live', 'storage.mounted', 'storage.nofail'))"
  # The path leaves from 127.0.0.1 (lo), not dummy0 as planned.
  json_check "$VM_OUT/check-iface.out" \
    "'FAIL' in statuses('storage.path_iface') and statuses('storage.path_live') == ['PASS'] and statuses('storage.nofail') == ['PASS']"
  json_check "$VM_OUT/check-nofail.out" \
    "statuses('storage.nofail') == ['FAIL'] and 'FAIL' not in statuses('storage.path_iface') and statuses('storage.path_live') == ['PASS']"
  json_check "$VM_OUT/check-restored.out" "'FAIL' not in statuses_all()"
  json_check "$VM_OUT/bench.out" \
    "d['schema_version'] >= 1 and [p['path'] for p in d['paths']] == ['/mnt/shared'] and d['paths'][0]['read_gbytes_per_second'] > 0 and d['paths'][0]['write_gbytes_per_second'] > 0"
fi
note "one VM cycle ($cycle; boot, cycle, power-off) took ${VM_SECONDS}s"
