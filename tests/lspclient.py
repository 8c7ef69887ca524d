"""A minimal LSP client over stdio (JSON-RPC with Content-Length framing), for the end-to-end
test of ``amplint server`` and for bench/lsp.py. No editor, no pygls: bytes on pipes."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path


class LspClient:
    def __init__(self, cmd: list[str] | None = None, cwd: str | None = None, env: dict | None = None) -> None:
        cmd = cmd or [sys.executable, "-m", "amplint", "server", "--stdio"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=cwd, env=env)
        self._id = 0
        self.messages: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.pending: list[dict] = []

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode("ascii").partition(":")
                headers[k.strip().lower()] = v.strip()
            body = out.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def send(self, payload: dict) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict, timeout: float = 30.0):
        self._id += 1
        rid = self._id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        msg = self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg.get("result")

    def wait(self, pred, timeout: float = 30.0) -> dict:
        """The first message (already received or arriving) for which ``pred`` holds."""
        for i, m in enumerate(self.pending):
            if pred(m):
                return self.pending.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no matching LSP message; stderr:\n" + self._stderr())
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                raise EOFError("the server exited; stderr:\n" + self._stderr())
            if "method" in m and "id" in m:  # a request from the server (e.g. registerCapability)
                self.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
            if pred(m):
                return m
            self.pending.append(m)

    def diagnostics(self, uri: str, version: int | None = None, timeout: float = 30.0) -> dict:
        def ok(m):
            if m.get("method") != "textDocument/publishDiagnostics" or m["params"]["uri"] != uri:
                return False
            return version is None or m["params"].get("version") == version

        return self.wait(ok, timeout)["params"]

    def initialize(self, root: Path) -> dict:
        result = self.request("initialize", {
            "processId": None, "rootUri": root.as_uri(),
            "capabilities": {"textDocument": {"publishDiagnostics": {"relatedInformation": True},
                                              "codeAction": {"codeActionLiteralSupport": {
                                                  "codeActionKind": {"valueSet": ["quickfix", "source"]}}}},
                             "general": {"positionEncodings": ["utf-16"]}},
        })
        self.notify("initialized", {})
        return result

    def close(self) -> int:
        try:
            self.request("shutdown", {}, timeout=10)
            self.notify("exit", {})
            return self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            return self.proc.wait()
        finally:
            for s in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    s.close()
                except Exception:  # noqa: BLE001
                    pass

    def _stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        return self.proc.stderr.read().decode("utf-8", "replace")[-3000:]


def apply_text_edits(text: str, edits: list[dict]) -> str:
    """Apply LSP TextEdits (UTF-16 positions) to ``text``."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[-1].endswith("\n"):
        lines.append("")

    def offset(pos: dict) -> int:
        line = pos["line"]
        if line >= len(lines):
            return len(text)
        base = sum(len(x) for x in lines[:line])
        s = lines[line]
        units = 0
        for k, ch in enumerate(s):
            if units >= pos["character"]:
                return base + k
            units += 2 if ord(ch) > 0xFFFF else 1
        return base + len(s.rstrip("\r\n")) if units >= pos["character"] else base + len(s)

    spans = sorted(((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits), reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    return text
