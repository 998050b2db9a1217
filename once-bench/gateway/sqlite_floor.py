#!/usr/bin/env python3
"""The floor under the embedded store: what SQLite itself does on this disk, with no JVM in the way.

Prints two lines, tab-separated, for run.sh:
  sync   <median µs> <p99 µs>      one 4 KiB write + fsync, 200 times
  floor  <keys/s at 1> <at 8> <at 50>
The floor is the embedded store's own schema (every db/once/sqlite/V*__*.sql in order, read from
the store's resources, so each index the store keeps is kept here too) in WAL mode with
synchronous=FULL, as the store opens it for --durability power-loss: each key is claimed (an INSERT)
in one transaction and finished (an UPDATE with a small result) in another, committed one key at a
time, then 8 and 50 keys to a transaction, the way a group commit gathers concurrent requests. So
the gateway on the embedded store can be read as a fraction of what the disk and SQLite allow.

Usage: sqlite_floor.py DIR [SECONDS_PER_SIZE]   (DIR on the same disk as the gateway's data)
Bounded: each batch size runs for SECONDS_PER_SIZE (default 3) seconds at most.
"""
import os
import re
import sqlite3
import statistics
import sys
import time

# The store's own schema, read from where the store reads it: every migration, in order.
MIGRATIONS = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "../../once-store-jdbc/src/main/resources/db/once/sqlite",
)


def schema():
    names = [n for n in os.listdir(MIGRATIONS) if re.fullmatch(r"V\d+__\w+\.sql", n)]
    names.sort(key=lambda n: int(n[1 : n.index("__")]))
    texts = []
    for name in names:
        with open(os.path.join(MIGRATIONS, name), encoding="utf-8") as f:
            texts.append(f.read())
    return "\n".join(texts)

RESULT = b'{"status":201,"body":"{\\"id\\":\\"pay_1\\"}"}'


def sync_times(directory, count=200):
    path = os.path.join(directory, "sync-probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    block = os.urandom(4096)
    times = []
    try:
        for i in range(count):
            os.pwrite(fd, block, (i % 16) * 4096)
            start = time.perf_counter_ns()
            os.fsync(fd)
            times.append((time.perf_counter_ns() - start) / 1000)
    finally:
        os.close(fd)
        os.unlink(path)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def floor(directory, batch, seconds):
    path = os.path.join(directory, f"floor-{batch}.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.executescript(schema())
    keys = 0
    deadline = time.monotonic() + seconds
    start = time.monotonic()
    while time.monotonic() < deadline:
        now = time.time_ns() // 1000
        names = [f"k{keys + i}" for i in range(batch)]
        db.execute("BEGIN IMMEDIATE")
        for name in names:
            db.execute(
                "INSERT INTO once_records (scope, idem_key, state, fingerprint, token, attempt,"
                " lease_until, expires_at, created_at) VALUES ('s', ?, 'IN_PROGRESS', 'f', ?, 1,"
                " ?, ?, ?)",
                (name, keys, now + 30_000_000, now + 86_400_000_000, now),
            )
        db.execute("COMMIT")
        db.execute("BEGIN IMMEDIATE")
        for name in names:
            db.execute(
                "UPDATE once_records SET state = 'COMPLETED', result = ? WHERE scope = 's'"
                " AND idem_key = ? AND token = ?",
                (RESULT, name, keys),
            )
        db.execute("COMMIT")
        keys += batch
    elapsed = time.monotonic() - start
    db.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    return keys / elapsed


def main():
    directory = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    os.makedirs(directory, exist_ok=True)
    median, p99 = sync_times(directory)
    print(f"sync\t{median:.0f}\t{p99:.0f}")
    print("floor\t" + "\t".join(f"{floor(directory, b, seconds):.0f}" for b in (1, 8, 50)))


if __name__ == "__main__":
    main()
