"""Settings of the Postmill replica: app root and its .env, session/pool dirs, cookie names, limits."""
import os
import re

APP_ROOT = os.environ.get("POSTMILL_ROOT", "/var/www/html")


def _load_dotenv(path):
    """Read KEY=VALUE lines of the app's .env (as Symfony does); real environment wins."""
    try:
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                os.environ.setdefault(k.strip(), v.strip().strip('"').strip("'"))
    except OSError:
        pass


_load_dotenv(os.path.join(APP_ROOT, ".env"))
SESSION_DIR = os.path.join(APP_ROOT, "var/sessions")
POOLS_DIR = os.path.join(APP_ROOT, "var/cache/dev/pools")
APP_SECRET = os.environ.get("APP_SECRET", "replica-postmill-app-secret")
SESSION_COOKIE = "PHPSESSID"
REMEMBER_COOKIE = "REMEMBERME"
RATE_MSG = "You cannot post more. Wait a while before trying again."
SORTS = ("active", "hot", "new", "top", "controversial", "most_commented")
NUM = re.compile(r"^[1-9][0-9]{0,17}$")
