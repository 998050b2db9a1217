#!/usr/bin/env python3
"""Slow clients for the gateway benchmark: N connections to 127.0.0.1:PORT, each sending a keyed POST
head that declares a 1,000-byte body, then one body byte every INTERVAL seconds, for SECONDS in all;
then every connection is closed. Bounded in count and time; loopback only. Prints how many
connections were open at the end and how many the server had closed (408s, or resets)."""
import asyncio
import sys


async def trickle(port, i, seconds, interval, closed):
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        closed.append(i)
        return
    head = ("POST /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: slow-%d\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n" % i)
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    try:
        writer.write(head.encode("ascii"))
        await writer.drain()
        while loop.time() < end:
            await asyncio.sleep(interval)
            if reader.at_eof():
                closed.append(i)
                break
            writer.write(b"x")
            await writer.drain()
    except (ConnectionError, OSError):
        closed.append(i)
    finally:
        writer.close()


async def main(port, count, seconds, interval):
    closed = []
    await asyncio.gather(*(trickle(port, i, seconds, interval, closed) for i in range(count)))
    print("slow clients: %d opened, %d closed by the server before the end" % (count, len(closed)))


if __name__ == "__main__":
    port, count, seconds, interval = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    if count > 5000 or seconds > 600:
        sys.exit("refusing: at most 5000 connections for at most 600 s")
    asyncio.run(main(port, count, seconds, interval))
