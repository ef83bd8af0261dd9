#!/usr/bin/env bash
# sparkctl serve vllm (backend mp) and sglang started across two namespace
# nodes with real sshd, through launch's machinery, with stand-in engines on
# each node (tests/serve/standin.py: the engines' flags, their rendezvous at
# the head, /health and /v1/models): each node's part gets its plan's flags
# and environment, the head answers on its API, the output is prefixed by
# node; a worker that dies ends every part, as does SIGINT to serve -
# nothing left on any node.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
. "$SRCDIR/tests/serve/lib-serve.sh"
cluster_require
command -v env > /dev/null && env --default-signal=INT true 2> /dev/null ||
  skip "env --default-signal is needed (coreutils 8.31 or later)"
cluster_up 2
export TMPDIR=$TMP
hosts=$(cluster_hosts)

# The stand-in as 'vllm' on each node's PATH, and as python3 for '-m
# sglang.launch_server' (any other python3 is the real one), recording into
# $TMP/standin.
mkdir "$TMP/standin"
echo 3 > "$TMP/standin/health-503"
for n in node0 node1; do
  printf '#!/bin/sh\nSERVE_STANDIN_DIR=%s exec /usr/bin/python3 %s "$@"\n' \
    "$TMP/standin" "$SRCDIR/tests/serve/standin.py" > "$CLUSTER_DIR/$n/bin/vllm"
  cat > "$CLUSTER_DIR/$n/bin/python3" << EOF2
#!/bin/sh
if [ "\$1 \$2" = "-m sglang.launch_server" ]; then
  shift 2
  SERVE_STANDIN_DIR=$TMP/standin exec /usr/bin/python3 $SRCDIR/tests/serve/standin.py sglang "\$@"
fi
exec /usr/bin/python3 "\$@"
EOF2
  # rpc-server and ray slow to come up: llama-server must not start before
  # the rpc-servers listen, nor vLLM on Ray before the workers' raylets joined.
  for prog in rpc-server llama-server ray; do
    printf '#!/bin/sh\n%sSERVE_STANDIN_DIR=%s exec /usr/bin/python3 %s %s "$@"\n' \
      "$([ $prog != llama-server ] && echo 'sleep 2; ')" \
      "$TMP/standin" "$SRCDIR/tests/serve/standin.py" $prog > "$CLUSTER_DIR/$n/bin/$prog"
  done
  chmod +x "$CLUSTER_DIR/$n/bin/vllm" "$CLUSTER_DIR/$n/bin/python3" \
    "$CLUSTER_DIR/$n/bin/rpc-server" "$CLUSTER_DIR/$n/bin/llama-server" "$CLUSTER_DIR/$n/bin/ray"
done

ready() { api /health > /dev/null && [ -f "$TMP/standin/node-1.json" ]; }

# The nodes' sparkctl, through which node1's part reports late: its part is
# slow to come up, and the head's engine must wait for it.
cat > "$TMP/sparkctl-slow" << EOF2
#!/bin/sh
case " \$* " in *" --report-to "*) sleep 3; : > $TMP/standin/worker-reporting ;; esac
exec $SPARKCTL "\$@"
EOF2
chmod +x "$TMP/sparkctl-slow"

# serve runs on the client's side of the management network (as
# cluster_client, but a simple command: $! is serve itself), from where it
# reaches the head's API as a user would.
client=(nsenter --net="/run/netns/$CLUSTER_HUB" --)
# ---- started: the plan's flags and environment on each node; the API answers
# Each start empties its output files first: serve's own redirection, in
# the background, may come after the first look for its ready line.
: > "$TMP/out"; : > "$TMP/err"
"${client[@]}" env --default-signal=INT "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$hosts" --params 8B \
  --remote-sparkctl "$TMP/sparkctl-slow" > "$TMP/out" 2> "$TMP/err" &
serve=$!
at_exit "kill -KILL $serve 2> /dev/null"
# Ready: said once the head's /health answers 200, after its first three
# answers, 503 (loading), to serve's polls - nothing else asks it before.
wait_until 60 "serve's ready line" grep -qx "ready: http://$(cluster_lan_ip node0):8000/v1" "$TMP/out"
[ "$(cat "$TMP/standin/health-503-sent" 2> /dev/null)" = 3 ] ||
  fail "serve said ready before /health answered 200 (503s sent: $(cat "$TMP/standin/health-503-sent" 2> /dev/null))"
