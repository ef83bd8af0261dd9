"""A crafted mDNS responder for the discover tests: it answers every
legacy-unicast PTR query for _sparkctl._tcp.local with handcrafted packets
(two answers of one host name with different ids, then malformed ones, then
a bare PTR for "lazy" whose SRV, TXT and A it gives only when asked for
them), echoing the query's ID.  Usage: responder.py ADDRESS READY_FILE"""
import socket
import struct
import sys


def name(n):
    return b"".join(bytes([len(l)]) + l.encode() for l in n.split(".")) + b"\0"


def rr(n, rtype, data):
    return n + struct.pack(">HHIH", rtype, 0x8001, 120, len(data)) + data


def reply(qid, host, node_id, addr):
    inst = name(host + "._sparkctl._tcp.local")
    target = name(host + ".local")
    txt = b"".join(bytes([len(t)]) + t for t in (b"id=" + node_id.encode(), b"ver=9.9"))
    records = [
        rr(name("_sparkctl._tcp.local"), 12, inst),
        rr(inst, 33, struct.pack(">HHH", 0, 0, 22) + target),
        rr(inst, 16, txt),
        rr(target, 1, socket.inet_aton(addr)),
    ]
    return struct.pack(">HHHHHH", qid, 0x8400, 0, 1, 0, 3) + b"".join(records)


def malformed(qid):
    hdr = lambda qd, an: struct.pack(">HHHHHH", qid, 0x8400, qd, an, 0, 0)
    # a name that points at itself
    loop = hdr(1, 0) + struct.pack(">HHH", 0xC00C, 12, 1)
    # a TXT string of 200 bytes in a record of 10
    over = hdr(0, 1) + name("x.local") + struct.pack(">HHIH", 16, 1, 120, 10) + bytes([200]) + b"a" * 200
    # a good reply cut short
    cut = reply(qid, "cut", "c" * 32, "198.18.0.99")[:40]
    return [loop, over, cut]


def answer(qid, record):
    return struct.pack(">HHHHHH", qid, 0x8400, 0, 1, 0, 0) + record


def question(data):
    """The first question's name and type (queries are not compressed)."""
    labels, i = [], 12
    while i < len(data) and data[i]:
        labels.append(data[i + 1:i + 1 + data[i]].decode("latin-1"))
        i += 1 + data[i]
    return ".".join(labels), struct.unpack(">H", data[i + 1:i + 3])[0]


def lazy(qid, qname, qtype, addr):
    inst = name("lazy._sparkctl._tcp.local")
    if qtype == 12:
        return [answer(qid, rr(name("_sparkctl._tcp.local"), 12, inst))]
    if qtype == 33 and qname == "lazy._sparkctl._tcp.local":
        return [answer(qid, rr(inst, 33, struct.pack(">HHH", 0, 0, 22) + name("lazy.local")))]
    if qtype == 16 and qname == "lazy._sparkctl._tcp.local":
        return [answer(qid, rr(inst, 16, bytes([35]) + b"id=" + b"d" * 32 + bytes([7]) + b"ver=9.9"))]
    if qtype == 1 and qname == "lazy.local":
        return [answer(qid, rr(name("lazy.local"), 1, socket.inet_aton(addr)))]
    return []


def main():
    addr, ready = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("", 5353))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 socket.inet_aton("224.0.0.251") + socket.inet_aton(addr))
    open(ready, "w").close()
    while True:
        data, src = s.recvfrom(9000)
        if len(data) < 17 or src[1] == 5353:
            continue
        qid = struct.unpack(">H", data[:2])[0]
        qname, qtype = question(data)
        packets = []
        if qtype == 12 and qname == "_sparkctl._tcp.local":
            packets = [reply(qid, "twin", "a" * 32, addr), reply(qid, "twin", "b" * 32, addr)]
            packets += malformed(qid)
        for p in packets + lazy(qid, qname, qtype, addr):
            s.sendto(p, src)


main()
