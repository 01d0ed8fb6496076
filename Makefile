# engram: build, run, test, bench, lint.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN     := bin/engram

# The race detector, as the tests run it. -race also turns on checkptr, which
# checks every unsafe.Pointer conversion at run time; modernc.org's SQLite is
# C translated to Go, pointer arithmetic on nearly every line, and checking it
# was where most of the SQLite-bound tests' time went. That code is
# modernc's, not engram's: engram's own packages keep checkptr, and the race
# detector still watches every package, SQLite's included.
RACE    := -race -gcflags='modernc.org/...=-d=checkptr=0'

.PHONY: build install run test test-short bench lint fuzz clean

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/engram

# Installs engram into $(go env GOPATH)/bin (put that folder on your PATH).
install:
	$(GO) install -trimpath -ldflags "$(LDFLAGS)" ./cmd/engram

# Starts engram on the embedded defaults (home: $ENGRAM_HOME or ~/.engram).
run: build
	./$(BIN) serve

# The whole test suite, race detector on, against real ChromaDB and Ollama
# servers that scripts/testenv.sh installs (cached), starts and stops.
# This is what CI runs. The timeout is per package: on a loaded 2-core
# machine (scripts/loadtest.sh) palace's race-enabled tests took 20 minutes.
# scripts/testtimes.sh prints each package's time at the end, slowest first.
# The clients' and examples' tests (scripts/test-clients.sh) run beside the Go
# tests, their output kept until those end. lint has run go vet with every
# analyzer, so go test's own vet (a subset, each package checked again) is off.
test: lint
	@log=$$(mktemp); GO=$(GO) scripts/test-clients.sh >"$$log" 2>&1 & clients=$$!; \
	scripts/testenv.sh scripts/testtimes.sh $(GO) test $(RACE) -vet=off -count=1 -timeout 45m ./...; gotests=$$?; \
	wait $$clients; clientrc=$$?; cat "$$log"; rm -f "$$log"; \
	test $$gotests -eq 0 && test $$clientrc -eq 0

# No servers: skips the Chroma and Ollama tests and the slow end-to-end ones.
test-short:
	scripts/testtimes.sh $(GO) test $(RACE) -short -count=1 ./...

# Benchmarks (with the real servers); figures go to docs/benchmarks.md with
# the command that made them.
bench:
	scripts/testenv.sh $(GO) test -run '^$$' -bench . -count 1 -timeout 60m ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# A short coverage-guided run of the archive line parser.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecodeLine -fuzztime 30s ./archive/

clean:
	rm -rf bin
