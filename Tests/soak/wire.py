"""A small RFC 6455 client on a bare asyncio transport, written for the soak.

A library client hides exactly what the soak has to see: whether the server's
close frame arrived, whether the TCP connection ended without one, and a way to
stop reading the socket (a slow reader) or cut it without a close frame.
"""
import asyncio
import base64
import hashlib
import os
import socket
import struct

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x8, 0x9, 0xA, 0x0


class Refused(Exception):
    """The upgrade was answered with something other than 101."""

    def __init__(self, status):
        super().__init__(f"HTTP {status}")
        self.status = status


def mask(payload, key):
    """XOR with the 4-byte key, done on one big integer: fast enough in pure Python."""
    n = len(payload)
    if n == 0:
        return b""
    keys = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(keys, "big")).to_bytes(n, "big")


def frame(opcode, payload):
    header = bytearray([0x80 | opcode])
    n = len(payload)
    if n < 126:
        header.append(0x80 | n)
    elif n < 65536:
        header.append(0x80 | 126)
        header += struct.pack("!H", n)
    else:
        header.append(0x80 | 127)
        header += struct.pack("!Q", n)
    key = os.urandom(4)
    return bytes(header) + key + mask(payload, key)


class Connection(asyncio.Protocol):
    """One client connection. `on_text(bytes)` gets every text message.

    `close_code` is the code of the server's close frame (None if none came,
    1005 if it came without a code); `ended` is set when the TCP connection is gone;
    `end` says how: "close-frame", "eof" or "reset"."""

    def __init__(self, on_text=None):
        self.on_text = on_text
        self.transport = None
        self.buffer = bytearray()
        self.handshake = None
        self.key = None
        self.opened = asyncio.get_running_loop().create_future()
        self.ended = asyncio.Event()
        self.end = None
        self.close_code = None
        self.close_reason = ""
        self.close_sent = False
        self.cut = False
        self.initiated = False
        self.on_end = None
        self.fragments = None
        self.received = 0

    # asyncio callbacks

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        if self.handshake is not None:
            self.buffer += data
            self._read_handshake()
            return
        self.buffer += data
        self._read_frames()

    def eof_received(self):
        return False

    def connection_lost(self, exc):
        if self.end is None:
            if self.close_code is not None:
                self.end = "close-frame"
            elif isinstance(exc, (ConnectionResetError, BrokenPipeError)):
                self.end = "reset"
            else:
                self.end = "eof"
        if not self.opened.done():
            self.opened.set_exception(ConnectionError(f"closed during the upgrade ({self.end})"))
        self.ended.set()
        if self.on_end is not None:
            self.on_end()

    # the upgrade

    def start(self, host, port, path, subprotocol):
        self.key = base64.b64encode(os.urandom(16))
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {self.key.decode()}\r\n"
            f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {subprotocol}\r\n\r\n"
        )
        self.handshake = True
        self.transport.write(request.encode())

    def _read_handshake(self):
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        del self.buffer[: end + 4]
        self.handshake = None
        status = int(head[0].split(" ")[1])
        headers = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        expected = base64.b64encode(hashlib.sha1(self.key + GUID).digest()).decode()
        if status != 101:
            self.opened.set_exception(Refused(status))
            self.transport.close()
            return
        if headers.get("sec-websocket-accept") != expected:
            self.opened.set_exception(ConnectionError("bad Sec-WebSocket-Accept"))
            self.transport.abort()
            return
        self.opened.set_result(headers.get("sec-websocket-protocol"))
        if self.buffer:
            self._read_frames()

    # frames

    def _read_frames(self):
        buffer = self.buffer
        offset = 0
        size = len(buffer)
        while size - offset >= 2:
            b0, b1 = buffer[offset], buffer[offset + 1]
            length = b1 & 0x7F
            at = offset + 2
            if length == 126:
                if size - at < 2:
                    break
                length = struct.unpack_from("!H", buffer, at)[0]
                at += 2
            elif length == 127:
                if size - at < 8:
                    break
                length = struct.unpack_from("!Q", buffer, at)[0]
                at += 8
            if b1 & 0x80:  # a server never masks; treat it as broken
                self.transport.abort()
                return
            if size - at < length:
                break
            payload = bytes(buffer[at: at + length])
            offset = at + length
            self._frame(b0 & 0x80, b0 & 0x0F, payload)
        del buffer[:offset]

    def _frame(self, fin, opcode, payload):
        if opcode == PING:
            self._send(PONG, payload)
        elif opcode == CLOSE:
            if self.close_code is None:
                self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                self.close_reason = payload[2:].decode("utf-8", "replace")
            if not self.close_sent:
                self._send(CLOSE, payload[:2])
                self.close_sent = True
        elif opcode == TEXT or opcode == CONTINUATION:
            if opcode == TEXT and fin:
                self.received += 1
                if self.on_text and self.close_code is None:
                    self.on_text(payload)
                return
            self.fragments = (self.fragments or b"") + payload
            if fin:
                whole, self.fragments = self.fragments, None
                self.received += 1
                if self.on_text and self.close_code is None:
                    self.on_text(whole)

    def _send(self, opcode, payload):
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(frame(opcode, payload))

    # what the soak does with it

    def send_text(self, text):
        if not self.close_sent:
            self._send(TEXT, text.encode())

    def close(self, code=1000):
        """Starts the closing handshake; the server answers and closes the TCP connection."""
        if not self.close_sent:
            self.close_sent = True
            self.initiated = True
            self._send(CLOSE, struct.pack("!H", code))

    def cut_off(self, reset):
        """Ends the TCP connection with no close frame: a FIN, or an RST when `reset`."""
        self.cut = True
        if self.transport is None:
            return
        if reset:
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.transport.abort()

    def pause_reading(self):
        if self.transport is not None and not self.transport.is_closing():
            self.transport.pause_reading()

    def resume_reading(self):
        if self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()


async def connect(host, port, path, on_text=None, subprotocol="cowatch.v1.json", receive_buffer=None, timeout=10):
    """Opens a connection; `receive_buffer` shrinks SO_RCVBUF so a reader that stops
    reading fills the server's side quickly."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        if receive_buffer:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        await asyncio.wait_for(loop.sock_connect(sock, (host, port)), timeout)
        _, connection = await loop.create_connection(lambda: Connection(on_text), sock=sock)
    except BaseException:
        sock.close()
        raise
    connection.start(host, port, path, subprotocol)
    try:
        await asyncio.wait_for(asyncio.shield(connection.opened), timeout)
    except BaseException:
        connection.transport.abort()
        raise
    return connection
