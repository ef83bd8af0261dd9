#!/usr/bin/env python3
"""tests/cluster/tree.py - fit a copied fixture tree to one fake cluster node.

  tree.py init TREE INDEX HOSTNAME MGMT_IF GATEWAY IF=CIDR[,CIDR...]...
  tree.py addr TREE IF [CIDR...]

'init' makes TREE (a copy of a tests/fixtures tree) describe node INDEX of a
cluster built by tests/cluster/cluster.sh:

  * proc/sys/kernel/hostname becomes HOSTNAME;
  * the node gets its own identity: byte 3 of every MAC address is increased
    by INDEX (mod 256), and so are the identifiers mlx5 derives from the MAC
    (node and system image GUIDs, phys_switch_id, link-local GIDs and IPv6
    addresses), and the last byte of each GPU UUID; node 0 keeps the
    fixture's own values;
  * the routes of MGMT_IF (proc/net/route) point into the LAN of the
    management address, with GATEWAY as the default gateway;
  * then each IF=CIDR list is applied as by 'addr'.

'addr' sets the IPv4 addresses of IF in .sparkctl/ip-address.json (and gives
IF the link-local IPv6 address that the kernel derives from its MAC, as a
live interface has), and rewrites the IPv4-mapped GIDs of the RDMA port whose
netdev is IF to match, after the GIDs that are not IPv4-mapped.  Interfaces
that the tree does not have are left alone.
"""
import ipaddress
import json
import os
import re
import sys


def rd(path):
    with open(path) as f:
        return f.read().strip()


def wr(path, text):
    with open(path, "w") as f:
        f.write(text + "\n")


def mac_bytes(mac):
    return [int(x, 16) for x in mac.split(":")]


def bump(value, index):
    return (value + index) % 256


def tweak_mac(mac, index):
    b = mac_bytes(mac)
    if len(b) != 6 or b == [0] * 6:
        return mac
    b[3] = bump(b[3], index)
    return ":".join("%02x" % x for x in b)


def tweak_guid(guid, index):
    """A GUID 'xxxx:xxxx:xxxx:xxxx': byte 5 is byte 3 of the MAC."""
    h = guid.replace(":", "")
    if not re.fullmatch(r"[0-9a-fA-F]{16}", h):
        return guid
    b = bytearray.fromhex(h)
    b[5] = bump(b[5], index)
    h = b.hex()
    return ":".join(h[i:i + 4] for i in range(0, 16, 4))


def tweak_switch_id(sid, index):
    """phys_switch_id: the adapter GUID's bytes reversed (byte 2 is MAC byte 3)."""
    if not re.fullmatch(r"[0-9a-fA-F]{16}", sid):
        return sid
    b = bytearray.fromhex(sid)
    b[2] = bump(b[2], index)
    return b.hex()


def tweak_ll(addr, index):
    """A link-local (EUI-64) IPv6 address object: byte 13 is byte 3 of the MAC."""
    if not addr.is_link_local or addr.packed[11:13] != b"\xff\xfe":
        return addr
    b = bytearray(addr.packed)
    b[13] = bump(b[13], index)
    return ipaddress.IPv6Address(bytes(b))


def gid_text(addr):
    h = addr.packed.hex()
    return ":".join(h[i:i + 4] for i in range(0, 32, 4))


def eui64_ll(mac):
    b = mac_bytes(mac)
    b[0] ^= 2
    return ipaddress.IPv6Address(bytes([0xfe, 0x80] + [0] * 6 + b[:3] + [0xff, 0xfe] + b[3:]))