wait_until 60 "the head's /health" ready
contains "$TMP/err" "sparkctl serve: starting vllm on 2 nodes; its API will be http://198.19.177.11:8000"
[ "$(api /v1/models | json_get /dev/stdin 'd["data"][0]["id"]')" = Qwen/Qwen3-8B ] || fail "/v1/models"
/usr/bin/python3 - "$TMP/standin" << 'PY' || fail "a node's part is not its plan"
import json, sys
for rank, addr in ((0, "198.19.177.11"), (1, "198.19.177.12")):
    d = json.load(open("%s/node-%d.json" % (sys.argv[1], rank)))
    argv, env = " ".join(d["argv"]), d["env"]
    assert d["hostname"] == "node%d" % rank, d["hostname"]
    assert ("--node-rank %d --master-addr 198.19.177.11 --master-port 29501" % rank) in argv, argv
    assert argv.endswith("--headless") == (rank == 1), argv
    assert env["VLLM_HOST_IP"] == addr, env["VLLM_HOST_IP"]
    assert env["GLOO_SOCKET_IFNAME"] == env["TP_SOCKET_IFNAME"] == "enp1s0f1np1"
    assert env["NCCL_IB_HCA"] == "=rocep1s0f1,roceP2p1s0f1", env["NCCL_IB_HCA"]
    # The workers first: the worker's part was up before the head's engine started.
    assert rank == 1 or "worker-reporting" in d["seen"], d["seen"]
PY
contains "$TMP/err" "[node0:0] sparkctl serve: the 1 worker's part is up; starting the head"
wait_until 10 "the worker's line" grep -q '^\[node1:1\] standin vllm rank 1: joined the head$' "$TMP/out"
contains "$TMP/out" "[node0:0] standin vllm rank 0: serving on port 8000"

# ---- a worker that dies ends every part
kill -KILL "$(json_get "$TMP/standin/node-1.json" 'd["pid"]')"
set +e; wait "$serve"; status=$?; set -e
[ "$status" = 137 ] || { cat "$TMP/err" >&2; fail "serve exited $status after a worker was killed, expected its 137"; }
# The worker, killed first, is named, not the head that exited 1 as it went.
contains "$TMP/err" "sparkctl serve: the engine on node1 ended with signal 9 (SIGKILL); every node's part was ended"
no_survivors "a worker died"

