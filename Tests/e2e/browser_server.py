"""`cowatch serve` as the browser runs want it: on loopback, from the bundle or
a web root, with nothing kept on disk, address bans off and the loopback media
server reachable; started and stopped by Tests/support/harness.py's Serve."""

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.harness import Serve  # noqa: E402


def serve_for_browsers(binary, web_root=None, extra_args=(), port=0):
    """A Serve, not started yet (`with serve_for_browsers(...) as server:` starts
    it): on `port` (0: a free one), serving the browser client from `web_root`
    (COWATCH_WEB_ROOT) or else from the resource bundle next to the binary, with
    `extra_args`, the run's own settings (Tests/e2e/spread.py: a provider's
    stand-in), last."""
    binary = str(Path(binary).resolve())
    env = {k: v for k, v in os.environ.items() if k != "COWATCH_WEB_ROOT"}
    if web_root:
        env["COWATCH_WEB_ROOT"] = str(Path(web_root).resolve())
    args = ["--host", "127.0.0.1"]
    help_text = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True).stdout
    if "--store" in help_text:
        args += ["--store", "memory"]  # nothing written to disk by the test
    if "--address-bans" in help_text:
        # Every window comes from 127.0.0.1: with address bans, a kick would keep
        # out any window, and the check that a kicked browser stays out under
        # another name would not show that its device identity does it.
        args += ["--address-bans", "false"]
    if "--media-check-private" in help_text:
        # The media server is on loopback: let the server look at it, so that
        # the links the windows share are checked for real.
        args += ["--media-check-private", "true"]
    args += list(extra_args)
    return Serve(*args, port=port, env=env, binary=binary, start=False, scratch_cwd=True)
