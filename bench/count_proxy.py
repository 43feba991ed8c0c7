#!/usr/bin/python3
"""A TCP proxy that counts requests and bytes, for the herd and drain jobs.
ZooKeeper's `mntr` counts the packets it receives and sends, and the bytes
it receives, but not the bytes of its responses, and it cannot tell what a
packet was. Clients connect to this proxy instead of the server; it forwards
both ways, reads the frames, and counts.

Keep-alive traffic is counted apart: the client's pings and zklock's
heartbeat `sync`s, with their answers. Every idle session sends them at a
rate set by its session timeout, so how many land between two readings
depends on how long the reading took and on how many sessions are open, not
on the handoff being measured. A herd would show up in the other column:
waiters that wake up list the directory or read nodes.

On SIGUSR1 it writes one line, replacing STATS_FILE whole (totals since it
started):
`<bytes to the server> <bytes from the server> <requests> <keep-alive requests> <keep-alive bytes from the server>`
where the requests and bytes include the keep-alive ones.

Usage: /usr/bin/python3 bench/count_proxy.py SERVER_PORT STATS_FILE
Prints `PORT <port>` once it listens on 127.0.0.1.
"""

import asyncio
import os
import signal
import struct
import sys

PING_XID = -2
OP_SYNC = 9
OP_PING = 11

totals = {"up": 0, "down": 0, "requests": 0, "keepalive_requests": 0, "keepalive_down": 0}


class Frames:
    """Splits a byte stream into ZooKeeper frames (a 4-byte big-endian length,
    then that many bytes)."""

    def __init__(self):
        self.buffer = b""

    def feed(self, data):
        self.buffer += data
        while len(self.buffer) >= 4:
            (length,) = struct.unpack(">i", self.buffer[:4])
            if len(self.buffer) < 4 + length:
                return
            frame, self.buffer = self.buffer[: 4 + length], self.buffer[4 + length :]
            yield frame


class Connection:
    """What one client connection has asked: the first frame is the session
    handshake; every later one starts with its xid and opcode. Answers start
    with the xid they answer."""

    def __init__(self):
        self.up = Frames()
        self.down = Frames()
        self.handshaken = {"up": False, "down": False}
        self.sync_xids = set()

    def request(self, frame):
        totals["requests"] += 1
        if not self.handshaken["up"]:
            self.handshaken["up"] = True
            return
        xid, op = struct.unpack(">ii", frame[4:12])
        if op == OP_PING:
            totals["keepalive_requests"] += 1
        elif op == OP_SYNC:
            totals["keepalive_requests"] += 1
            self.sync_xids.add(xid)

    def answer(self, frame):
        if not self.handshaken["down"]:
            self.handshaken["down"] = True
            return
        (xid,) = struct.unpack(">i", frame[4:8])
        if xid == PING_XID or xid in self.sync_xids:
            self.sync_xids.discard(xid)
            totals["keepalive_down"] += len(frame)


async def pipe(reader, writer, direction, connection):
    frames = connection.up if direction == "up" else connection.down
    count = connection.request if direction == "up" else connection.answer
    try:
        while data := await reader.read(65536):
            totals[direction] += len(data)
            for frame in frames.feed(data):
                count(frame)
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
    connection = Connection()
    await asyncio.gather(
        pipe(client_reader, server_writer, "up", connection),
        pipe(server_reader, client_writer, "down", connection),
    )


def write_stats(path):
    with open(path + ".tmp", "w") as out:
        out.write(
            f"{totals['up']} {totals['down']} {totals['requests']} "
            f"{totals['keepalive_requests']} {totals['keepalive_down']}\n"
        )
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