# ---- a head that never becomes ready: everything ended at --ready-timeout, exit 5
rm -f "$TMP/standin"/*
echo always > "$TMP/standin/health-503"
expect 5 cluster_client timeout -s KILL 120 "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$hosts" --ready-timeout 4
contains "$TMP/err" "sparkctl serve: the head's /health did not answer 200 within 4 s (--ready-timeout); every node's part was ended"
lacks "$TMP/out" "ready:"
no_survivors "--ready-timeout"

# ---- SIGINT to serve ends every part
rm -f "$TMP/standin"/*
: > "$TMP/out"; : > "$TMP/err"
"${client[@]}" env --default-signal=INT "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$hosts" > "$TMP/out" 2> "$TMP/err" &
serve=$!
at_exit "kill -KILL $serve 2> /dev/null"
wait_until 60 "the head's /health" ready
kill -INT "$serve"
set +e; wait "$serve"; status=$?; set -e
[ "$status" = 130 ] || { cat "$TMP/err" >&2; fail "serve exited $status after SIGINT, expected 130"; }
contains "$TMP/err" "sparkctl serve: ended by SIGINT"
no_survivors "SIGINT"

# ---- sglang: its flags, its rendezvous at --dist-init-addr, its API on 30000
rm -f "$TMP/standin"/*
: > "$TMP/out"; : > "$TMP/err"
"${client[@]}" env --default-signal=INT "$SPARKCTL" serve sglang Qwen/Qwen3-8B -H "$hosts" > "$TMP/out" 2> "$TMP/err" &
serve=$!
at_exit "kill -KILL $serve 2> /dev/null"
wait_until 60 "sglang's /health" api /health 30000
contains "$TMP/err" "sparkctl serve: starting sglang on 2 nodes; its API will be http://198.19.177.11:30000"
/usr/bin/python3 - "$TMP/standin" << 'PY' || fail "an sglang node's part is not its plan"
import json, sys
for rank in (0, 1):
    d = json.load(open("%s/node-%d.json" % (sys.argv[1], rank)))
    argv = " ".join(d["argv"])
    assert ("--dist-init-addr 198.19.177.11:25000 --nnodes 2 --node-rank %d" % rank) in argv, argv
    assert d["env"]["GLOO_SOCKET_IFNAME"] == "enp1s0f1np1"
    assert "VLLM_HOST_IP" not in d["env"]
PY
kill -INT "$serve"
set +e; wait "$serve"; status=$?; set -e
[ "$status" = 130 ] || { cat "$TMP/err" >&2; fail "serve sglang exited $status after SIGINT, expected 130"; }
no_survivors "SIGINT to serve sglang"

# ---- llamacpp: rpc-server on the worker, bound to its fabric address, up
# before llama-server on the head connects to it (once, without retry, as
# llama.cpp does); ready; the rpc-server killed ends every part
rm -f "$TMP/standin"/*
: > "$TMP/out"; : > "$TMP/err"
"${client[@]}" env --default-signal=INT "$SPARKCTL" serve llamacpp /models/q.gguf -H "$hosts" \
  > "$TMP/out" 2> "$TMP/err" &
serve=$!
at_exit "kill -KILL $serve 2> /dev/null"
wait_until 60 "llamacpp's ready line" grep -qx "ready: http://$(cluster_lan_ip node0):8080/v1" "$TMP/out"
contains "$TMP/err" "[node0:0] sparkctl serve: the workers' servers listen; starting the head"
contains "$TMP/out" "[node0:0] standin llama-server: connected to 1 rpc-servers"
/usr/bin/python3 - "$TMP/standin" << 'PY' || fail "a llamacpp node's part is not its plan"
import json, sys
rpc = json.load(open("%s/rpc-server-node1.json" % sys.argv[1]))
assert rpc["argv"] == ["rpc-server", "--host", "198.19.177.12", "--port", "50052"], rpc["argv"]
head = json.load(open("%s/llama-server.json" % sys.argv[1]))
assert head["hostname"] == "node0"
assert " ".join(head["argv"]) == ("llama-server -m /models/q.gguf --rpc 198.19.177.12:50052 -ngl 999 "
                                  "--host 0.0.0.0 --port 8080"), head["argv"]
# The worker's server was up before the head's engine started.
assert "rpc-server-node1.json" in head["seen"], head["seen"]
PY
kill -KILL "$(json_get "$TMP/standin/rpc-server-node1.json" 'd["pid"]')"
set +e; wait "$serve"; status=$?; set -e
[ "$status" = 137 ] || { cat "$TMP/err" >&2; fail "serve llamacpp exited $status after the rpc-server was killed, expected its 137"; }
contains "$TMP/err" "sparkctl serve: the engine on node1 ended with signal 9 (SIGKILL); every node's part was ended"
no_survivors "the rpc-server died"

# ---- vllm on Ray: the Ray head, the worker's raylet once the GCS listens,
# then vLLM on the head once the raylet joined; ready; the raylet killed
# ends every part
rm -f "$TMP/standin"/*
: > "$TMP/out"; : > "$TMP/err"
"${client[@]}" env --default-signal=INT "$SPARKCTL" serve vllm Qwen/Qwen3-8B --backend ray -H "$hosts" \
  > "$TMP/out" 2> "$TMP/err" &
serve=$!
at_exit "kill -KILL $serve 2> /dev/null"
wait_until 60 "Ray's ready line" grep -qx "ready: http://$(cluster_lan_ip node0):8000/v1" "$TMP/out"
contains "$TMP/err" "[node0:0] sparkctl serve: the 1 worker joined; starting the head"
/usr/bin/python3 - "$TMP/standin" << 'PY' || fail "a Ray node's part is not its plan"
import json, sys
w = json.load(open("%s/ray-worker-node1.json" % sys.argv[1]))
assert w["argv"] == ["ray", "start", "--block", "--address=198.19.177.11:6379",
                     "--node-ip-address=198.19.177.12"], w["argv"]
assert w["env"]["RAY_NODE_IP_ADDRESS"] == "198.19.177.12"
h = json.load(open("%s/node-0.json" % sys.argv[1]))
assert "--distributed-executor-backend ray --port 8000" in " ".join(h["argv"]), h["argv"]
# vLLM started after the worker's raylet had joined.
assert "ray-worker-node1.json" in h["seen"], h["seen"]
PY
kill -KILL "$(json_get "$TMP/standin/ray-worker-node1.json" 'd["pid"]')"
set +e; wait "$serve"; status=$?; set -e
[ "$status" = 137 ] || { cat "$TMP/err" >&2; fail "serve on Ray exited $status after the raylet was killed, expected its 137"; }
contains "$TMP/err" "sparkctl serve: the engine on node1 ended with signal 9 (SIGKILL); every node's part was ended"
no_survivors "the raylet died"

# ---- a preflight failure starts nothing
rm -f "$TMP/standin"/*
expect 4 timeout -s INT 30 "$SPARKCTL" serve vllm Qwen/Qwen3-235B-A22B -H "$hosts" --params 235B
contains "$TMP/err" "sparkctl serve: preflight: serve.memory node0: its share of the weights"
[ ! -e "$TMP/standin/node-0.json" ] || fail "started despite the preflight"
nothing_left || fail "something runs after a refused preflight"

# ---- the preflight on the nodes: a port taken on the head, named with what
# listens there; nothing started
rm -f "$TMP/standin"/*
squat node0 8000
expect 4 "${client[@]}" timeout -s KILL 120 "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$hosts"
contains "$TMP/err" "sparkctl serve: preflight: serve.ports_free node0: port 8000 on node0 is taken: python3 (pid $squatter) at 0.0.0.0:8000 (stop what listens there, or choose another port (--port, --master-port))"
[ ! -e "$TMP/standin/node-0.json" ] || fail "started despite a port taken"
unsquat
expect 0 "${client[@]}" "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$hosts" --print
contains "$TMP/out" "# PASS serve.ports_free node0: ports 8000, 29501 free on node0"
lacks "$TMP/out" "serve.ports_free node1" # a vLLM worker listens on no fixed port

# ---- with --image: the image's id on each node (a stand-in docker), node1's differs
for n in node0 node1; do
  id=sha256:aaaa; [ $n = node1 ] && id=sha256:bbbb
  printf '#!/bin/sh\n[ "$1 $2 $3 $4" = "image inspect --format {{.Id}}" ] || exit 2\n[ "$5" = nvcr.io/nvidia/vllm:25.11-py3 ] || { echo "Error: No such image: $5" >&2; exit 1; }\necho %s\n' \
    "$id" > "$CLUSTER_DIR/$n/bin/docker"
  chmod +x "$CLUSTER_DIR/$n/bin/docker"
done
expect 4 "${client[@]}" "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$hosts" --image nvcr.io/nvidia/vllm:25.11-py3 --print
contains "$TMP/out" "# FAIL serve.image node1: nvcr.io/nvidia/vllm:25.11-py3 is sha256:bbbb on node1, but sha256:aaaa on the head node0"
contains "$TMP/err" "sparkctl serve: preflight: serve.image node1:"
lacks "$TMP/out" "serve.image node0"
expect 4 "${client[@]}" "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$hosts" --image other:1 --print
contains "$TMP/out" "# FAIL serve.image node0: other:1 is not on node0: Error: No such image: other:1"
sed -i 's/bbbb/aaaa/' "$CLUSTER_DIR/node1/bin/docker"
expect 0 "${client[@]}" "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$hosts" --image nvcr.io/nvidia/vllm:25.11-py3 --print
contains "$TMP/out" "# PASS serve.image: nvcr.io/nvidia/vllm:25.11-py3 is sha256:aaaa on every node"
rm "$CLUSTER_DIR/node1/bin/docker"
