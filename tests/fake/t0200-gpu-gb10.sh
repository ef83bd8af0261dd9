#!/usr/bin/env bash
# The live probe on a DGX Spark's GB10, through the stand-in NVIDIA libraries;
# and NCCL's version codes in both encodings.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fake/lib-fake.sh"

expect 0 fake gb10 "$SPARKCTL" topo --json
quiet
cp "$TMP/out" "$TMP/json"
# Both libraries loaded, from the stand-ins' directory.  One GPU: CUDA's
# "000F:01:00.0" is NVML's "0000000F:01:00.0", not a second GPU.  NVML has
# no memory size for unified memory, and none is made up.
json_check "$TMP/json" << EOF
d["gpu"]["nvml"]["available"] => True
d["gpu"]["nvml"]["path"] => $FAKE_LIBDIR/libnvidia-ml.so.1
d["gpu"]["nvml"]["version"] => 580.95.05
d["gpu"]["nvml"]["reason"] => None
d["gpu"]["cuda"]["available"] => True
d["gpu"]["cuda"]["path"] => $FAKE_LIBDIR/libcuda.so.1
d["gpu"]["cuda"]["version"] => 13.0
d["gpu"]["cuda"]["reason"] => None
d["gpu"]["driver_version"] => 580.95.05
d["gpu"]["cuda_driver_version"] => 13000
len(d["gpu"]["devices"]) => 1
d["gpu"]["devices"][0]["index"] => 0
d["gpu"]["devices"][0]["name"] => NVIDIA GB10
d["gpu"]["devices"][0]["uuid"] => GPU-a1b2c3d4-0b10-4f00-8000-00000f010000
d["gpu"]["devices"][0]["pci_bus_id"] => 0000000F:01:00.0
d["gpu"]["devices"][0]["memory_total_bytes"] => None
d["gpu"]["devices"][0]["unified_memory"] => True
d["gpu"]["devices"][0]["cc_major"] => 12
d["gpu"]["devices"][0]["cc_minor"] => 1
d["gpu"]["devices"][0]["gpudirect_rdma_supported"] => False
d["gpu"]["devices"][0]["dma_buf_supported"] => False
EOF
# NCCL: the stand-in, not a libnccl.so.2 the host may have.
json_check "$TMP/json" << EOF
d["system"]["nccl"]["available"] => True
d["system"]["nccl"]["version"] => 2.28.9
d["system"]["nccl"]["version_code"] => 22809
d["system"]["nccl"]["path"] => $FAKE_LIBDIR/libnccl.so.2
d["system"]["nccl"]["reason"] => None
d["system"]["nccl"]["build_id"] => 4e43434c2d66616b652d322e32382e39
EOF
gpu_section "$TMP/json" "$TMP/gpu.json"
golden fake-gb10-gpu.json "$TMP/gpu.json"

expect 0 fake gb10 "$SPARKCTL" topo
quiet
gpu_table "$TMP/out" "$TMP/table"
golden fake-gb10-gpu.txt "$TMP/table"
awk '$2 == "NVIDIA" && $3 == "GB10" { print $4, $5, $6, $7, $8 }' "$TMP/table" > "$TMP/row"
echo "unified 12.1 no no 0000000F:01:00.0" > "$TMP/want"
same "$TMP/want" "$TMP/row"
contains "$TMP/out" ", CUDA 13.0, NCCL 2.28.9, "

# NCCL's version code: X*10000+Y*100+Z since 2.9, X*1000+Y*100+Z before.
nccl_version() {
  expect 0 env SPARKCTL_FAKE_NCCL_VERSION="$1" LD_LIBRARY_PATH="$FAKE_LIBDIR" "$SPARKCTL" topo --json
  quiet
  json_check "$TMP/out" << EOF
d["system"]["nccl"]["available"] => True
d["system"]["nccl"]["version_code"] => $1
d["system"]["nccl"]["version"] => $2
EOF
}
nccl_version 2708 2.7.8
nccl_version 2804 2.8.4
nccl_version 20906 2.9.6
nccl_version 21903 2.19.3
nccl_version 30001 3.0.1

# ncclGetVersion failing: NCCL recorded as unavailable, with the reason.
expect 0 env SPARKCTL_FAKE_NCCL_VERSION=garbage LD_LIBRARY_PATH="$FAKE_LIBDIR" "$SPARKCTL" topo --json
quiet
json_check "$TMP/out" << EOF
d["system"]["nccl"]["available"] => False
d["system"]["nccl"]["reason"] => ncclGetVersion failed
d["system"]["nccl"]["version"] => None
d["system"]["nccl"]["version_code"] => None
d["system"]["nccl"]["path"] => None
EOF
