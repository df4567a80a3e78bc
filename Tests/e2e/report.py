"""How the browser runs report: log() prints a line at once (a run is read as it
goes, and its output is often piped), and Failure ends a scenario with what went
wrong, in words."""


class Failure(Exception):
    pass


def log(message):
    print(message, flush=True)
