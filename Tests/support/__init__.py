"""What the Python harnesses under Tests/ share: one server launcher and one way
to wait (harness.py), one browser launcher (browser.py), one cluster of nodes
on a scratch PostgreSQL with its members (cluster.py), loopback web servers
(media_server.py), and the pieces more than one suite drives (page.py, mpv.py,
bot.py, terminal.py, bridge.py, records.py).

How it is found: each harness puts Tests/ first on its path, then imports from
this package by name, whether pytest collects it (`python3 -m pytest Tests/<suite>`
from the repository's root, as commands/test runs them) or it runs as a script
(commands/e2e, commands/bench):

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from support.harness import Serve, wait_until

No test module imports another: what two suites need lives here.
"""
