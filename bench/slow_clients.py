#!/usr/bin/env python3
"""Holds slow and idle connections open against `memfit serve` while polling it (bench/server_load.sh).

  slow_clients.py PORT [--slow 1000] [--idle 1000] [--seconds 30] [--per-address 50]

Slow clients send one byte of an endless header a second; idle ones send nothing. Both reconnect
when the server closes them (its deadlines), so the load stays for the whole run. They connect
from 127.0.1.x and 127.0.2.x (any 127/8 address is this machine), `--per-address` to an address,
under the server's per-address cap; the poller asks from 127.0.0.1. Every 100 ms the poller GETs
/api/v1/health and POSTs a cached estimate on fresh connections; an answer slower than 100 ms or
missing is a failure. Prints one summary line; exit status 1 on any failure.
"""
import argparse
import selectors
import socket
import threading
import time

SLOW_HEADER = b"GET /api/v1/health HTTP/1.1\r\nX-Slow: "
ESTIMATE = b'{"model": "meta-llama/Llama-3.1-8B", "dtypes": ["float16", "int4"]}'


def connect(port, source):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    return s


def ask(port, request, timeout):
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(request)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    return None, time.monotonic() - start
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            while len(body) < length:
                chunk = s.recv(65536)
                if not chunk:
                    return None, time.monotonic() - start
                body += chunk
            return int(head[9:12]), time.monotonic() - start
    except OSError:
        return None, time.monotonic() - start


def poll(args, stop, results):
    health = b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    estimate = (b"POST /api/v1/estimate-memory HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(ESTIMATE), ESTIMATE))
    while not stop.is_set():
        for name, request in (("health", health), ("estimate", estimate)):
            status, seconds = ask(args.port, request, timeout=5)
            results.append((name, status, seconds))
        time.sleep(0.1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("--slow", type=int, default=1000)
    p.add_argument("--idle", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--per-address", type=int, default=50)
    args = p.parse_args()

    sel = selectors.DefaultSelector()
    sources = {}
    slow = set()
    progress = {}  # slow socket -> bytes sent
    reconnects = 0

    def open_one(kind, i):
        net = 1 if kind == "slow" else 2
        source = "127.0.%d.%d" % (net, 2 + i // args.per_address)
        s = connect(args.port, source)
        sources[s] = (kind, i)
        sel.register(s, selectors.EVENT_READ)
        if kind == "slow":
            slow.add(s)

    for i in range(args.slow):
        open_one("slow", i)
    for i in range(args.idle):
        open_one("idle", i)
    time.sleep(1)  # let the connections settle before polling

    stop = threading.Event()
    results = []
    poller = threading.Thread(target=poll, args=(args, stop, results))
    poller.start()
    end = time.monotonic() + args.seconds
    next_byte = time.monotonic()
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.1):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:  # closed by the server (a deadline): come back
                kind, i = sources.pop(s)
                sel.unregister(s)
                slow.discard(s)
                progress.pop(s, None)
                s.close()
                reconnects += 1
                open_one(kind, i)
        if time.monotonic() >= next_byte:
            next_byte += 1
            for s in list(slow):
                sent = progress.get(s, 0)
                try:
                    s.send(SLOW_HEADER[sent:sent + 1] if sent < len(SLOW_HEADER) else b"a")
                except OSError:
                    pass
                progress[s] = sent + 1
    stop.set()
    poller.join()
    for s in list(sources):
        s.close()

    failures = [r for r in results if r[1] != 200 or r[2] > 0.1]
    worst = max((r[2] for r in results), default=0.0)
    latencies = sorted(r[2] for r in results)
    p99 = latencies[int(len(latencies) * 0.99) - 1] if latencies else 0.0
    print("slow/idle: %d slow + %d idle connections for %.0f s (%d reconnects after server closes); "
          "%d polls of health and a cached estimate: p99 %.1f ms, max %.1f ms, %d over 100 ms or failed"
          % (args.slow, args.idle, args.seconds, reconnects, len(results), p99 * 1000, worst * 1000,
             len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
