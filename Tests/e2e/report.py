"""How the browser runs report: log() prints a line at once (a run is read as it
goes, and its output is often piped), and Failure ends a scenario with what went
wrong, in words (failure_words: what any error that ended a run says)."""
import traceback


class Failure(Exception):
    pass


def log(message):
    print(message, flush=True)


def failure_words(error):
    """What ended a run, for its report: a Failure's own words, or any other
    error with where it came from (a run reports and fails, never hangs)."""
    if isinstance(error, Failure):
        return str(error)
    return f"{type(error).__name__}: {error}\n{traceback.format_exc()}"
