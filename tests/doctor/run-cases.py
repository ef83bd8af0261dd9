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
        """The shared volume as planned, connected and mounted read-write on spark-01; returns
        the storage section."""
        if not d.get("storage"):
            d["system"]["modules"]["nvme_tcp"] = "loaded"
            d["storage"] = {
                "hostnqn": "nqn.2014-08.org.nvmexpress:uuid:5e1f2d1c-0000-4000-8000-000000000001",
                "controllers": [],
                "volumes": []}
            add_volume("shared", STORAGE_NQN, STORAGE_UUID, "nvme1")
        return d["storage"]

    def add_volume(name, nqn, uuid, ctrl_name):
        """A volume at /mnt/NAME of subsystem nqn, by controller ctrl_name, as the first."""
        unit = f"sparkctl-nvme-mnt-{name}.service"
        d["storage"]["controllers"].append(
            {"name": ctrl_name, "transport": "tcp", "traddr": "192.168.177.1", "trsvcid": 4420,
             "src_addr": "192.168.177.11", "host_iface": None, "state": "live",
             "subsysnqn": nqn, "namespaces": [ctrl_name + "n1"]})
        v = {"file": f"/etc/sparkctl/storage.d/mnt-{name}.json",
             "conf": {"target": {"address": "192.168.177.1", "port": 4420}, "nqn": nqn,
                      "mount": f"/mnt/{name}", "fs": "ext4", "uuid": uuid,
                      "interface": "enp1s0f1np1", "unit": unit, "node": "spark-01",
                      "nodes": [{"name": "spark-01", "access": "rw"}, {"name": "spark-02", "access": "ro"}]},
             "conf_error": None,
             "uuid_device": f"/dev/{ctrl_name}n1",
             "mount": {"mounted": True, "device": f"/dev/{ctrl_name}n1", "fs": "ext4", "access": "rw",
                       "options": "rw,noatime"},
             "fstab": {"present": True, "spec": "UUID=" + uuid, "fs": "ext4",
                       "options": "_netdev,nofail,noatime,x-systemd.requires=" + unit},
             "target_reachable": None, "target_error": None}
        d["storage"]["volumes"].append(v)
        d["storage"]["volumes"].sort(key=lambda x: x["conf"]["mount"])
        return v

    def vol(i=0):
        """The planned volume at /mnt/shared (the only one unless models() added another)."""
        return next(v for v in storage()["volumes"] if v["conf"] and v["conf"]["mount"] == "/mnt/shared") \
            if i == 0 else storage()["volumes"][i]

    def models():
        """A second volume, at /mnt/models (controller nvme2), as the first; returns it."""
        storage()
        for v in d["storage"]["volumes"]:
            if v["conf"] and v["conf"]["mount"] == "/mnt/models":
                return v
        return add_volume("models", STORAGE_NQN_MODELS, STORAGE_UUID_MODELS, "nvme2")

    def ctrl(i=0):
        return storage()["controllers"][i]

    def slurm(**kw):
        s = dict(conf="/etc/slurm/slurm.conf", conf_sha256="a" * 64, controller="spark-01",
                 munge_socket=None, node_name=d["system"]["hostname"], node_listed=True,
                 real_memory_bytes=112795 << 20, user="alice", uid=1000, gid=1000,
                 user_source="passwd")
        s.update(kw)
        d["slurm"] = s
        return s

    return dict(d=d, dev=dev, port=port, net=net, pci=pci, gpu=gpu, setenv=setenv, conf=conf,
                storage=storage, ctrl=ctrl, vol=vol, models=models, slurm=slurm)


STORAGE_NQN = "nqn.2026-01.org.example:shared"
STORAGE_UUID = "0b3c6a52-8c0e-4b8a-9f5e-3d2f1a7c9e11"
STORAGE_NQN_MODELS = "nqn.2026-01.org.example:models"
STORAGE_UUID_MODELS = "7f1e2d3c-4b5a-4697-8877-665544332211"


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
