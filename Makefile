# Two commands for a fresh clone: `make lab` and `make test`. Both create .venv first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
PORT ?= 8888
HERE := $(abspath .)

# The stamp records the folder the venv was made in. A moved or copied checkout keeps a .venv
# whose scripts point at the old folder: then the venv is removed here and rebuilt by setup.
ifneq ($(wildcard $(STAMP)),)
ifneq ($(shell cat $(STAMP)),$(HERE))
$(info .venv was made in another folder ($(shell cat $(STAMP) || echo unknown)): rebuilding it for $(HERE))
$(shell rm -rf $(VENV))
endif
endif

.PHONY: setup lab instructor-lab test test-fast release notebooks bench grade learner-bundle hub-learner-env site site-serve clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	echo '$(HERE)' > $(STAMP)

## JupyterHub's proxy for the classroom (deploy/jupyterhub), pinned in package-lock.json.
## Without Node.js it is left out with a note: only the classroom test (tests/test_hub.py) needs it.
ifneq ($(wildcard package.json),)
NODE_STAMP := node_modules/.package-lock.json
$(NODE_STAMP): package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then npm ci --no-audit --no-fund --loglevel=error; \
	  node -e 'process.exit(parseInt(process.versions.node) < 20 ? 1 : 0)' || echo "note: Node.js $$(node --version) is older \
	than the proxy's (configurable-http-proxy 5.2.0 asks for 20 or later); it ran the classroom on Debian 12's 18.20, \
	but use Node.js 20+ for a class (docs/instructor.md, section 3, step 0)"; \
	else echo "npm not found: the JupyterHub classroom test will be skipped (bash .ci/install-system-packages installs Node.js)"; fi
endif

setup: $(STAMP) $(NODE_STAMP)

## Open the course (the learner release in course/) in JupyterLab, as a learner sees it: the learner's
## settings (deploy/laptop/jupyter: no formgrader, no Create Assignment, no Assignment List without an
## exchange; the Validate button stays), the same the laptop kits install. When PORT is taken, the next
## free port is used and the URL to open is said first. `make instructor-lab` keeps every nbgrader tool.
FREE_PORT := import socket, sys; b = int(sys.argv[1]); print(next((p for p in range(b, b + 50) if socket.socket().connect_ex(("127.0.0.1", p)) != 0), ""))
lab: setup
	@port=$$($(PY) -c '$(FREE_PORT)' $(PORT)); test -n "$$port" || { echo "ポート $(PORT) から 50 個がすべて使用中です: make lab PORT=9000 のように空いているポートを指定してください"; exit 2; }; \
	if [ "$$port" != "$(PORT)" ]; then echo "ポート $(PORT) は使用中なので $$port を使います。"; fi; \
	echo "JupyterLab: 00_start_here を開きます（ブラウザが開かないときは、下に出る http://localhost:$$port/lab/tree/00_start_here/00_start_here.ipynb?token=... を開いてください）"; \
	JUPYTER_CONFIG_PATH="$(HERE)/deploy/laptop/jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
	  $(VENV)/bin/jupyter-lab --ServerApp.root_dir=course --port=$$port --ServerApp.port_retries=0 $(ROOT_FLAG)

## The instructor's JupyterLab on the whole checkout, with nbgrader's Formgrader and Create Assignment.
instructor-lab: setup
	$(VENV)/bin/jupyter-lab --port=$(PORT) $(ROOT_FLAG)

## Run the whole test suite (unit, notebooks, nbgrader round trip, browser when Chromium is installed).
## TEST_WORKERS=N runs the test files in N parallel workers (pytest-xdist; tests/conftest.py keeps the files
## that share one graded class on one worker and starts the longest first); 0 runs them in one process.
## Two by default: on this 2-core machine two workers took 853 s where one took 1,401 s, within 10% of what
## two cores need for the suite's CPU; three took no less and pushed grading cells past their 10 s limit
## (docs/benchmarks.md).
TEST_WORKERS ?= 2
XDIST = $(if $(filter 0,$(TEST_WORKERS)),-p no:xdist,-n $(TEST_WORKERS) --dist loadfile)
test: setup
	$(PY) -m pytest $(XDIST)

