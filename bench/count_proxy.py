#!/usr/bin/python3
"""A TCP proxy that counts bytes, for the herd and drain jobs: ZooKeeper's
`mntr` counts the packets it receives and sends, and the bytes it receives,
but not the bytes of its responses. Clients connect to this proxy instead of
the server; it forwards both ways and counts. On SIGUSR1 it writes
`<bytes to the server> <bytes from the server>` (totals since it started)
to STATS_FILE, replacing it whole.

Usage: /usr/bin/python3 bench/count_proxy.py SERVER_PORT STATS_FILE
Prints `PORT <port>` once it listens on 127.0.0.1.
"""

import asyncio
import os
import signal
import sys

totals = {"up": 0, "down": 0}


async def pipe(reader, writer, direction):
    try:
        while data := await reader.read(65536):
            totals[direction] += len(data)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def serve(server_port, client_reader, client_writer):
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", server_port)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(
        pipe(client_reader, server_writer, "up"),
        pipe(server_reader, client_writer, "down"),
    )


def write_stats(path):
    with open(path + ".tmp", "w") as out:
        out.write(f"{totals['up']} {totals['down']}\n")
    os.replace(path + ".tmp", path)


async def main():
    server_port, stats = int(sys.argv[1]), sys.argv[2]
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, write_stats, stats)
    server = await asyncio.start_server(
        lambda r, w: serve(server_port, r, w), "127.0.0.1", 0, backlog=4096
    )
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
