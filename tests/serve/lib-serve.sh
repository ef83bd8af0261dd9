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

# squat NODE PORT: a listener of the test's own on the node's PORT (a
# python3 process, its pid in $squatter), there when this returns;
# unsquat ends it.
squat() {
  ip netns exec "$(cluster_ns "$1")" /usr/bin/python3 -c 'import socket, sys, time
s = socket.create_server(("0.0.0.0", int(sys.argv[1]))); time.sleep(600)' "$2" &
  squatter=$!
  at_exit "kill -KILL $squatter 2> /dev/null"
  _squat_node=$1 _squat_port=$2
  wait_until 30 "the squatter on $1:$2" _squat_listens
}
_squat_listens() { ip netns exec "$(cluster_ns "$_squat_node")" ss -Hltn | grep -q ":$_squat_port "; }
unsquat() {
  kill -KILL "$squatter"
  wait "$squatter" 2> /dev/null || true
}

# job_left NODE: what runs in the node's namespace but its sshd.
job_left() { cluster_procs "$1"; }
nothing_left() { [ -z "$(job_left node0)$(job_left node1)" ]; }
# no_survivors WHAT: nothing of serve left on node0 or node1 within 20 s,
# else what is left is listed and the test fails.
no_survivors() {
  local i
  for ((i = 0; i < 100; i++)); do
    nothing_left && return 0
    sleep 0.2
  done
  job_left node0 >&2
  job_left node1 >&2
  fail "processes survived $1"
}
# api PATH [PORT]: the head's answer on its API (port 8000 unless given),
# through the management network.
api() {
  cluster_client /usr/bin/python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://%s:%s%s" % (sys.argv[1], sys.argv[3], sys.argv[2]), timeout=2).read().decode())' \
    "$(cluster_lan_ip node0)" "$1" "${2:-8000}"
}