## The unit tests without a graded class or a browser, in FAST_WORKERS workers (most of them are single-threaded:
## on 2 cores two workers take 52 s where one takes 68 s).
FAST_WORKERS ?= 2
test-fast: setup
	$(PY) -m pytest -n $(FAST_WORKERS) --dist loadfile -m "not slow and not browser"

## After editing a lesson (either solutions/NN/NN.ipynb or NN.py): sync each pair (tools/sync_lessons.py:
## the edited side wins, cell ids kept, outputs cleared), then regenerate course/ from solutions/.
## When both files of a pair were edited it stops and says how to choose: make notebooks KEEP=path/to/file
notebooks: setup
	$(PY) tools/sync_lessons.py $(if $(KEEP),--keep "$(KEEP)",)
	$(VENV)/bin/ctxlab release
release: notebooks

bench: setup
	@for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

## Grade an LMS export (folder or zip) into grading/: make grade SUBMISSIONS=~/Downloads/export.zip [ROSTER=roster.csv]
## [GRADING=grading/class-b] (the course root: one grading folder per class)
## (grades CSV: grading/grades.csv, feedback: grading/feedback/, files for the LMS: grading/lms/; see docs/instructor.md)
grade: setup
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=path/to/export.zip [WORKERS=n] [ROSTER=roster.csv] [GRADING=grading/class]"; exit 2; }
	@# exit 1 (not graded, held for review, an unresolved name: ctxlab prints why) is a finished run: say so, without
	@# make's "Error 1" (make turns any failing recipe into exit 2); input errors (exit 2) still fail
	@$(VENV)/bin/ctxlab grade "$(SUBMISSIONS)" $(if $(WORKERS),--workers $(WORKERS),) $(if $(ROSTER),--roster "$(ROSTER)",) $(if $(GRADING),--root "$(GRADING)",); \
	rc=$$?; if [ $$rc -eq 1 ]; then echo "採点は終わりました（終了コード 1 の理由は上の「終了コード 1:」の行）"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; fi

## What learners get, without solutions, hidden tests or lesson sources (see docs/instructor.md), from one source:
## dist/ctxlab-learner-VERSION.zip (self-study: course/ with the quiz's key), dist/ctxlab-learner-graded-VERSION.zip
## (a graded workshop: ctxlab release --graded, no key, notes or explanations) and the ctxlab wheel
learner-bundle: setup
	$(PY) tools/learner_bundle.py

## The learners' environment of a JupyterHub class (docs/instructor.md, section 3): a venv with
## the ctxlab wheel and the learners' server settings in PREFIX, without solutions or the key.
## HUB_ENV_FLAGS: more flags of tools/hub_env.py, e.g. --pin jupyterhub==5.5.0 (the Dockerfile's).
PREFIX ?= /opt/ctxlab-learner
hub-learner-env: setup
	$(PY) tools/hub_env.py --prefix $(PREFIX) --python $(PYTHON) $(HUB_ENV_FLAGS)

## The course as a static site in site/ (docs/site.md): the released lessons executed offline once
## (reused from build/site/ while unchanged), the guide as pages, Japanese search; then checked for
## answers and broken links. `make site-serve` shows it on http://127.0.0.1:$(SITE_PORT)/
SITE_PORT ?= 8000
site: setup
	$(PY) tools/build_site.py --check

site-serve: site
	@echo "サイト: http://127.0.0.1:$(SITE_PORT)/ （Ctrl+C で止める）"
	$(PY) -m http.server $(SITE_PORT) --directory site --bind 127.0.0.1

clean:
	rm -rf $(VENV) node_modules .pytest_cache gradebook.db dist site build/site
