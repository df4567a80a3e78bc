"""How long one write waits for its commit on PostgreSQL with a standby under
Patroni, asynchronous against synchronous replication (Tests/cluster/replicated_postgres.py):
pgbench, one client, a one-row INSERT per transaction, for `seconds`, on the
read-write address. Used by `commands/bench database-failover`."""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from replicated_postgres import PG_BIN, ReplicatedPostgres  # noqa: E402


def measure(synchronous, seconds):
    pg = ReplicatedPostgres(synchronous=synchronous).start()
    try:
        pg.query("CREATE TABLE IF NOT EXISTS commit_probe (n bigserial PRIMARY KEY, at timestamptz DEFAULT now())")
        with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
            script.write("INSERT INTO commit_probe DEFAULT VALUES;\n")
        out = subprocess.run([str(PG_BIN / "pgbench"), "-n", "-c", "1", "-T", str(seconds), "-f", script.name, "-r",
                              pg.url], check=True, capture_output=True, text=True).stdout
        latency = re.search(r"latency average = ([0-9.]+) ms", out)
        rate = re.search(r"tps = ([0-9.]+)", out)
        return float(latency.group(1)), float(rate.group(1))
    finally:
        pg.stop()


if __name__ == "__main__":
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    print("| replication | commit latency, average ms | commits per second, one client |")
    print("|---|---|---|")
    for synchronous in (False, True):
        latency, rate = measure(synchronous, seconds)
        print(f"| {'synchronous' if synchronous else 'asynchronous'} | {latency:.3f} | {rate:.0f} |")
