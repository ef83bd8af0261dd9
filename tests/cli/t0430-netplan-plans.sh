#!/usr/bin/env bash
# Every plan on every fixture it applies to: golden YAML, and the YAML passes the
# real 'netplan generate', whose networkd files hold the planned addresses and MTU.
. "$SRCDIR/tests/lib.sh"

cd "$SRCDIR"
have_netplan=1
if ! command -v netplan > /dev/null 2>&1; then
  [ "${SPARKCTL_REQUIRE_NETPLAN:-}" = 1 ] && fail "netplan is not installed"
  have_netplan=0
  note "netplan not installed: YAML checked against goldens only"
fi

# fixture plan node nodes [base]: every plan on every DGX Spark fixture.
cases="spark-1cable pair 0 2
spark-1cable pair 1 2
spark-1cable switch 0 4
spark-1cable switch 3 4 172.16.0.0/12
spark-2cable pair 0 2
spark-2cable pair 1 2 10.20.0.0/16
spark-2cable switch 2 5
spark-2cable ring 1 3
spark-ring pair 0 2
spark-ring switch 1 3
spark-ring ring 0 3
spark-ring ring 1 3
spark-ring ring 2 3
spark-ofed pair 0 2
spark-ofed switch 1 2
spark-gid-drift pair 1 2
spark-gid-drift switch 0 3"

# A ring needs both ports cabled; the InfiniBand server has no RoCE netdev to address.
for f in spark-1cable spark-ofed spark-gid-drift; do
  expect 1 "$SPARKCTL" netplan --root "tests/fixtures/$f" --plan ring --node 0
  contains "$TMP/err" "the ring plan needs both ports of"
done
for plan in pair switch ring; do
  expect 3 "$SPARKCTL" netplan --root tests/fixtures/ib-server --plan "$plan" --node 0 --nodes $([ $plan = ring ] && echo 3 || echo 2)
  contains "$TMP/err" "has no ACTIVE RoCE fabric port to address (its fabric is InfiniBand)"
done

while read -r f plan node nodes base; do
  name="netplan-$f-$plan-$node-of-$nodes${base:+-$(echo "$base" | tr ./ __)}"
  expect 0 "$SPARKCTL" netplan --root "tests/fixtures/$f" --plan "$plan" --node "$node" --nodes "$nodes" ${base:+--base "$base"}
  golden "$name.yaml" "$TMP/out"
  # The YAML's addresses: every fabric netdev gets one, twins never share a /24.
  grep -E '^        - ' "$TMP/out" | sed 's/.*- //' > "$TMP/addrs"
  [ -s "$TMP/addrs" ] || fail "$name: no addresses"
  [ "$(cut -d. -f1-3 "$TMP/addrs" | sort | uniq -d)" = "" ] || fail "$name: two netdevs share a subnet"
  [ $have_netplan = 1 ] || continue
  rm -rf "$TMP/np"; mkdir -p "$TMP/np/etc/netplan"
  install -m 600 "$TMP/out" "$TMP/np/etc/netplan/90-sparkctl.yaml"
  netplan generate --root-dir "$TMP/np" 2> "$TMP/np.err" || { cat "$TMP/np.err" >&2; fail "$name: netplan generate failed"; }
  while read -r addr; do
    file=$(grep -l "^Address=$addr\$" "$TMP"/np/run/systemd/network/*.network) || fail "$name: $addr not rendered"
    grep -qx "MTUBytes=9000" "${file%.network}.link" 2> /dev/null || grep -qx "MTUBytes=9000" "$file" \
      || fail "$name: MTU 9000 not rendered for $addr"
    grep -qx "LinkLocalAddressing=no" "$file" || fail "$name: link-local addressing not off"
    ! grep -qE '^(Gateway|DHCP)=(.*yes|[0-9])' "$file" || fail "$name: a gateway or DHCP in $file"
  done < "$TMP/addrs"
done <<< "$cases"

# The two nodes of a pair get the same subnets with different hosts.
"$SPARKCTL" netplan --root tests/fixtures/spark-1cable --plan pair --node 0 | grep '        - ' > "$TMP/n0"
"$SPARKCTL" netplan --root tests/fixtures/spark-1cable --plan pair --node 1 | grep '        - ' > "$TMP/n1"
same <(sed 's/\.11\//.X\//' "$TMP/n0") <(sed 's/\.12\//.X\//' "$TMP/n1")

# /etc/hosts lines for the plan.
expect 0 "$SPARKCTL" netplan --root tests/fixtures/spark-ring --plan ring --node 0 --hosts --names s1,s2,s3
golden netplan-hosts-ring.txt "$TMP/out"
# --names takes ranges as -H does: s[1-3] is s1,s2,s3.
expect 0 "$SPARKCTL" netplan --root tests/fixtures/spark-ring --plan ring --node 0 --hosts --names 's[1-3]'
golden netplan-hosts-ring.txt "$TMP/out"
expect 0 "$SPARKCTL" netplan --root tests/fixtures/spark-ring --plan ring --node 0 --hosts --names 'n[08-10]'
contains "$TMP/out" "n08-fabric n08-r0"
contains "$TMP/out" "n10-fabric n10-r0"
expect 2 "$SPARKCTL" netplan --root tests/fixtures/spark-ring --plan ring --node 0 --hosts --names 's[1-4]'
contains "$TMP/err" "--names gives 4 names for 3 nodes"
expect 2 "$SPARKCTL" netplan --root tests/fixtures/spark-ring --plan ring --node 0 --hosts --names 's[1-3'
contains "$TMP/err" "invalid host range 's[1-3': no ']' after '['"
expect 2 "$SPARKCTL" netplan --root tests/fixtures/spark-ring --plan ring --node 0 --hosts --names 's[1-2],s1'
contains "$TMP/err" "duplicate host 's1'"
expect 0 "$SPARKCTL" netplan --root tests/fixtures/spark-1cable --plan pair --node 0 --hosts
contains "$TMP/out" "192.168.176.12   node1-fabric node1-r0"
