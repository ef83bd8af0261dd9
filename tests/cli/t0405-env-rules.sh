#!/usr/bin/env bash
# The rules behind 'sparkctl env': twins, GIDs, GPUDirect, topologies, refusals.
. "$SRCDIR/tests/lib.sh"

cd "$SRCDIR"
F=tests/fixtures
var() { sed -n "s/^export $1='\\(.*\\)'\$/\\1/p" "$TMP/out"; }

# Both twins of the cabled port, exact match, in PCI order.
expect 0 "$SPARKCTL" env --root $F/spark-1cable
[ "$(var NCCL_IB_HCA)" = "=rocep1s0f1,roceP2p1s0f1" ] || fail "HCA list: $(var NCCL_IB_HCA)"
[ "$(var NCCL_SOCKET_IFNAME)" = "=enp1s0f1np1" ] || fail "bootstrap: $(var NCCL_SOCKET_IFNAME)"
[ "$(var GLOO_SOCKET_IFNAME)" = "enp1s0f1np1" ] || fail "gloo"
lacks "$TMP/out" NCCL_IB_GID_INDEX
# GB10 has neither GPUDirect RDMA nor DMA-BUF: auto means safe.
[ "$(var NCCL_NET_GDR_LEVEL)" = LOC ] || fail "GB10 auto mode must be safe"
[ "$(var NCCL_DMABUF_ENABLE)" = 0 ] || fail "GB10 auto mode must disable DMA-BUF"
# The down port's twins are not ACTIVE: not strays, nothing on stderr.
[ ! -s "$TMP/err" ] || fail "unexpected stderr: $(cat "$TMP/err")"

# UCX's devices are the rails as DEVICE:PORT, never the bootstrap interface: on
# InfiniBand that is the management NIC, and UCX would leave the eight HCAs.
[ "$(var UCX_NET_DEVICES)" = "rocep1s0f1:1,roceP2p1s0f1:1" ] || fail "UCX: $(var UCX_NET_DEVICES)"
expect 0 "$SPARKCTL" env --root $F/ib-server
[ "$(var UCX_NET_DEVICES)" = "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1" ] \
  || fail "InfiniBand UCX devices: $(var UCX_NET_DEVICES)"
[ "$(var OMPI_MCA_btl_tcp_if_include)" = eno1 ] || fail "Open MPI's TCP transport bootstraps over eno1"

# OFED names pair the same way: the halves of port 0 are mlx5_0 and mlx5_2.
expect 0 "$SPARKCTL" env --root $F/spark-ofed
[ "$(var NCCL_IB_HCA)" = "=mlx5_0,mlx5_2" ] || fail "OFED HCA list: $(var NCCL_IB_HCA)"

# GID drift: the default is still right (NCCL picks per device); pinning is refused.
expect 0 "$SPARKCTL" env --root $F/spark-gid-drift
[ "$(var NCCL_IB_ROCE_VERSION_NUM)" = 2 ] && [ "$(var NCCL_IB_ADDR_FAMILY)" = AF_INET ] \
  || fail "dynamic GID selection expected"
lacks "$TMP/out" NCCL_IB_GID_INDEX
expect 1 "$SPARKCTL" env --root $F/spark-gid-drift --pin-gid
contains "$TMP/err" "not at one index (rocep1s0f1 3, roceP2p1s0f1 5)"
[ ! -s "$TMP/out" ] || fail "a refused environment printed something"
expect 0 "$SPARKCTL" env --root $F/spark-1cable --pin-gid
[ "$(var NCCL_IB_GID_INDEX)" = 3 ] || fail "pinned index"
lacks "$TMP/out" NCCL_IB_ROCE_VERSION_NUM

# Two cables: ambiguous from one node, settled by --nodes or --topology.
expect 1 "$SPARKCTL" env --root $F/spark-2cable
contains "$TMP/err" "say --nodes 2 or --nodes 3"
expect 0 "$SPARKCTL" env --root $F/spark-2cable --nodes 2
[ "$(var NCCL_IB_HCA)" = "=rocep1s0f0,rocep1s0f1,roceP2p1s0f0,roceP2p1s0f1" ] || fail "4 twins"
lacks "$TMP/out" NCCL_NET_PLUGIN
expect 0 "$SPARKCTL" env --root $F/spark-2cable --topology ring
[ "$(var NCCL_NET_PLUGIN)" = none ] || fail "ring plugin"
[ "$(var NCCL_IB_SUBNET_AWARE_ROUTING)" = 1 ] && [ "$(var NCCL_IB_MERGE_NICS)" = 0 ] || fail "ring vars"
[ "$(var NCCL_SOCKET_IFNAME)" = "=enP7s7" ] || fail "ring bootstraps over the management port"
expect 1 "$SPARKCTL" env --root $F/spark-1cable --topology ring
contains "$TMP/err" "a ring needs both ports"
expect 1 "$SPARKCTL" env --root $F/spark-1cable --topology pair --nodes 3
contains "$TMP/err" "a pair is two nodes"

