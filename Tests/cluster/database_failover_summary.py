"""Summarises the figures Tests/cluster/test_database_failover.py wrote
(COWATCH_DB_FAILOVER_REPORT): per configuration, over its failovers, the time
until the database took writes again and until the room's writes had landed,
what members noticed and what was lost. Used by `commands/bench database-failover`."""
import json
import statistics
import sys


def spread(values):
    values = sorted(values)
    return f"{values[0]:.2f} / {statistics.median(values):.2f} / {values[-1]:.2f}"


def main(path):
    print("| configuration | failovers | database takes writes, s (min / median / max) | room's writes landed, s | "
          "members closed (of 6), median / max | longest away, s (max) | lines shown | lines lost |")
    print("|---|---|---|---|---|---|---|---|")
    with open(path) as report:
        for line in report:
            run = json.loads(line)
            figures = run["failovers"]
            closed = [f["members_closed"] for f in figures]
            print(f"| {run['config']} | {len(figures)} | {spread([f['writes_back_s'] for f in figures])} | "
                  f"{spread([f['landed_s'] for f in figures])} | {statistics.median(closed):g} / {max(closed)} | "
                  f"{max(f['longest_away_s'] for f in figures):.2f} | {sum(f['shown'] for f in figures)} | "
                  f"{sum(f['lost'] for f in figures)} |")


if __name__ == "__main__":
    main(sys.argv[1])
