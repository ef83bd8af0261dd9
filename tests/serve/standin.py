#!/usr/bin/python3
"""A stand-in for 'vllm serve', SGLang's server, llama.cpp's rpc-server and
llama-server, and TensorRT-LLM's trtllm-llmapi-launch and trtllm-serve (as
the ranks of a real mpirun: trtllm_serve below) in the tests of sparkctl serve.

As 'vllm' it takes the flags sparkctl gives vLLM (multi-node without Ray);
as 'python3 -m sglang.launch_server' (standin.py sglang ...) SGLang's
(--dist-init-addr HOST:PORT); any other flag is refused, as the engines' own
parsers do.  It records its argv, environment and
network view in $SERVE_STANDIN_DIR/node-RANK.json (with what that directory
held when it started: "seen"); and rendezvous as vLLM's
nodes do: the head (--node-rank 0) listens on --master-addr:--master-port
for the --nnodes - 1 headless workers, which connect (retrying while the
head is not up) and say their rank.  Once all are there the head serves
/health and /v1/models on --port (/health 503 while "loading": health-503
below).  A lost peer ends it with status 1, half a second later.
"""
import argparse
import http.server
import json
import os
import select
import socket
import socketserver
import sys
import threading
import time


def parse(argv):
    p = argparse.ArgumentParser(prog="vllm")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("model")
    s.add_argument("--tensor-parallel-size", type=int, required=True)
    s.add_argument("--pipeline-parallel-size", type=int, required=True)
    s.add_argument("--distributed-executor-backend", choices=["mp", "ray"], required=True)
    s.add_argument("--nnodes", type=int)
    s.add_argument("--node-rank", type=int)
    s.add_argument("--master-addr")
    s.add_argument("--master-port", type=int)
    s.add_argument("--headless", action="store_true")
    s.add_argument("--port", type=int)
    s.add_argument("--max-model-len", type=int)
    a = p.parse_args(argv)
    multinode = ("--nnodes", "--node-rank", "--master-addr", "--master-port")
    if a.distributed_executor_backend == "ray":
        # On Ray, vLLM runs on the head only and finds the cluster through Ray.
        if any(f in argv for f in multinode + ("--headless",)):
            p.error("--nnodes and the like are not for --distributed-executor-backend ray")
        if not a.port:
            p.error("the head needs --port")
        a.node_rank = 0
        return a
    if None in (a.nnodes, a.node_rank, a.master_addr, a.master_port):
        p.error("the arguments %s are required" % ", ".join(multinode))
    if a.headless == (a.node_rank == 0):
        p.error("--headless is for every node but rank 0")
    if a.node_rank == 0 and not a.port:
        p.error("the head needs --port")
    if not 0 <= a.node_rank < a.nnodes:
        p.error("--node-rank %d of %d nodes" % (a.node_rank, a.nnodes))
    return a


def parse_sglang(argv):
    p = argparse.ArgumentParser(prog="sglang.launch_server")
    p.add_argument("--model-path", required=True)
    p.add_argument("--tp-size", type=int, required=True)
    p.add_argument("--pp-size", type=int, required=True)
    p.add_argument("--dist-init-addr", required=True)
    p.add_argument("--nnodes", type=int, required=True)
    p.add_argument("--node-rank", type=int, required=True)
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    a = p.parse_args(argv)
    a.model = a.model_path
    a.master_addr, port = a.dist_init_addr.rsplit(":", 1)
    a.master_port = int(port)
    if a.node_rank == 0 and not a.port:
        p.error("the head needs --port")
    return a


def record(a):
    d = os.environ["SERVE_STANDIN_DIR"]
    info = {"argv": sys.argv[1:], "env": dict(os.environ), "pid": os.getpid(),
            "hostname": socket.gethostname(), "seen": sorted(os.listdir(d))}
    tmp = os.path.join(d, ".node-%d.json" % a.node_rank)
    with open(tmp, "w") as f:
        json.dump(info, f)
    os.rename(tmp, os.path.join(d, "node-%d.json" % a.node_rank))


