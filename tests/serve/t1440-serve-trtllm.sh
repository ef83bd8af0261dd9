#!/usr/bin/env bash
# sparkctl serve trtllm started across two namespace nodes with real sshd:
# Open MPI's real mpirun on the head starts the ranks (tests/serve/standin.py
# as trtllm-llmapi-launch and trtllm-serve) on both nodes, reaching node1
# over ssh at its fabric address; rank 0 serves once every rank has joined
# it.  Ready; SIGINT to serve, a rank killed on the worker and SIGKILL of the
# head's mpirun each end everything - no rank, orted or mpirun left on any
# node; so does the worker lost (exit 3).  With --image (a stand-in docker)
# the worker's container sshd is up before mpirun, which reaches it there.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
. "$SRCDIR/tests/serve/lib-serve.sh"
cluster_require
command -v env > /dev/null && env --default-signal=INT true 2> /dev/null ||
  skip "env --default-signal is needed (coreutils 8.31 or later)"
[ -x /usr/bin/mpirun ] && [ -x /usr/bin/orted ] ||
  skip "no Open MPI (Debian package openmpi-bin)"
cluster_up 2
export TMPDIR=$TMP
hosts=$(cluster_hosts)
fabric0=$(cluster_ip node0 "$CLUSTER_RAIL_IF") fabric1=$(cluster_ip node1 "$CLUSTER_RAIL_IF")

# mpirun reaches node1 over ssh at its fabric address: each node's sshd
# listens there too (sshd rereads its configuration on SIGHUP), and
# mpirun's ssh (OMPI_MCA_plm_rsh_agent) has the cluster's key and the host
# keys of the fabric addresses.
: > "$TMP/fabric_known_hosts"
for n in node0 node1; do
  addr=$(cluster_ip $n "$CLUSTER_RAIL_IF")
  echo "ListenAddress $addr:22" >> "$CLUSTER_DIR/$n/sshd_config"
  read -r key < "$CLUSTER_DIR/$n/ssh_host_ed25519_key.pub"
  echo "$addr ${key% *}" >> "$TMP/fabric_known_hosts"
  kill -HUP "$(cat "$CLUSTER_DIR/$n/sshd.pid")"
done
fabric_sshd() {
  cluster_exec node0 ss -Hltn | grep -q "$fabric0:22 " &&
    cluster_exec node1 ss -Hltn | grep -q "$fabric1:22 "
}
wait_until 30 "sshd on the fabric addresses" fabric_sshd
cat > "$TMP/mpi-ssh" << EOF
#!/bin/sh
exec ssh -i $TMP/client_key -o IdentitiesOnly=yes -o IdentityAgent=none -o User=root \\
  -o UserKnownHostsFile=$TMP/fabric_known_hosts -o GlobalKnownHostsFile=/dev/null \\
  -o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=5 -o LogLevel=ERROR "\$@"
EOF
# What Open MPI needs on the head, given where sparkctl's plan runs mpirun
# (node0's PATH): the ssh above, root allowed (the tests run as root), its
# own daemons meeting on the fabric interface.
cat > "$CLUSTER_DIR/node0/bin/mpirun" << EOF
#!/bin/sh
export OMPI_MCA_plm_rsh_agent=$TMP/mpi-ssh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_oob_tcp_if_include=$CLUSTER_RAIL_IF
exec /usr/bin/mpirun "\$@"
EOF
mkdir "$TMP/standin"
for n in node0 node1; do
  for prog in trtllm-llmapi-launch trtllm-serve; do
    printf '#!/bin/sh\nSERVE_STANDIN_DIR=%s exec /usr/bin/python3 %s %s "$@"\n' \
      "$TMP/standin" "$SRCDIR/tests/serve/standin.py" $prog > "$CLUSTER_DIR/$n/bin/$prog"
    chmod +x "$CLUSTER_DIR/$n/bin/$prog"
  done
done
chmod +x "$TMP/mpi-ssh" "$CLUSTER_DIR/node0/bin/mpirun"

# rank_pid N: the pid of rank N's stand-in.
rank_pid() { json_get "$TMP/standin/node-$1.json" 'd["pid"]'; }

