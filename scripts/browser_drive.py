#!/usr/bin/env python3
"""Drives headless Chromium through its DevTools protocol, with Python's standard library only (the protocol
over a WebSocket of its own): what the browser tests and the web benchmark use to open a page,
wait for what a person waits for, click, and look.

    scripts/browser_drive.py CHROMIUM PROFILE WIDTH HEIGHT URL STEP...

Each STEP is "eval:EXPRESSION" (JavaScript; a promise is awaited) or "shot:PATH" (a PNG of the
page); each prints one line: the value as JSON, or "shot".
"""

import base64, json, os, socket, subprocess, sys, time, urllib.request

def main():
    chromium, profile, width, height, url = sys.argv[1:6]
    steps = sys.argv[6:]
    browser = subprocess.Popen(
        [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--remote-debugging-port=0",
         f"--window-size={width},{height}", "--user-data-dir=" + profile, "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port = None
        for _ in range(400):
            try:
                port = int(open(os.path.join(profile, "DevToolsActivePort")).readline())
                break
            except (OSError, ValueError):
                time.sleep(0.05)
        pages = []
        for _ in range(200):
            try:
                pages = [p for p in json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
                         if p.get("type") == "page"]
                if pages:
                    break
            except OSError:
                pass
            time.sleep(0.05)
        target = pages[0]["webSocketDebuggerUrl"]
        hostport, path = target[len("ws://"):].split("/", 1)
        host, wsport = hostport.split(":")
        sock = socket.create_connection((host, int(wsport)), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall((f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(1)
        assert head.startswith(b"HTTP/1.1 101"), head
        buffered = bytearray()

        def read(count):
            while len(buffered) < count:
                chunk = sock.recv(65536)
                if not chunk:
                    raise EOFError
                buffered.extend(chunk)
            data = bytes(buffered[:count])
            del buffered[:count]
            return data

        def receive():
            message = b""
            while True:
                first, second = read(2)
                length = second & 0x7F
                if length == 126:
                    length = int.from_bytes(read(2), "big")
                elif length == 127:
                    length = int.from_bytes(read(8), "big")
                message += read(length)
                if first & 0x80:
                    return message

        def send(text):
            data = text.encode()
            header = bytearray([0x81])
            if len(data) < 126:
                header.append(0x80 | len(data))
            elif len(data) < 65536:
                header.append(0x80 | 126)
                header += len(data).to_bytes(2, "big")
            else:
                header.append(0x80 | 127)
                header += len(data).to_bytes(8, "big")
            mask = os.urandom(4)
            sock.sendall(bytes(header) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

        calls = [0]

        def call(method, params):
            calls[0] += 1
            send(json.dumps({"id": calls[0], "method": method, "params": params}))
            while True:
                answer = json.loads(receive())
                if answer.get("id") == calls[0]:
                    return answer

        call("Page.enable", {})
        call("Page.navigate", {"url": url})
        for step in steps:
            kind, _, argument = step.partition(":")
            if kind == "shot":
                data = call("Page.captureScreenshot", {"format": "png"})["result"]["data"]
                open(argument, "wb").write(base64.b64decode(data))
                print("shot", flush=True)
            else:
                answer = call("Runtime.evaluate", {"expression": argument, "awaitPromise": True, "returnByValue": True})
                print(json.dumps(answer.get("result", {}).get("result", {}).get("value")), flush=True)
    finally:
        browser.kill()
        browser.wait()

main()
