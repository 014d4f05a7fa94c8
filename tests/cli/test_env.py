"""`sitectl env`: the variables WebArena (env_config.py) and BrowserGym read."""
import json

from tests.conftest import invoke

EXPECTED = {  # research/webarena-official.md §2, canonical values for <host> = 10.0.0.5
    "SHOPPING": "http://10.0.0.5:7770",
    "SHOPPING_ADMIN": "http://10.0.0.5:7780/admin",
    "REDDIT": "http://10.0.0.5:9999",
    "GITLAB": "http://10.0.0.5:8023",
    "MAP": "http://10.0.0.5:3000",
    "WIKIPEDIA": "http://10.0.0.5:8888/wikipedia_en_all_maxi_2022-05/A/User:The_other_Kiwix_guy/Landing",
    "HOMEPAGE": "http://10.0.0.5:4399",
    "CLASSIFIEDS": "http://10.0.0.5:9980",  # VisualWebArena's (family-formats.md §1.3)
}


def env(*args):
    r = invoke(["env", "--host", "10.0.0.5", *args])
    assert r.exit_code == 0, r.output
    return r.output


def test_webarena_format():
    assert json.loads(env("--json")) == EXPECTED


def test_browsergym_format_has_wa_prefix():
    got = json.loads(env("--format", "browsergym", "--json"))
    assert got == {f"WA_{k}": v for k, v in EXPECTED.items()}


def test_text_formats_export_and_dotenv():
    text = env("--format", "webarena")
    assert "export SHOPPING_ADMIN=http://10.0.0.5:7780/admin" in text.splitlines()
    dot = env("--format", "dotenv").splitlines()
    assert "GITLAB=http://10.0.0.5:8023" in dot and "WA_GITLAB=http://10.0.0.5:8023" in dot


def test_no_trailing_slash_and_scheme_everywhere():
    for v in json.loads(env("--format", "dotenv", "--json")).values():
        assert v.startswith("http://") and not v.endswith("/")


def test_visualwebarena_formats():
    """VisualWebArena's own names (env_config.py: its sites, the bare Kiwix origin, the reset
    token) and BrowserGym's VWA_ ones (family-formats.md §1.3, §1.8)."""
    vwa = {"SHOPPING": "http://10.0.0.5:7770", "REDDIT": "http://10.0.0.5:9999", "WIKIPEDIA": "http://10.0.0.5:8888",
           "HOMEPAGE": "http://10.0.0.5:4399", "CLASSIFIEDS": "http://10.0.0.5:9980",
           "CLASSIFIEDS_RESET_TOKEN": "4b61655535e7ed388f0d40a93600254c"}
    assert json.loads(env("--format", "visualwebarena", "--json")) == vwa
    assert json.loads(env("--format", "browsergym-visualwebarena", "--json")) == {f"VWA_{k}": v for k, v in vwa.items()}


def test_host_with_shell_characters_is_refused():
    r = invoke(["env", "--host", "x;rm -rf /"])
    assert r.exit_code == 2
    assert "invalid host" in r.output
