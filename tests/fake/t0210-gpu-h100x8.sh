#!/usr/bin/env bash
# The live probe on eight H100s, which CUDA enumerates in another order than
# NVML: what only CUDA knows must land on the GPU of the same PCI bus id.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fake/lib-fake.sh"

# NVML's order, in which the probe lists them.
buses="1B 43 52 61 9D C3 D1 DF"

expect 0 fake h100x8 "$SPARKCTL" topo --json
quiet
cp "$TMP/out" "$TMP/json"
# Eight GPUs, not sixteen: every CUDA device found its NVML one.
json_check "$TMP/json" << EOF
d["gpu"]["nvml"]["available"] => True
d["gpu"]["cuda"]["available"] => True
d["gpu"]["driver_version"] => 550.127.05
d["gpu"]["cuda_driver_version"] => 12040
d["gpu"]["cuda"]["version"] => 12.4
len(d["gpu"]["devices"]) => 8
len(set(g["uuid"] for g in d["gpu"]["devices"])) => 8
EOF
i=0
for b in $buses; do
  cat << EOF
d["gpu"]["devices"][$i]["index"] => $i
d["gpu"]["devices"][$i]["name"] => NVIDIA H100 80GB HBM3
d["gpu"]["devices"][$i]["pci_bus_id"] => 00000000:$b:00.0
d["gpu"]["devices"][$i]["memory_total_bytes"] => 85520809984
d["gpu"]["devices"][$i]["unified_memory"] => False
d["gpu"]["devices"][$i]["cc_major"] => 9
d["gpu"]["devices"][$i]["cc_minor"] => 0
d["gpu"]["devices"][$i]["gpudirect_rdma_supported"] => True
d["gpu"]["devices"][$i]["dma_buf_supported"] => True
EOF
  i=$((i + 1))
done | json_check "$TMP/json"
gpu_section "$TMP/json" "$TMP/gpu.json"
golden fake-h100x8-gpu.json "$TMP/gpu.json"

expect 0 fake h100x8 "$SPARKCTL" topo
quiet
gpu_table "$TMP/out" "$TMP/table"
golden fake-h100x8-gpu.txt "$TMP/table"
awk '$2 == "NVIDIA" && $3 == "H100" { print $1, $6, $7, $8, $9, $10, $11 }' "$TMP/table" > "$TMP/rows"
i=0
for b in $buses; do
  echo "$i 80 GiB 9.0 yes yes 00000000:$b:00.0"
  i=$((i + 1))
done > "$TMP/want"
same "$TMP/want" "$TMP/rows"
contains "$TMP/out" ", CUDA 12.4, NCCL 2.28.9, "

# One GPU without GPUDirect RDMA and DMA-BUF (NVML index 5, CUDA ordinal 3):
# the "no" is on its row, and only there.
expect 0 fake h100x8-mixed "$SPARKCTL" topo --json
quiet
json_check "$TMP/out" << EOF
len(d["gpu"]["devices"]) => 8
[g["index"] for g in d["gpu"]["devices"] if not g["gpudirect_rdma_supported"]] => [5]
[g["index"] for g in d["gpu"]["devices"] if not g["dma_buf_supported"]] => [5]
d["gpu"]["devices"][5]["pci_bus_id"] => 00000000:C3:00.0
EOF
expect 0 fake h100x8-mixed "$SPARKCTL" topo
quiet
gpu_table "$TMP/out" "$TMP/table"
awk '$2 == "NVIDIA" { print $1, $9, $10, $11 }' "$TMP/table" > "$TMP/rows"
i=0
for b in $buses; do
  if [ $i = 5 ]; then echo "$i no no 00000000:$b:00.0"; else echo "$i yes yes 00000000:$b:00.0"; fi
  i=$((i + 1))
done > "$TMP/want"
same "$TMP/want" "$TMP/rows"