client=(nsenter --net="/run/netns/$CLUSTER_HUB" --)
# start: serve trtllm in the background ($serve is serve itself) until it says ready.
start() {
  rm -f "$TMP/standin"/*
  # Emptied here, not only by serve's redirection, which may come after the
  # first look for the ready line below: the last start's would be seen.
  : > "$TMP/out"
  : > "$TMP/err"
  "${client[@]}" env --default-signal=INT "$SPARKCTL" serve trtllm nvidia/Llama-3.1-8B-Instruct-FP8 \
    -H "$hosts" --params 8B --dtype fp8 > "$TMP/out" 2> "$TMP/err" &
  serve=$!
  at_exit "kill -KILL $serve 2> /dev/null"
  wait_until 90 "serve's ready line" grep -qx "ready: http://$(cluster_lan_ip node0):8355/v1" "$TMP/out" ||
    { cat "$TMP/out" "$TMP/err" >&2; fail "serve trtllm never said ready"; }
}
# ended_with STATUS...: serve ended, with one of these statuses.
ended_with() {
  set +e; wait "$serve"; status=$?; set -e
  case " $* " in *" $status "*) ;; *)
    cat "$TMP/out" "$TMP/err" >&2; fail "serve trtllm exited $status, expected $*" ;; esac
}

# ---- ready: every rank of mpirun's job joined rank 0, which answers the API
start
contains "$TMP/err" "sparkctl serve: starting trtllm on 2 nodes; its API will be http://$fabric0:8355"
contains "$TMP/err" "[node0:0] sparkctl serve: the 1 worker's part is up; starting the head"
[ "$(api /v1/models 8355 | json_get /dev/stdin 'd["data"][0]["id"]')" = nvidia/Llama-3.1-8B-Instruct-FP8 ] ||
  fail "/v1/models"
contains "$TMP/out" "standin trtllm-serve rank 0: rank 1 joined"
contains "$TMP/out" "standin trtllm-serve rank 0: serving on port 8355"
/usr/bin/python3 - "$TMP/standin" "$fabric0" << 'PY' || fail "a rank is not what the plan starts"
import json, sys
d, head = sys.argv[1], sys.argv[2]
for rank in (0, 1):
    r = json.load(open("%s/node-%d.json" % (d, rank)))
    env = r["env"]
    # mpirun placed rank 0 on the head, rank 1 on the worker, one per GPU.
    assert r["hostname"] == "node%d" % rank, r["hostname"]
    assert r["argv"] == ["trtllm-serve", "nvidia/Llama-3.1-8B-Instruct-FP8", "--tp_size", "1",
                         "--pp_size", "2", "--backend", "pytorch", "--host", "0.0.0.0",
                         "--port", "8355"], r["argv"]
    assert env["OMPI_COMM_WORLD_SIZE"] == "2", env["OMPI_COMM_WORLD_SIZE"]
    # The head's environment, passed to every rank by name (-x).
    assert env["NCCL_IB_HCA"] == "=rocep1s0f1,roceP2p1s0f1", env["NCCL_IB_HCA"]
    assert env["GLOO_SOCKET_IFNAME"] == env["TP_SOCKET_IFNAME"] == "enp1s0f1np1"
    assert env["OMPI_MCA_btl_tcp_if_include"] == "enp1s0f1np1"
    # mpirun, whose URI the ranks have, runs on the head's fabric address.
    assert ("tcp://%s:" % head) in env["OMPI_MCA_orte_hnp_uri"], env["OMPI_MCA_orte_hnp_uri"]
PY

# ---- SIGINT to serve ends every part: mpirun, its ranks, node1's orted
kill -INT "$serve"
ended_with 130
contains "$TMP/err" "sparkctl serve: ended by SIGINT"
no_survivors "SIGINT"

# ---- a rank killed on the worker ends the job: mpirun ends the others, non-zero
start
kill -KILL "$(rank_pid 1)"
set +e; wait "$serve"; status=$?; set -e
[ "$status" != 0 ] && [ "$status" != 130 ] ||
  { cat "$TMP/err" >&2; fail "serve trtllm exited $status after rank 1 was killed"; }
contains "$TMP/err" "sparkctl serve: the engine on node0 ended with"
no_survivors "a rank killed on the worker"

# ---- SIGKILL of the head's mpirun ends the job: its ranks and node1's orted go
start
mpirun_pid=""
for pid in $(ip netns pids "$(cluster_ns node0)"); do
  [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = mpirun ] && mpirun_pid=$pid
done
[ -n "$mpirun_pid" ] || fail "no mpirun on node0"
kill -KILL "$mpirun_pid"
set +e; wait "$serve"; status=$?; set -e
[ "$status" != 0 ] || fail "serve trtllm exited 0 after mpirun was killed"
contains "$TMP/err" "sparkctl serve: the engine on node0 ended with signal 9 (SIGKILL)"
no_survivors "SIGKILL of mpirun"

# ---- the worker lost (its management link down: launch's ssh to it goes
# silent) ends the job within launch's 15 s, exit 3: mpirun is ended on the
# head and, over the fabric, ends the worker's ranks and orted.  What holds
# the worker's place is ended by the worker's agent once the launcher's
# pings stopped (30 s), while the node is still cut off.
start
cluster_node_unreachable node1
at_exit "cluster_node_reachable node1"
ended_with 3
contains "$TMP/err" "sparkctl serve: node1 was lost; every node's part was ended"
engine_left() { { job_left node0; job_left node1; } | grep -E 'standin\.py|orted|mpirun' || true; }
no_engine() { [ -z "$(engine_left)" ] && [ -z "$(job_left node0)" ]; }
for ((i = 0; i < 200; i++)); do no_engine && break; sleep 0.1; done
no_engine || { job_left node0 >&2; job_left node1 >&2; fail "processes survived the loss of node1"; }
for ((i = 0; i < 120; i++)); do [ -z "$(job_left node1)" ] && break; sleep 0.5; done
[ -z "$(job_left node1)" ] || { job_left node1 >&2; fail "the lost worker's part outlived the job"; }
cluster_node_reachable node1

# ---- with --image: each worker's container runs sshd on --master-port, up
# before the head's mpirun, in its container, reaches it there. A stand-in
# docker on the nodes' PATH: 'image inspect' gives one id everywhere; 'run'
# exports each -e and execs its --entrypoint with the arguments after the
# image (as a container on the host's network would run them), sshd with the
# node's host key and the client's key, on the node's fabric address only.
image=nvcr.io/nvidia/tensorrt-llm/release:1.1.0
for n in node0 node1; do
  addr=$(cluster_ip $n "$CLUSTER_RAIL_IF")
  grep -v -e '^ListenAddress' -e '^PidFile' "$CLUSTER_DIR/$n/sshd_config" > "$TMP/container-sshd-$n"
  printf 'ListenAddress %s\nPidFile %s\n' "$addr" "$TMP/container-sshd-$n.pid" >> "$TMP/container-sshd-$n"
  read -r key < "$CLUSTER_DIR/$n/ssh_host_ed25519_key.pub"
  echo "[$addr]:2233 ${key% *}" >> "$TMP/fabric_known_hosts"
  cat > "$CLUSTER_DIR/$n/bin/docker" << EOF
#!/bin/sh
case "\$1" in
image) [ "\$*" = "image inspect --format {{.Id}} $image" ] || exit 2; echo sha256:aaaa; exit 0 ;;
run) shift ;;
*) echo "docker: not in the stand-in: \$1" >&2; exit 125 ;;
esac
while [ \$# -gt 0 ]; do
  case "\$1" in
  --rm) shift ;;
  --name | --network | --ipc | --gpus | --device | --ulimit | -v) shift 2 ;;
  -e) export "\$2"; shift 2 ;;
  --entrypoint) entry=\$2; shift 2; break ;;
  *) echo "docker: not in the stand-in: \$1" >&2; exit 125 ;;
  esac
done
[ "\$1" = $image ] || { echo "docker: no image \$1" >&2; exit 125; }
shift
[ "\$entry" = /usr/sbin/sshd ] && exec /usr/sbin/sshd -f $TMP/container-sshd-$n $_cluster_sshd_extra "\$@"
exec "\$entry" "\$@"
EOF
  chmod +x "$CLUSTER_DIR/$n/bin/docker"
done
container_sshd_gone() { ! cluster_exec node1 ss -Hltn | grep -q ':2233 '; }
rm -f "$TMP/standin"/*
: > "$TMP/out"
: > "$TMP/err"
"${client[@]}" env --default-signal=INT "$SPARKCTL" serve trtllm nvidia/Llama-3.1-8B-Instruct-FP8 \
  -H "$hosts" --image "$image" > "$TMP/out" 2> "$TMP/err" &
serve=$!
at_exit "kill -KILL $serve 2> /dev/null"
wait_until 90 "serve's ready line with --image" grep -qx "ready: http://$(cluster_lan_ip node0):8355/v1" "$TMP/out" ||
  { cat "$TMP/out" "$TMP/err" >&2; fail "serve trtllm --image never said ready"; }
contains "$TMP/err" "[node0:0] sparkctl serve: the workers' servers listen; starting the head"
/usr/bin/python3 - "$TMP/standin" << 'PY' || fail "a rank with --image is not what the plan starts"
import json, sys
for rank in (0, 1):
    r = json.load(open("%s/node-%d.json" % (sys.argv[1], rank)))
    assert r["hostname"] == "node%d" % rank, r["hostname"]
    assert r["env"]["NCCL_IB_HCA"] == "=rocep1s0f1,roceP2p1s0f1", r["env"]["NCCL_IB_HCA"]
    # Rank 1 came through the container's sshd on 2233, not the node's.
    assert rank == 0 or r["env"]["SSH_CONNECTION"].endswith(" 2233"), r["env"].get("SSH_CONNECTION")
PY
kill -INT "$serve"
ended_with 130
no_survivors "SIGINT with --image"
wait_until 20 "the worker's container sshd gone" container_sshd_gone || fail "the container's sshd survived"
