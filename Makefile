# sitectl developer entry points. `make up` and `make test` are the README's quick start.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STACK  ?= mini

.PHONY: up test install engine browser down clean-images

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

# The test command (CI runs exactly this): real Docker, real databases, real HTTP, a real browser.
test: install engine browser
	$(BIN)/pytest -q -ra

down: install
	$(BIN)/sitectl down --stack $(STACK)
