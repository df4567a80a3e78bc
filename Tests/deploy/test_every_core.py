"""deploy/cluster/every-core, what a host runs to use every core: its upstream
for three nodes is the one deploy/cluster/nginx-cluster.conf ships, and nginx
accepts the deployed site with its upstream for many nodes (nginx -t)."""
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "cluster" / "every-core"


def upstream(text):
    found = re.search(r"upstream cowatch_backend \{.*?\}", text, re.S)
    assert found, text
    return found.group(0)


def test_three_nodes_are_the_shipped_upstream():
    made = subprocess.run([SCRIPT, "--nodes", "3"], capture_output=True, text=True, check=True)
    assert upstream(made.stdout) == upstream((ROOT / "deploy" / "cluster" / "nginx-cluster.conf").read_text())
    assert "systemctl daemon-reload && systemctl enable --now cowatch@7481 cowatch@7482 cowatch@7483" in made.stderr


def test_bad_counts_are_refused_in_words():
    for arguments, words in ((["--nodes", "0"], "1 to 256"), (["--nodes", "many"], "whole number"),
                             (["--first-port", "65530", "--nodes", "8"], "not all in 1024-65535")):
        result = subprocess.run([SCRIPT, *arguments], capture_output=True, text=True)
        assert result.returncode == 2 and words in result.stderr, result.stderr


@pytest.mark.skipif(shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists(),
                    reason="nginx is not installed (commands/setup installs it)")
def test_nginx_takes_the_site_with_sixteen_nodes():
    made = subprocess.run([SCRIPT, "--nodes", "16", "--first-port", "9001"], capture_output=True, text=True, check=True)
    folder = Path(tempfile.mkdtemp(prefix="cowatch-every-core-"))
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                        "-keyout", folder / "key.pem", "-out", folder / "cert.pem"], check=True, capture_output=True)
        site = (ROOT / "deploy" / "nginx" / "cowatch.conf").read_text()
        site = site.replace(upstream(site), upstream(made.stdout))
        site = re.sub(r"ssl_certificate\s+\S+;", f"ssl_certificate {folder / 'cert.pem'};", site)
        site = re.sub(r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {folder / 'key.pem'};", site)
        (folder / "site.conf").write_text(site)
        (folder / "nginx.conf").write_text(
            f"events {{}}\nhttp {{ include {folder / 'site.conf'}; }}\npid {folder / 'nginx.pid'};\n"
            f"error_log {folder / 'error.log'};\n")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        checked = subprocess.run([nginx, "-t", "-p", f"{folder}/", "-c", str(folder / "nginx.conf")],
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        assert site.count("server 127.0.0.1:90") == 16
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_help_is_the_scripts_comment_and_no_code():
    shown = subprocess.run([SCRIPT, "--help"], capture_output=True, text=True, check=True).stdout
    assert shown.startswith("One Cowatch node per core"), shown
    assert "--first-port PORT" in shown and "standard error." in shown
    assert "set -euo" not in shown and "#" not in shown, shown
