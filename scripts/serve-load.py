#!/usr/bin/env python3
"""Load test of `tabula serve`: N concurrent clients on loopback for S seconds.

Starts the server on a free port, then each client loops over a mix of requests (a
position's state, an MCTS analysis of SIMS simulations, a Minesweeper position with its
three overlays) and records each latency. Prints requests/s, p50/p99 latency per kind,
errors (non-200 answers or failed connections) and the server's peak memory (VmHWM).

    python3 scripts/serve-load.py [--bin target/release/tabula] [--clients 16]
                                  [--seconds 30] [--sims 200]

Standard library only. Not part of the test suite: a benchmark (BENCHMARKS.md).
"""
import argparse
import http.client
import json
import random
import subprocess
import threading
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release/tabula")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--sims", type=int, default=200)
    args = ap.parse_args()

    server = subprocess.Popen([args.bin, "serve", "--addr", "127.0.0.1:0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        host, port = line.split("http://")[1].split("/")[0].split(":")
        run(args, host, int(port), server.pid)
    finally:
        server.kill()
        server.wait(timeout=10)


def requests(sims, rng):
    moves = ["4", "4", "3", "5", "3", "3"][: rng.randrange(7)]
    yield "state", "/api/state", {"game": "go:9", "moves": ["E5", "C3"][: rng.randrange(3)]}
    yield "analyze", "/api/analyze", {"game": "connect4", "moves": moves, "sims": sims}
    yield "mines", "/api/mines", {"level": "intermediate", "seed": rng.randrange(10**6),
                                  "actions": [{"op": "reveal", "row": 3, "col": 3}]}


def run(args, host, port, pid):
    deadline = time.time() + args.seconds
    lat = {}
    errors = [0]
    lock = threading.Lock()

    def client(k):
        rng = random.Random(k)
        conn = http.client.HTTPConnection(host, port, timeout=120)
        while time.time() < deadline:
            for kind, path, body in requests(args.sims, rng):
                t = time.perf_counter()
                try:
                    conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
                    res = conn.getresponse()
                    res.read()
                    ok = res.status == 200
                except OSError:
                    ok = False
                    conn = http.client.HTTPConnection(host, port, timeout=120)
                dt = time.perf_counter() - t
                with lock:
                    if ok:
                        lat.setdefault(kind, []).append(dt)
                    else:
                        errors[0] += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t0
    with open(f"/proc/{pid}/status") as f:
        hwm = next(l.split()[1] for l in f if l.startswith("VmHWM"))
    total = sum(len(v) for v in lat.values())
    print(f"{args.clients} clients, {wall:.1f} s: {total} requests, {total / wall:.1f} requests/s, "
          f"{errors[0]} errors, peak server memory {int(hwm) / 1024:.0f} MiB")
    for kind, v in sorted(lat.items()):
        v.sort()
        p = lambda q: v[min(len(v) - 1, int(q * len(v)))] * 1000
        print(f"  {kind:8} {len(v):6} requests  p50 {p(0.5):7.1f} ms  p99 {p(0.99):7.1f} ms")


if __name__ == "__main__":
    main()
