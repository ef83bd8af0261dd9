#!/usr/bin/env bash
# NVIDIA libraries that fail, lack a symbol or are absent: each is recorded
# as unavailable with its reason, what still works is kept, and sparkctl
# exits 0.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fake/lib-fake.sh"

# nvmlInit_v2 fails: NVML unavailable with NVML's message; CUDA's view of
# the GPU (its own bus id format, cc from CUDA) is still listed.
expect 0 fake nvml-init-fails "$SPARKCTL" topo --json
quiet
cp "$TMP/out" "$TMP/json"
json_check "$TMP/json" << EOF
d["gpu"]["nvml"]["available"] => False
d["gpu"]["nvml"]["reason"] => nvmlInit failed: Driver Not Loaded
d["gpu"]["nvml"]["path"] => None
d["gpu"]["cuda"]["available"] => True
d["gpu"]["cuda"]["path"] => $FAKE_LIBDIR/libcuda.so.1
d["gpu"]["driver_version"] => None
d["gpu"]["cuda_driver_version"] => 13000
len(d["gpu"]["devices"]) => 1
d["gpu"]["devices"][0]["name"] => NVIDIA GB10
d["gpu"]["devices"][0]["pci_bus_id"] => 0000000F:01:00.0
d["gpu"]["devices"][0]["cc_major"] => 12
d["gpu"]["devices"][0]["cc_minor"] => 1
d["gpu"]["devices"][0]["memory_total_bytes"] => None
d["gpu"]["devices"][0]["unified_memory"] => None
d["gpu"]["devices"][0]["gpudirect_rdma_supported"] => False
d["gpu"]["devices"][0]["dma_buf_supported"] => False
EOF
gpu_section "$TMP/json" "$TMP/gpu.json"
golden fake-nvml-init-fails-gpu.json "$TMP/gpu.json"
expect 0 fake nvml-init-fails "$SPARKCTL" topo
quiet
gpu_table "$TMP/out" "$TMP/table"
golden fake-nvml-init-fails-gpu.txt "$TMP/table"

# cuInit fails (no device, as with CUDA_VISIBLE_DEVICES=""): CUDA unavailable
# with CUDA's message; NVML's GPU is listed, what only CUDA knows unknown.
expect 0 fake cuda-no-device "$SPARKCTL" topo --json
quiet
cp "$TMP/out" "$TMP/json"
json_check "$TMP/json" << EOF
d["gpu"]["cuda"]["available"] => False
d["gpu"]["cuda"]["reason"] => cuInit failed: no CUDA-capable device is detected
d["gpu"]["cuda"]["path"] => None
d["gpu"]["nvml"]["available"] => True
len(d["gpu"]["devices"]) => 1
d["gpu"]["devices"][0]["pci_bus_id"] => 0000000F:01:00.0
d["gpu"]["devices"][0]["unified_memory"] => True
d["gpu"]["devices"][0]["gpudirect_rdma_supported"] => None
d["gpu"]["devices"][0]["dma_buf_supported"] => None
EOF
gpu_section "$TMP/json" "$TMP/gpu.json"
golden fake-cuda-no-device-gpu.json "$TMP/gpu.json"
expect 0 fake cuda-no-device "$SPARKCTL" topo
quiet
gpu_table "$TMP/out" "$TMP/table"
golden fake-cuda-no-device-gpu.txt "$TMP/table"

# A profile the stand-ins do not know: both fail with their unknown error.
expect 0 fake no-such-gpu "$SPARKCTL" topo --json
quiet
json_check "$TMP/out" << EOF
d["gpu"]["nvml"]["reason"] => nvmlInit failed: Unknown Error
d["gpu"]["cuda"]["reason"] => cuInit failed: unknown error
d["gpu"]["devices"] => []
EOF
expect 0 fake no-such-gpu "$SPARKCTL" topo
quiet
contains "$TMP/out" "GPU: none found (NVML: nvmlInit failed: Unknown Error)"

# Libraries without a symbol sparkctl requires.
expect 0 env LD_LIBRARY_PATH="$BROKEN_LIBDIR" SPARKCTL_FAKE_GPU=gb10 "$SPARKCTL" topo --json
quiet
json_check "$TMP/out" << EOF
d["gpu"]["nvml"]["available"] => False
d["gpu"]["nvml"]["reason"] => symbol 'nvmlDeviceGetCount_v2' not found
d["gpu"]["cuda"]["available"] => False
d["gpu"]["cuda"]["reason"] => symbol 'cuDeviceGetAttribute' not found
d["gpu"]["devices"] => []
d["system"]["nccl"]["available"] => False
d["system"]["nccl"]["reason"] => symbol 'ncclGetVersion' not found
EOF

# No library at all: the loader's message.  A library the host has of its
# own (LD_LIBRARY_PATH cannot hide what ld.so.cache lists) is skipped, the
# others are checked; CI hosts have none.
expect 0 env LD_LIBRARY_PATH="$NO_LIBDIR" "$SPARKCTL" topo --json
quiet
cp "$TMP/out" "$TMP/json"
host_has() {
  local ldconfig
  ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
  "$ldconfig" -p 2> /dev/null | grep -qF "	$1 ("
}
for lib in 'd["gpu"]["nvml"] libnvidia-ml.so.1' 'd["gpu"]["cuda"] libcuda.so.1' 'd["system"]["nccl"] libnccl.so.2'; do
  key=${lib% *} soname=${lib##* }
  if host_has "$soname" && [ "$(json_get "$TMP/json" "${key}[\"available\"]")" = True ]; then
    note "this host has its own $soname: not checked"
    continue
  fi
  json_check "$TMP/json" << EOF
${key}["available"] => False
${key}["reason"] => $soname: cannot open shared object file: No such file or directory
${key}["path"] => None
EOF
done
if ! host_has libnvidia-ml.so.1; then
  expect 0 env LD_LIBRARY_PATH="$NO_LIBDIR" "$SPARKCTL" topo
  quiet
  contains "$TMP/out" "GPU: none found (NVML: libnvidia-ml.so.1: cannot open shared object file: No such file or directory)"
fi
