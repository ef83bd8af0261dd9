#!/usr/bin/env bash
# serve.nccl with --image across two namespace nodes with real sshd: the
# NCCL the engine would load in the image (serve's Python program, run by a
# stand-in docker against a directory standing for the image, holding
# libraries built here with a chosen build id and "NCCL version" string)
# against each node's own (its inventory): one build PASS, one version of
# two builds FAIL, two versions WARN, no NCCL or no python3 in the image
# said so.  Then 'doctor --engine': serve's checks under group 'serve',
# a port taken on a node a FAIL (exit 4), --json, usage errors.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
. "$SRCDIR/tests/serve/lib-serve.sh"
cluster_require
command -v cc > /dev/null || skip "no C compiler to build the image's libraries with"
cluster_up 2
export TMPDIR=$TMP
hosts=$(cluster_hosts)
image=test/vllm:1
lib=/usr/lib/aarch64-linux-gnu/libnccl.so.2 # the fixture's host NCCL

# A shared library with this build id and NCCL's version string.
make_nccl() { # FILE BUILD_ID VERSION
  mkdir -p "$(dirname "$1")"
  printf 'const char nccl_version_string[] = "NCCL version %s+cuda13.0";\n' "$3" > "$TMP/v.c"
  cc -shared -fPIC -Wl,--build-id=0x"$2" "$TMP/v.c" -o "$1" || fail "cc"
}

# The stand-in docker: 'image inspect' knows $image alone; 'run ... python3 -c
# SNIPPET' runs the program with this host's python3, the image being the
# directory $TMP/image: on sys.path first (a pip wheel there is
# nvidia/nccl/lib/libnccl.so.2), its bin/ first on PATH (its ldconfig), no
# site-packages of this host; no bin/python3 there: docker's answer when the
# image has none.
for n in node0 node1; do
  cat > "$CLUSTER_DIR/$n/bin/docker" << EOF2
#!/bin/sh
if [ "\$1 \$2 \$3 \$4" = "image inspect --format {{.Id}}" ]; then
  [ "\$5" = $image ] || { echo "Error: No such image: \$5" >&2; exit 1; }
  echo sha256:aaaa; exit 0
fi
[ "\$1 \$2 \$3 \$4 \$5 \$6 \$7 \$8" = "run --rm --network none --entrypoint python3 $image -c" ] || exit 2
[ -e $TMP/image/bin/python3 ] || {
  echo 'docker: Error response from daemon: exec: "python3": executable file not found in \$PATH' >&2
  exit 127
}
PYTHONPATH=$TMP/image PATH=$TMP/image/bin:\$PATH exec /usr/bin/python3 -S -c "\$9"
EOF2
  chmod +x "$CLUSTER_DIR/$n/bin/docker"
done
mkdir -p "$TMP/image/bin"
touch "$TMP/image/bin/python3"
printf '#!/bin/sh\necho "1 libs found in cache"\n' > "$TMP/image/bin/ldconfig"
chmod +x "$TMP/image/bin/ldconfig"
wheel=$TMP/image/nvidia/nccl/lib/libnccl.so.2
serve_image() { expect "$1" "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$hosts" --image $image --print; }

# ---- one build everywhere: PASS on each node
make_nccl "$wheel" 4e43434c2d61 2.28.9
set_nccl node0 2.28.9 4e43434c2d61
set_nccl node1 2.28.9 4e43434c2d61
serve_image 0
contains "$TMP/out" "# PASS serve.nccl node0: $image loads NCCL 2.28.9 build 4e43434c2d61 ($wheel), as node0 has"
contains "$TMP/out" "# PASS serve.nccl node1: $image loads NCCL 2.28.9 build 4e43434c2d61 ($wheel), as node1 has"

# ---- node1's is another build of 2.28.9: the hang case, FAIL, nothing else changes
set_nccl node1 2.28.9 4e43434c2d62
serve_image 4
contains "$TMP/out" "# FAIL serve.nccl node1: $image loads NCCL 2.28.9 build 4e43434c2d61 ($wheel), but node1 has NCCL 2.28.9 build 4e43434c2d62 ($lib): two builds of one version, which have hung jobs"
contains "$TMP/out" "#   fix: make them one build: install the image's $wheel on node1 in place of $lib (docker cp from a container of $image), or build $image on the nodes' NCCL"
contains "$TMP/out" "# PASS serve.nccl node0:"
contains "$TMP/err" "sparkctl serve: preflight: serve.nccl node1: $image loads NCCL 2.28.9"

# ---- another version in the image: WARN (bench nccl measured another NCCL)
make_nccl "$wheel" 4e43434c2d63 2.27.7
set_nccl node1 2.28.9 4e43434c2d61
serve_image 0
contains "$TMP/out" "# WARN serve.nccl node0: $image loads NCCL 2.27.7 build 4e43434c2d63 ($wheel), node0 has NCCL 2.28.9 build 4e43434c2d61 ($lib): what 'sparkctl bench nccl' measured on the host is not what the engine runs"
contains "$TMP/out" "#   fix: run 'sparkctl bench nccl' inside $image, so that what is measured is what the engine runs (or serve an image built on NCCL 2.28.9)"