class Tree:
    def __init__(self, root):
        self.root = root
        self.addr_file = os.path.join(root, ".sparkctl", "ip-address.json")
        self.host_file = os.path.join(root, ".sparkctl", "host.json")

    def p(self, *parts):
        return os.path.join(self.root, *parts)

    def netdevs(self):
        d = self.p("sys", "class", "net")
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def mac(self, ifname):
        f = self.p("sys", "class", "net", ifname, "address")
        return rd(f) if os.path.exists(f) else None

    def load_addrs(self):
        if not os.path.exists(self.addr_file):
            return []
        with open(self.addr_file) as f:
            return json.load(f)

    def save_addrs(self, doc):
        lines = []
        for e in doc:
            infos = ",\n".join("    " + json.dumps(a) for a in e.get("addr_info", []))
            head = {k: v for k, v in e.items() if k != "addr_info"}
            lines.append("  " + json.dumps(head)[:-1] + ', "addr_info": [\n'
                         + (infos + "\n" if infos else "") + "  ]}")
        with open(self.addr_file, "w") as f:
            f.write("[\n" + ",\n".join(lines) + "\n]\n")

    def rdma_ports(self):
        """(port directory, netdev) of every RDMA port of the tree."""
        base = self.p("sys", "class", "infiniband")
        out = []
        if not os.path.isdir(base):
            return out
        for dev in sorted(os.listdir(base)):
            pdir = os.path.join(base, dev, "ports")
            if not os.path.isdir(pdir):
                continue
            for port in sorted(os.listdir(pdir)):
                nd = os.path.join(pdir, port, "gid_attrs", "ndevs", "0")
                out.append((os.path.join(pdir, port), rd(nd) if os.path.exists(nd) else None))
        return out

    # ---- init ----------------------------------------------------------
    def identity(self, index):
        for nd in self.netdevs():
            for name, fn in (("address", tweak_mac), ("phys_switch_id", tweak_switch_id)):
                f = self.p("sys", "class", "net", nd, name)
                if os.path.isfile(f):
                    wr(f, fn(rd(f), index))
        base = self.p("sys", "class", "infiniband")
        for dev in (sorted(os.listdir(base)) if os.path.isdir(base) else []):
            for name in ("node_guid", "sys_image_guid"):
                f = os.path.join(base, dev, name)
                if os.path.isfile(f):
                    wr(f, tweak_guid(rd(f), index))
        for port, _ in self.rdma_ports():
            gdir = os.path.join(port, "gids")
            for g in os.listdir(gdir) if os.path.isdir(gdir) else []:
                f = os.path.join(gdir, g)
                a = ipaddress.IPv6Address(rd(f))
                wr(f, gid_text(tweak_ll(a, index)))
        doc = self.load_addrs()
        for e in doc:
            for a in e.get("addr_info", []):
                if a.get("family") == "inet6":
                    a["local"] = str(tweak_ll(ipaddress.IPv6Address(a["local"]), index))
        if doc:
            self.save_addrs(doc)
        if os.path.exists(self.host_file) and index:
            # Only the UUID strings change; the file keeps its layout.
            with open(self.host_file) as f:
                text = f.read()
            text = re.sub(r'("uuid": "GPU-[0-9a-fA-F-]*)([0-9a-fA-F]{2})"',
                          lambda m: '%s%02x"' % (m.group(1), bump(int(m.group(2), 16), index)),
                          text)
            with open(self.host_file, "w") as f:
                f.write(text)

    def routes(self, mgmt, cidr, gateway):
        f = self.p("proc", "net", "route")
        if not os.path.exists(f):
            return
        net = ipaddress.IPv4Interface(cidr).network

        def hexip(a):  # /proc/net/route: the address's bytes, little-endian
            return "%08X" % int.from_bytes(ipaddress.IPv4Address(a).packed, "little")
        with open(f) as fh:
            lines = fh.read().split("\n")
        for i, line in enumerate(lines[1:], 1):
            cols = line.split("\t")
            if len(cols) < 8 or cols[0] != mgmt:
                continue
            if cols[1] == "00000000":            # default route
                cols[2] = hexip(gateway)
            else:                                # the connected LAN
                cols[1] = hexip(net.network_address)
                cols[7] = hexip(net.netmask)
            lines[i] = "\t".join(cols)
        with open(f, "w") as fh:
            fh.write("\n".join(lines))

    # ---- addr ----------------------------------------------------------
    def set_addrs(self, ifname, cidrs):
        ifaces = [ipaddress.IPv4Interface(c) for c in cidrs]
        doc = self.load_addrs()
        entry = next((e for e in doc if e.get("ifname") == ifname), None)
        if entry is None:
            if ifname not in self.netdevs():
                return
            f = self.p("sys", "class", "net", ifname, "ifindex")
            entry = {"ifindex": int(rd(f)) if os.path.exists(f) else 0, "ifname": ifname,
                     "addr_info": []}
            doc.append(entry)
        v6 = [a for a in entry.get("addr_info", []) if a.get("family") == "inet6"]
        mac = self.mac(ifname)
        if mac and not any(ipaddress.IPv6Address(a["local"]).is_link_local for a in v6):
            v6.append({"family": "inet6", "local": str(eui64_ll(mac)), "prefixlen": 64})
        v4 = [{"family": "inet", "local": str(i.ip), "prefixlen": i.network.prefixlen}
              for i in ifaces]
        entry["addr_info"] = v4 + v6
        self.save_addrs(doc)
        for port, nd in self.rdma_ports():
            if nd == ifname:
                self.set_gids(port, ifname, ifaces)

    def set_gids(self, port, ifname, ifaces):
        gdir = os.path.join(port, "gids")
        types = os.path.join(port, "gid_attrs", "types")
        ndevs = os.path.join(port, "gid_attrs", "ndevs")
        keep = []
        for g in sorted(os.listdir(gdir), key=int):
            a = ipaddress.IPv6Address(rd(os.path.join(gdir, g)))
            if a.ipv4_mapped is not None or a == ipaddress.IPv6Address(0):
                for d in (gdir, types, ndevs):
                    if os.path.exists(os.path.join(d, g)):
                        os.unlink(os.path.join(d, g))
            else:
                keep.append(int(g))
        n = max(keep) + 1 if keep else 0
        for i in ifaces:
            mapped = ipaddress.IPv6Address("::ffff:" + str(i.ip))
            for kind in ("IB/RoCE v1", "RoCE v2"):
                wr(os.path.join(gdir, str(n)), gid_text(mapped))
                wr(os.path.join(types, str(n)), kind)
                wr(os.path.join(ndevs, str(n)), ifname)
                n += 1


def main(argv):
    if len(argv) >= 7 and argv[1] == "init":
        t = Tree(argv[2])
        index, host, mgmt, gateway = int(argv[3]), argv[4], argv[5], argv[6]
        wr(t.p("proc", "sys", "kernel", "hostname"), host)
        t.identity(index)
        for spec in argv[7:]:
            ifname, cidrs = spec.split("=", 1)
            cidrs = [c for c in cidrs.split(",") if c]
            t.set_addrs(ifname, cidrs)
            if ifname == mgmt and cidrs:
                t.routes(mgmt, cidrs[0], gateway)
    elif len(argv) >= 4 and argv[1] == "addr":
        Tree(argv[2]).set_addrs(argv[3], argv[4:])
    else:
        sys.exit(__doc__.split("\n\n")[0])


if __name__ == "__main__":
    main(sys.argv)