# InfiniBand: no RoCE variables, bootstrap over the management interface, GPUDirect as NCCL decides.
expect 0 "$SPARKCTL" env --root $F/ib-server
lacks "$TMP/out" NCCL_IB_ROCE_VERSION_NUM
lacks "$TMP/out" NCCL_IB_ADDR
lacks "$TMP/out" NCCL_NET_GDR_LEVEL
[ "$(var NCCL_SOCKET_IFNAME)" = "=eno1" ] || fail "IB bootstrap"

# GPUDirect modes.
expect 1 "$SPARKCTL" env --root $F/spark-1cable --mode dmabuf
contains "$TMP/err" "does not support DMA-BUF"
contains "$TMP/err" "hangs in init_process_group"
expect 0 "$SPARKCTL" env --root $F/spark-1cable --mode dmabuf --force
[ "$(var NCCL_DMABUF_ENABLE)" = 1 ] || fail "forced dmabuf"
expect 0 "$SPARKCTL" env --root $F/ib-server --mode safe
[ "$(var NCCL_NET_GDR_LEVEL)" = LOC ] || fail "safe mode on the server"
expect 0 "$SPARKCTL" env --root $F/ib-server --mode dmabuf
[ "$(var NCCL_DMABUF_ENABLE)" = 1 ] || fail "dmabuf on hardware that has it"
expect 2 "$SPARKCTL" env --root $F/spark-1cable --force
contains "$TMP/err" "--force only applies to --mode dmabuf"

# --socket-if and --set.
expect 0 "$SPARKCTL" env --root $F/spark-1cable --socket-if enP7s7 --set NCCL_DEBUG=INFO --set NCCL_IB_HCA==x
[ "$(var NCCL_SOCKET_IFNAME)" = "=enP7s7" ] || fail "--socket-if"
[ "$(var NCCL_DEBUG)" = INFO ] || fail "--set adds"
[ "$(var NCCL_IB_HCA)" = "=x" ] || fail "--set overrides"
expect 1 "$SPARKCTL" env --root $F/spark-1cable --socket-if wlP9s9
contains "$TMP/err" "bootstrap interface wlP9s9 of spark-01 has no IPv4 address"
expect 1 "$SPARKCTL" env --root $F/spark-1cable --socket-if nope0
contains "$TMP/err" "--socket-if nope0: no such interface"
expect 1 "$SPARKCTL" env --root $F/spark-1cable --set 'BAD KEY=1'
contains "$TMP/err" "expected KEY=VALUE"

# A stray ACTIVE port is left out and reported: take the IPv4 address off one twin.
"$SPARKCTL" topo --root $F/spark-2cable --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for n in d["netdevs"]:
    if n["name"] == "enP2p1s0f0np0":
        n["ipv4"] = []
json.dump(d, sys.stdout)' > "$TMP/stray.json"
expect 0 "$SPARKCTL" env --from "$TMP/stray.json"
[ "$(var NCCL_IB_HCA)" = "=rocep1s0f1,roceP2p1s0f1" ] || fail "stray kept: $(var NCCL_IB_HCA)"
contains "$TMP/err" "left out rocep1s0f0/1: its twin roceP2p1s0f0 netdev enP2p1s0f0np0 has no IPv4 address"
contains "$TMP/err" "left out roceP2p1s0f0/1: netdev enP2p1s0f0np0 has no IPv4 address"

# No fabric at all.
printf '{"schema_version": 1, "system": {"hostname": "bare"}}' > "$TMP/bare.json"
expect 3 "$SPARKCTL" env --from "$TMP/bare.json"
contains "$TMP/err" "bare has no ACTIVE fabric port"

# Usage errors.
expect 2 "$SPARKCTL" env --topology star
contains "$TMP/err" "unknown topology 'star'"
expect 2 "$SPARKCTL" env --format yaml
contains "$TMP/err" "unknown format 'yaml'"
expect 2 "$SPARKCTL" env --mode fast
expect 2 "$SPARKCTL" env --root $F/spark-1cable --from "$TMP/stray.json"
