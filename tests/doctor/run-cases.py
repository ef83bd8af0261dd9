"""Run the planted-fault cases of tests/doctor/cases.txt through 'sparkctl doctor'.

For each case: the fixture's inventory (sparkctl topo --root ... --json), the
mutation applied, 'sparkctl doctor --from FILE --only CHECK --json', and the
statuses of that check's findings compared with the expected one.
"""
import json
import os
import subprocess
import sys
import tempfile

SPARKCTL = os.environ["SPARKCTL"]
SRCDIR = os.environ["SRCDIR"]
ORDER = {"PASS": 0, "SKIP": 0, "WARN": 1, "FAIL": 2}


def inventory(fixture, cache={}):
    """A fresh copy of the fixture's inventory (a mutation changes only its own)."""
    if fixture not in cache:
        out = subprocess.run([SPARKCTL, "topo", "--root", os.path.join(SRCDIR, "tests/fixtures", fixture),
                              "--json"], check=True, capture_output=True, text=True).stdout
        cache[fixture] = out
    return json.loads(cache[fixture])


def helpers(d):
    def dev(name):
        return next(x for x in d["rdma_devices"] if x["name"] == name)

    def port(name, num=1):
        return next(p for p in dev(name)["ports"] if p["port"] == num)

    def net(name):
        return next(n for n in d["netdevs"] if n["name"] == name)

    def pci(addr):
        return next(p for p in d["pci_functions"] if p["address"] == addr)

    def gpu(i=0):
        return d["gpu"]["devices"][i]

    def setenv(key, value):
        d["system"]["environment"][key] = value

    def conf(path, key, value):
        d["system"]["nccl_conf"].append({"file": path, "key": key, "value": value})

    def storage():
        """A shared volume as planned, connected and mounted read-write on spark-01; returns it."""
        if not d.get("storage"):
            d["system"]["modules"]["nvme_tcp"] = "loaded"
            d["storage"] = {
                "conf": {"target": {"address": "192.168.177.1", "port": 4420}, "nqn": STORAGE_NQN,
                         "mount": "/mnt/shared", "fs": "ext4", "uuid": STORAGE_UUID,
                         "interface": "enp1s0f1np1", "unit": "sparkctl-nvme-mnt-shared.service",
                         "node": "spark-01",
                         "nodes": [{"name": "spark-01", "access": "rw"}, {"name": "spark-02", "access": "ro"}]},
                "conf_error": None,
                "hostnqn": "nqn.2014-08.org.nvmexpress:uuid:5e1f2d1c-0000-4000-8000-000000000001",
                "controllers": [{"name": "nvme1", "transport": "tcp", "traddr": "192.168.177.1", "trsvcid": 4420,
                                 "src_addr": "192.168.177.11", "host_iface": None, "state": "live",
                                 "subsysnqn": STORAGE_NQN, "namespaces": ["nvme1n1"]}],
                "uuid_device": "/dev/nvme1n1",
                "mount": {"mounted": True, "device": "/dev/nvme1n1", "fs": "ext4", "access": "rw",
                          "options": "rw,noatime"},
                "fstab": {"present": True, "spec": "UUID=" + STORAGE_UUID, "fs": "ext4",
                          "options": "_netdev,nofail,noatime,x-systemd.requires=sparkctl-nvme-mnt-shared.service"},
                "target_reachable": None, "target_error": None}
        return d["storage"]

    def ctrl(i=0):
        return storage()["controllers"][i]

    return dict(d=d, dev=dev, port=port, net=net, pci=pci, gpu=gpu, setenv=setenv, conf=conf,
                storage=storage, ctrl=ctrl)


STORAGE_NQN = "nqn.2026-01.org.example:shared"
STORAGE_UUID = "0b3c6a52-8c0e-4b8a-9f5e-3d2f1a7c9e11"


def main():
    failures = 0
    cases = 0
    tmp = tempfile.mkdtemp()
    with open(os.path.join(SRCDIR, "tests/doctor/cases.txt")) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            spec, _, want_text = line.partition(" | ")
            check, fixture, want, mutation = spec.split(None, 3)
            extra = []
            copies = 1
            if "@nodes=" in fixture:
                fixture, nodes = fixture.split("@nodes=")
                extra = ["--nodes", nodes]
            every = False
            if "@copies=" in fixture:
                fixture, copies = fixture.split("@copies=")
                copies = int(copies)
            if "@same=" in fixture:
                fixture, copies = fixture.split("@same=")
                copies = int(copies)
                every = True
            # @copies=N: N nodes, the first N-1 the fixture as it is, the last one mutated.
            # @same=N: N nodes, each mutated (the mutation sees its index as i).
            froms = []
            for i in range(copies):
                d = inventory(fixture)
                if mutation.strip() != "-" and (every or i == copies - 1):
                    exec(mutation, dict(helpers(d), i=i))
                path = os.path.join(tmp, f"node{i}.json")
                with open(path, "w") as out:
                    json.dump(d, out)
                froms += ["--from", path]
            r = subprocess.run([SPARKCTL, "doctor"] + froms + ["--only", check, "--json"] + extra,
                               capture_output=True, text=True)
            cases += 1
            where = f"cases.txt:{lineno} {check} on {fixture}"
            if r.returncode not in (0, 4):
                print(f"FAIL {where}: exit {r.returncode}: {r.stderr.strip()}", file=sys.stderr)
                failures += 1
                continue
            report = json.loads(r.stdout)
            found = [x for x in report["findings"] if x["check"] == check]
            statuses = [x["status"] for x in found]
            if not found:
                print(f"FAIL {where}: no finding", file=sys.stderr)
                failures += 1
                continue
            worst = max(statuses, key=lambda s: ORDER[s])
            ok = want in statuses and ORDER[worst] <= ORDER[want]
            if want == "SKIP":
                ok = set(statuses) == {"SKIP"}
            messages = " / ".join(f'{x["status"]} {x["message"]}' for x in found)
            if ok and want_text and not any(want_text in x["message"] for x in found if x["status"] == want):
                ok = False
                messages += f"  (wanted text: {want_text!r})"
            if ok and want in ("FAIL", "WARN"):
                ok = all(x["fix"] for x in found if x["status"] == want)
                if not ok:
                    messages += "  (a finding without a fix)"
            want_exit = 4 if worst == "FAIL" else 0
            if ok and r.returncode != want_exit:
                ok = False
                messages += f"  (exit {r.returncode}, expected {want_exit})"
            if not ok:
                print(f"FAIL {where}: expected {want}, got {messages}", file=sys.stderr)
                failures += 1
    print(f"{cases} cases, {failures} failed")
    sys.exit(1 if failures else 0)


main()
