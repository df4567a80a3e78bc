"""The operator's side of a test server: an admin token file, and `cowatch
admin` run against a server's own port as an operator runs it (the token in
COWATCH_ADMIN_TOKEN). What the terminal and cluster suites share."""
import contextlib
import os
import subprocess
import tempfile
from pathlib import Path

from support.harness import BIN

TOKEN = "operator-token-for-tests-0123456789"


@contextlib.contextmanager
def admin_token_file():
    """A file holding TOKEN, for --admin-token-file; removed afterwards."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "admin-token"
        path.write_text(TOKEN + "\n")
        yield str(path)


def run_admin(port, *words, token=TOKEN):
    """`cowatch admin --server http://127.0.0.1:PORT WORDS...` (token None: without
    one); the finished process."""
    env = {k: v for k, v in os.environ.items() if k != "COWATCH_ADMIN_TOKEN"}
    if token:
        env["COWATCH_ADMIN_TOKEN"] = token
    return subprocess.run([BIN, "admin", "--server", f"http://127.0.0.1:{port}", *words],
                          capture_output=True, text=True, timeout=20, env=env)


def admin(port, *words):
    """`run_admin` that must succeed; what it printed."""
    result = run_admin(port, *words)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout
