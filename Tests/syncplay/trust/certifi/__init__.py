"""Stands in for the `certifi` package in the Syncplay client the TLS test
starts (on its PYTHONPATH): Syncplay's client trusts exactly the bundle that
`certifi.where()` names (it sets SSL_CERT_FILE to it), so this one names the
test's throwaway CA, given in COWATCH_TEST_CA. On a person's machine Debian's
certifi names the system's store, where a private CA is added instead."""
import os


def where():
    return os.environ["COWATCH_TEST_CA"]


def contents():
    with open(where()) as bundle:
        return bundle.read()
