#!/usr/bin/env python3
"""Concurrent duplicates through gateways that share one store, counted at the upstream.

Sends KEYS new idempotency keys, each COPIES times at the same moment (the copies of a key spread
over the gateways, all released by one barrier), GROUP keys at a time so that the store gathers
copies of different keys into the same batches; then reads the demo upstream's ledger and counts
the charges it created for each key. The ledger rule says one charge per key; the script prints how
many keys were charged 0, 1 and more than once, and exits 1 if any key was charged twice.

Usage: herd.py UPSTREAM_PORT GATEWAY_PORT[,GATEWAY_PORT...] KEYS COPIES [GROUP]
Only 127.0.0.1 is a target; every request has a 30 s timeout.
"""
import collections
import http.client
import json
import sys
import threading
import uuid


def post(port, key, barrier, answers):
    barrier.wait(timeout=30)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/charges", body=json.dumps({"amount": 1000, "currency": "EUR"}),
                     headers={"Idempotency-Key": key, "Content-Type": "application/json",
                              "Api-Key": "herd"})
        answers[conn.getresponse().status] += 1
        conn.close()
    except OSError as e:
        answers[type(e).__name__] += 1


def main():
    upstream = int(sys.argv[1])
    gateways = [int(p) for p in sys.argv[2].split(",")]
    keys, copies = int(sys.argv[3]), int(sys.argv[4])
    group = int(sys.argv[5]) if len(sys.argv) > 5 else 10
    run = uuid.uuid4().hex[:8]
    answers = collections.Counter()
    names = [f"herd-{run}-{copies}-{k}" for k in range(keys)]
    for start in range(0, keys, group):
        batch = names[start:start + group]
        barrier = threading.Barrier(len(batch) * copies)
        threads = []
        for key in batch:
            for c in range(copies):
                t = threading.Thread(target=post, args=(gateways[c % len(gateways)], key, barrier, answers))
                t.start()
                threads.append(t)
        for t in threads:
            t.join(60)
    conn = http.client.HTTPConnection("127.0.0.1", upstream, timeout=30)
    conn.request("GET", "/ledger")
    ledger = json.loads(conn.getresponse().read())["ledger"]
    charges = collections.Counter(c["idempotency_key"] for c in ledger
                                  if str(c.get("idempotency_key", "")).startswith(f"herd-{run}-"))
    per_key = collections.Counter(charges.get(name, 0) for name in names)
    twice = sum(n for times, n in per_key.items() if times > 1)
    print(f"{keys} keys x {copies} copies at once over {len(gateways)} gateway(s): "
          f"charged once {per_key.get(1, 0)}, never {per_key.get(0, 0)}, more than once {twice}; "
          f"answers {dict(sorted(answers.items(), key=str))}")
    sys.exit(1 if twice else 0)


if __name__ == "__main__":
    main()
