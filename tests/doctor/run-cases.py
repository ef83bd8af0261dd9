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

    return dict(d=d, dev=dev, port=port, net=net, pci=pci, gpu=gpu, setenv=setenv, conf=conf)


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
            if "@copies=" in fixture:
                fixture, copies = fixture.split("@copies=")
                copies = int(copies)
            d = inventory(fixture)
            if mutation.strip() != "-":
                exec(mutation, helpers(d))
            # @copies=N: N nodes, the first N-1 the fixture as it is, the last one mutated.
            froms = []
            for i in range(copies):
                path = os.path.join(tmp, f"node{i}.json")
                with open(path, "w") as out:
                    json.dump(d if i == copies - 1 else inventory(fixture), out)
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
