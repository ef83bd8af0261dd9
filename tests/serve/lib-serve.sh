# tests/serve/lib-serve.sh - sourced by the serve tests, after
# tests/cluster/cluster.sh.

# set_nccl NODE VERSION BUILD_ID: the node's own NCCL as its inventory will
# say it (nccl.version, nccl.build_id in the host facts of its tree); an
# empty BUILD_ID: not known.
set_nccl() {
  /usr/bin/python3 - "$(cluster_tree "$1")/.sparkctl/host.json" "$2" "$3" << 'PY'
import json, sys
path, version, build = sys.argv[1:]
d = json.load(open(path))
d["nccl"].update(version=version, build_id=build or None)
json.dump(d, open(path, "w"))
PY
}
