"""`sitectl --help` imports no slow third-party module and no command module: an
import-structure property (the start-up time itself is measured by bench/startup.py)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SLOW = ("python_on_whales", "rich", "pydantic", "requests")

PROBE = """
import sys
import sitectl.cli
from sitectl.cli import main
main(['--help'], standalone_mode=False)
loaded = {m.split('.')[0] for m in sys.modules}
print('SLOW:' + ','.join(sorted(loaded & set(sys.argv[1:]))))
print('CLI:' + ','.join(sorted(m for m in sys.modules if m.startswith('sitectl.cli.'))))
"""


def test_help_imports_no_slow_module_and_no_command_module():
    r = subprocess.run([sys.executable, "-c", PROBE, *SLOW], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "Commands:" in lines
    assert lines[-2] == "SLOW:", lines[-2]
    assert lines[-1] == "CLI:sitectl.cli.common", lines[-1]
