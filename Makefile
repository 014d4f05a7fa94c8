# sitectl developer entry points. `make up` and `make test` are the README's quick start.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STACK  ?= mini

.PHONY: up test install engine browser webarena-client down clean-images

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
up: install engine
	$(BIN)/sitectl up --stack $(STACK)

# Debian's Chromium: the browser the storage-state test drives through Playwright (no
# Playwright browser download works here; the test points executable_path at it).
browser:
	@command -v chromium >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

# WebArena's own client, unmodified, in its own venv (libwebarena pulls transformers & co.), and
# a Playwright 1.44 browsers folder whose chromium is Debian's (a two-line script).
WEBARENA_VENV := .venv-webarena
PW_CHROME     := .cache/pw-browsers/chromium-1117/chrome-linux/chrome

$(WEBARENA_VENV)/bin/python:
	$(PYTHON) -m venv $(WEBARENA_VENV)
	$(WEBARENA_VENV)/bin/pip install -q libwebarena==0.0.4 playwright==1.44.0

$(PW_CHROME):
	mkdir -p $(dir $(PW_CHROME))
	printf '#!/bin/sh\nexec /usr/lib/chromium/chromium --no-sandbox "$$@"\n' > $(PW_CHROME)
	chmod +x $(PW_CHROME)

webarena-client: browser $(WEBARENA_VENV)/bin/python $(PW_CHROME)

# The test command (CI runs exactly this): real Docker, real databases, real HTTP, a real browser,
# and WebArena's own login client.
test: install engine browser webarena-client
	$(BIN)/pytest -q -ra

down: install
	$(BIN)/sitectl down --stack $(STACK)