def say(a, text):
    print("standin vllm rank %d: %s" % (a.node_rank, text), flush=True)


def head(a):
    listener = socket.create_server((a.master_addr, a.master_port), reuse_port=False)
    peers = []
    say(a, "waiting for %d workers on %s:%d" % (a.nnodes - 1, a.master_addr, a.master_port))
    while len(peers) < a.nnodes - 1:
        conn, _ = listener.accept()
        rank = conn.makefile().readline().strip()
        say(a, "worker %s joined" % rank)
        peers.append(conn)

    serve_api(a, peers)
    say(a, "a worker was lost")
    return 1


def serve_api(a, peers):
    """/health and /v1/models on --port, until a peer goes away."""
    # $SERVE_STANDIN_DIR/health-503: /health answers 503 (loading) to that
    # many requests, or to all ("always"); each 503 counted in health-503-sent.
    d = os.environ["SERVE_STANDIN_DIR"]
    try:
        loading_for = open(os.path.join(d, "health-503")).read().strip()
    except FileNotFoundError:
        loading_for = "0"
    loading = [0]

    class Api(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/health" and (loading_for == "always" or loading[0] < int(loading_for)):
                loading[0] += 1
                with open(os.path.join(d, "health-503-sent"), "w") as f:
                    f.write("%d\n" % loading[0])
                self.send_error(503)
                return
            if self.path == "/health":
                body = b""
            elif self.path == "/v1/models":
                body = json.dumps({"object": "list", "data": [{"id": a.model}]}).encode()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        def server_bind(self):
            # Not HTTPServer's: its reverse lookup of the name waits for DNS.
            socketserver.TCPServer.server_bind(self)
            self.server_name, self.server_port = "standin", a.port

    api = Server((getattr(a, "bind", "0.0.0.0"), a.port), Api)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    name = getattr(a, "prog", None) or ("vllm rank 0" if not hasattr(a, "rpc") else "llama-server")
    sys.stdout.write("standin %s: serving on port %d\n" % (name, a.port))
    sys.stdout.flush()
    select.select(peers, [], [])
    # An engine ends a moment after the peer it lost (a failed collective, a
    # health check), not in the same millisecond: by more than a busy host's
    # agent may take to reap the peer, so that the clocks put the peer first.
    time.sleep(0.5)


def worker(a):
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = socket.create_connection((a.master_addr, a.master_port), timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline:
                say(a, "no head at %s:%d" % (a.master_addr, a.master_port))
                return 1
            time.sleep(0.2)
    conn.settimeout(None)
    conn.sendall(b"%d\n" % a.node_rank)
    say(a, "joined the head")
    conn.recv(1)
    say(a, "lost the head")
    return 1


def record_as(name):
    d = os.environ["SERVE_STANDIN_DIR"]
    info = {"argv": sys.argv[1:], "env": dict(os.environ), "pid": os.getpid(),
            "hostname": socket.gethostname(), "seen": sorted(os.listdir(d))}
    with open(os.path.join(d, "." + name), "w") as f:
        json.dump(info, f)
    os.rename(os.path.join(d, "." + name), os.path.join(d, name))


def rpc_server(argv):
    """llama.cpp's rpc-server: --host ADDR --port PORT; serves whoever connects."""
    p = argparse.ArgumentParser(prog="rpc-server")
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    a = p.parse_args(argv)
    listener = socket.create_server((a.host, a.port))
    record_as("rpc-server-%s.json" % socket.gethostname())
    print("standin rpc-server: listening on %s:%d" % (a.host, a.port), flush=True)
    while True:
        conn, peer = listener.accept()
        # llama-server says hello; a probe of the port says nothing and goes.
        if conn.makefile().readline().strip() == "llama-server":
            print("standin rpc-server: llama-server connected", flush=True)
            conn.recv(1)
            print("standin rpc-server: llama-server went away", flush=True)
        conn.close()


def llama_server(argv):
    """llama-server -m FILE | -hf REPO --rpc ADDR:PORT,... -ngl N --host H --port P."""
    p = argparse.ArgumentParser(prog="llama-server")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("-m")
    g.add_argument("-hf")
    p.add_argument("--rpc", required=True)
    p.add_argument("-ngl", type=int, required=True)
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    a = p.parse_args(argv)
    a.model, a.node_rank = a.m or a.hf, 0
    record_as("llama-server.json")
    # As llama.cpp's RPC backend: one connection to each server, no retry.
    peers = []
    for addr in a.rpc.split(","):
        host, port = addr.rsplit(":", 1)
        try:
            conn = socket.create_connection((host, int(port)), timeout=5)
        except OSError as e:
            print("standin llama-server: failed to connect to %s: %s" % (addr, e), flush=True)
            return 1
        conn.sendall(b"llama-server\n")
        peers.append(conn)
    print("standin llama-server: connected to %d rpc-servers" % len(peers), flush=True)
    serve_api(a, peers)
    print("standin llama-server: an rpc-server was lost", flush=True)
    return 1


def ray(argv):
    """ray start --block --head --port=P --node-ip-address=A --include-dashboard=false, or
    ray start --block --address=H:P --node-ip-address=A: the GCS and a raylet."""
    p = argparse.ArgumentParser(prog="ray")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("start")
    s.add_argument("--block", action="store_true", required=True)
    s.add_argument("--head", action="store_true")
    s.add_argument("--port", type=int)
    s.add_argument("--address")
    s.add_argument("--node-ip-address", required=True)
    s.add_argument("--include-dashboard", choices=["false", "true"])
    a = p.parse_args(argv)
    if a.head == bool(a.address):
        p.error("--head or --address")
    if a.head:
        listener = socket.create_server((a.node_ip_address, a.port))
        record_as("ray-head.json")
        print("standin ray: GCS on %s:%d" % (a.node_ip_address, a.port), flush=True)
        conns = [listener]
        while True:
            ready, _, _ = select.select(conns, [], [])
            for c in ready:
                if c is listener:
                    conn, peer = listener.accept()
                    print("standin ray: %s joined" % conn.makefile().readline().strip(), flush=True)
                    conns.append(conn)
                elif not c.recv(1):
                    conns.remove(c)
    host, port = a.address.rsplit(":", 1)
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = socket.create_connection((host, int(port)), timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline:
                print("standin ray: no GCS at %s" % a.address, flush=True)
                return 1
            time.sleep(0.2)
    conn.settimeout(None)
    conn.sendall(b"raylet %s\n" % a.node_ip_address.encode())
    record_as("ray-worker-%s.json" % socket.gethostname())
    print("standin ray: raylet joined %s" % a.address, flush=True)
    conn.recv(1)
    print("standin ray: lost the GCS", flush=True)
    return 1


def vllm_on_ray(a):
    """vLLM's head on Ray: a driver of the local Ray cluster, then the API."""
    addr = os.environ["RAY_NODE_IP_ADDRESS"]
    conn = socket.create_connection((addr, int(os.environ.get("SERVE_STANDIN_RAY_PORT", "6379"))))
    conn.sendall(b"driver\n")
    serve_api(a, [conn])
    say(a, "lost the Ray cluster")
    return 1


def trtllm_serve(argv):
    """TensorRT-LLM 1.1's trtllm-serve MODEL, one rank of mpirun's job.

    Its flags as trtllm-serve's own (click) parser takes them; its rank and
    the job's size from Open MPI's OMPI_COMM_WORLD_RANK/_SIZE (a rank not
    started by mpirun is refused), which must be --tp_size x --pp_size.
    Where the engine's ranks meet over MPI, the stand-in's meet over TCP:
    rank 0 listens on --port + 1 at the address of the node where mpirun
    runs (the head), which every rank reads from the URI of mpirun that
    Open MPI gives it (OMPI_MCA_orte_hnp_uri, tcp://ADDR,...:PORT); the
    other ranks connect to it and say their rank.  Once all are there rank
    0 serves /health and /v1/models on --host:--port.  A lost peer ends a
    rank with status 1, as a lost rank ends the real job.
    """
    p = argparse.ArgumentParser(prog="trtllm-serve")
    p.add_argument("model")
    p.add_argument("--tokenizer")
    p.add_argument("--host", default="localhost")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--backend", choices=["pytorch", "tensorrt", "trt", "_autodeploy"],
                   default="pytorch")
    p.add_argument("--log_level")
    p.add_argument("--max_beam_width", type=int)
    p.add_argument("--max_batch_size", type=int)
    p.add_argument("--max_num_tokens", type=int)
    p.add_argument("--max_seq_len", type=int)
    p.add_argument("--tp_size", type=int, default=1)
    p.add_argument("--pp_size", type=int, default=1)
    p.add_argument("--ep_size", type=int)
    p.add_argument("--gpus_per_node", type=int)
    p.add_argument("--kv_cache_free_gpu_memory_fraction", type=float)
    p.add_argument("--trust_remote_code", action="store_true")
    p.add_argument("--extra_llm_api_options")
    a = p.parse_args(argv)
    try:
        a.node_rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
        size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
        uri = os.environ["OMPI_MCA_orte_hnp_uri"]
    except KeyError as e:
        p.error("%s is not set: not a rank of mpirun" % e)
    if size != a.tp_size * a.pp_size:
        p.error("%d ranks, but --tp_size %d x --pp_size %d is %d"
                % (size, a.tp_size, a.pp_size, a.tp_size * a.pp_size))
    # "JOBID.VPID;tcp://ADDR,ADDR:PORT;tcp6://...": the first IPv4 address.
    tcp = [u for u in uri.split(";") if u.startswith("tcp://")]
    if not tcp:
        p.error("no tcp:// address in OMPI_MCA_orte_hnp_uri=%s" % uri)
    head_addr = tcp[0][len("tcp://"):].rsplit(":", 1)[0].split(",")[0]
    a.prog, a.bind = "trtllm-serve rank %d" % a.node_rank, a.host
    record(a)

    def say_(text):
        # One write a line: mpirun forwards what each write gives it, and
        # the lines of two ranks must not run into each other.
        sys.stdout.write("standin trtllm-serve rank %d: %s\n" % (a.node_rank, text))
        sys.stdout.flush()

    if a.node_rank == 0:
        listener = socket.create_server((head_addr, a.port + 1))
        say_("waiting for %d ranks on %s:%d" % (size - 1, head_addr, a.port + 1))
        peers = []
        while len(peers) < size - 1:
            conn, _ = listener.accept()
            say_("rank %s joined" % conn.makefile().readline().strip())
            peers.append(conn)
        serve_api(a, peers)
        say_("a rank was lost")
        return 1
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = socket.create_connection((head_addr, a.port + 1), timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline:
                say_("no rank 0 at %s:%d" % (head_addr, a.port + 1))
                return 1
            time.sleep(0.2)
    conn.settimeout(None)
    conn.sendall(b"%d\n" % a.node_rank)
    say_("joined rank 0")
    conn.recv(1)
    say_("lost rank 0")
    return 1


def main():
    if sys.argv[1:2] == ["trtllm-llmapi-launch"]:
        # As TensorRT-LLM's: the command it is given, on every rank.
        os.execvp(sys.argv[2], sys.argv[2:])
    if sys.argv[1:2] == ["trtllm-serve"]:
        return trtllm_serve(sys.argv[2:])
    if sys.argv[1:2] == ["ray"]:
        return ray(sys.argv[2:])
    if sys.argv[1:2] == ["rpc-server"]:
        return rpc_server(sys.argv[2:])
    if sys.argv[1:2] == ["llama-server"]:
        return llama_server(sys.argv[2:])
    if sys.argv[1:2] == ["sglang"]:
        del sys.argv[1]
        a = parse_sglang(sys.argv[1:])
    else:
        a = parse(sys.argv[1:])
    record(a)
    if getattr(a, "distributed_executor_backend", None) == "ray":
        return vllm_on_ray(a)
    return head(a) if a.node_rank == 0 else worker(a)


if __name__ == "__main__":
    sys.exit(main())