# ---- no wheel: the loader's (ldconfig -p), here the same build as the hosts'
rm -r "$TMP/image/nvidia"
make_nccl "$TMP/image/lib/libnccl.so.2" 4e43434c2d61 2.28.9
printf '#!/bin/sh\necho "2 libs found in cache"\nprintf "\\tlibnccl.so.2 (libc6,AArch64) => %s\\n"\n' \
  "$TMP/image/lib/libnccl.so.2" > "$TMP/ldconfig-lists-nccl"
cp "$TMP/ldconfig-lists-nccl" "$TMP/image/bin/ldconfig"
serve_image 0
contains "$TMP/out" "# PASS serve.nccl node1: $image loads NCCL 2.28.9 build 4e43434c2d61 ($TMP/image/lib/libnccl.so.2), as node1 has"

# ---- no NCCL in the image: WARN, said why; no python3: SKIP, said why
printf '#!/bin/sh\necho "0 libs found in cache"\n' > "$TMP/image/bin/ldconfig"
serve_image 0
contains "$TMP/out" "# WARN serve.nccl node0: $image: no libnccl.so.2: not in a pip wheel (nvidia/nccl/lib on sys.path), not in ldconfig -p"
rm "$TMP/image/bin/python3"
serve_image 0
contains "$TMP/out" "# SKIP serve.nccl node0: $image has no python3 to look for its NCCL with: docker: Error response from daemon: exec: \"python3\": executable file not found in \$PATH"
touch "$TMP/image/bin/python3"
cp "$TMP/ldconfig-lists-nccl" "$TMP/image/bin/ldconfig"

# ---- doctor --engine: serve's checks on the nodes doctor reads ($TMP/flat:
# its report with the columns' blanks squeezed)
doctor() { # STATUS ARGS...
  local status=$1; shift
  expect "$status" "$SPARKCTL" doctor "$@"
  tr -s ' ' < "$TMP/out" > "$TMP/flat"
}
doctor 0 -H "$hosts" --engine vllm --only serve
contains "$TMP/flat" "PASS serve.ports_free ports 8000, 29501 free on node0"
contains "$TMP/flat" "PASS serve.parallel tensor parallel 1 x pipeline parallel 2: the 2 GPUs of 2 nodes"
contains "$TMP/flat" "PASS serve.nccl NCCL 2.28.9 build 4e43434c2d61 ($lib) on every node"
lacks "$TMP/out" "fabric."
doctor 0 -H "$hosts" --engine vllm --only serve --json
json_valid doctor "$TMP/out"
[ "$(json_get "$TMP/out" '" ".join(sorted({f["check"] for f in d["findings"]}))')" = "serve.nccl serve.parallel serve.ports_free" ] ||
  fail "not the serve findings in the JSON"

# A port taken on node0: FAIL naming what listens there, exit 4.
squat node0 29501
doctor 4 -H "$hosts" --engine vllm --only serve.ports_free
contains "$TMP/flat" "FAIL serve.ports_free port 29501 on node0 is taken: python3 (pid $squatter) at 0.0.0.0:29501"
# llama.cpp's head listens on its API alone: 29501 is not its port.
doctor 0 -H "$hosts" --engine llamacpp --only serve.ports_free
unsquat

# With --image: the image and its NCCL, as serve checks them; two builds fail.
set_nccl node1 2.28.9 4e43434c2d62
doctor 4 -H "$hosts" --engine vllm --image $image --only serve.image,serve.nccl
contains "$TMP/flat" "PASS serve.image $image is sha256:aaaa on every node"
contains "$TMP/flat" "FAIL serve.nccl $image loads NCCL 2.28.9 build 4e43434c2d61 ($TMP/image/lib/libnccl.so.2), but node1 has NCCL 2.28.9 build 4e43434c2d62 ($lib): two builds of one version, which have hung jobs"

# The saved inventories: the nodes' own NCCL, without asking them.
for n in node0 node1; do
  "$SPARKCTL_SSH" "$n" -- sparkctl topo --json > "$TMP/$n.json" || fail "topo on $n"
done
doctor 4 --from "$TMP/node0.json" --from "$TMP/node1.json" --engine sglang --only serve
contains "$TMP/flat" "FAIL serve.nccl $TMP/node1.json has NCCL 2.28.9 build 4e43434c2d62 ($lib), but the head $TMP/node0.json has NCCL 2.28.9 build 4e43434c2d61 ($lib): two builds of one version, which have hung jobs"
lacks "$TMP/out" "serve.ports_free"

# A node the plan cannot be made for: serve.plan, with the fix for its cause.
doctor 4 --root "$FIXTURES/ib-server" --engine vllm --only serve
contains "$TMP/flat" "FAIL serve.plan dgx-h100-07: its bootstrap interface eno1 is not a fabric port"
contains "$TMP/flat" "fix: give every node an address on the head's fabric subnet"
contains "$TMP/flat" "PASS serve.parallel tensor parallel 8 x pipeline parallel 1: the 8 GPUs of 1 node"

# The checks are listed; a wrong engine is a usage error.
doctor 0 --list
contains "$TMP/flat" "serve.nccl engine the NCCL the engine loads is the nodes' build"
doctor 2 -H "$hosts" --engine vlm
contains "$TMP/err" "sparkctl doctor: unknown engine 'vlm' (vllm, sglang, trtllm, llamacpp)"
doctor 2 -H "$hosts" --image $image
contains "$TMP/err" "sparkctl doctor: --image goes with --engine"
doctor 2 -H "$hosts" --engine sglang --backend ray
contains "$TMP/err" "sparkctl doctor: --backend is vllm's; sglang has none"
