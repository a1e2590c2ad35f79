# The two commands of the quick start: `make demo` and `make test`.
# Both create .venv, install infersight with its test extras, and install the
# Debian packages the tests and the demo need (prometheus/promtool, victoria-metrics, chromium).

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-engine test-image lint typecheck unit system-deps bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

system-deps:
	@scripts/ensure-system-deps.sh

demo: $(STAMP) system-deps
	$(BIN)/infersight demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: $(STAMP)
	$(BIN)/mypy

# The inner loop: everything but the `server`, `sim`, `slow` and `packaging` markers (pyproject.toml).
# Measured on 2 busy cores, bytecode not cached: 1207 tests in 153 s wall (93 s CPU) before the CLI,
# browser and storm tests were marked `slow`; 1172 tests in 32-37 s wall (22-27 s CPU) after.
unit: $(STAMP)
	$(BIN)/pytest -q -m "not server and not sim and not slow and not packaging and not engine and not image"

# Two workers, a test file each (module fixtures such as a Prometheus server start once per
# file). The suite is now CPU-bound, so a third worker gains little: 2026-12-08 on a 2-core
# machine, two workers 26.8 min wall on 2,760 CPU-seconds, three 22.7 min on 2,327.
test: $(STAMP) system-deps lint typecheck
	$(BIN)/pytest -q -n 2 --dist loadfile -m "not engine and not image"

# The live lab's real engine (docs/lab.md): made once by `infersight lab engine setup`
# (2.5 GB, about 2 minutes); each test module starts real vLLM processes.
test-engine: $(STAMP) system-deps
	INFERSIGHT_REQUIRE_ENGINE=1 $(BIN)/pytest -q -m engine

# The container image (deploy/Containerfile) built with podman and run as the Kubernetes
# manifests' pod (docs/deploy.md): a Debian base made once with debootstrap (about 2 minutes),
# then the image (about 1 minute).
test-image: $(STAMP) system-deps
	@command -v podman >/dev/null && command -v debootstrap >/dev/null || \
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q podman debootstrap; }
	INFERSIGHT_REQUIRE_IMAGE=1 $(BIN)/pytest -q -m image

bench: $(STAMP) system-deps
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
