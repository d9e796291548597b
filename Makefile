# evkit - streaming tools for GPU collective-communication traces.
# Plain GNU make.  Every tools/*.c is one program in bin/, every lib/**/*.c goes
# into libev.a, every tests/*.bats is a suite, every tests/unit/*.c a unit test.

CC       ?= cc
CFLAGS   ?= -O2 -g
WARNFLAGS = -std=c11 -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
            -Wmissing-prototypes -Wold-style-definition -Wwrite-strings \
            -Wundef -Wpointer-arith -Wvla
ifeq ($(WERROR),1)
WARNFLAGS += -Werror
endif
ifneq ($(CI),)
WARNFLAGS += -Werror
endif
CPPFLAGS += -Iinclude -Ilib -D_GNU_SOURCE
LDLIBS   += -lsqlite3 -lisal -lz -lm

BUILD ?= build
BIN   ?= bin

PREFIX  ?= /usr/local
prefix  ?= $(PREFIX)
bindir  ?= $(prefix)/bin
libexecdir ?= $(prefix)/libexec/evkit
mandir  ?= $(prefix)/share/man
DESTDIR ?=

LIB_SRC   := $(sort $(shell find lib -name "*.c"))
TOOL_SRC  := $(sort $(wildcard tools/*.c))
UNIT_SRC  := $(sort $(wildcard tests/unit/*.c))
GEN_SRC   := $(sort $(wildcard tests/gen/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
TOOLS     := $(TOOL_SRC:tools/%.c=$(BIN)/%)
UNITS     := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/unit/%)
GENS      := $(GEN_SRC:tests/gen/%.c=$(BIN)/%)
PIPELINES := $(sort $(wildcard pipelines/*))
# The pipeline programs (the *.sh helpers and the demo are not installed as programs).
PIPELINE_PROGS := $(filter-out %.sh %/demo,$(PIPELINES))
LIBEV     := $(BUILD)/libev.a

# Debian packages, by what needs them: `make deps` installs what the build,
# the demo and `make check` need, `make deps-demo` only the build's and the
# demo's; the slow tier's Chromium and one-node Slurm cluster (`make
# deps-full`), shellcheck (`make lint`) and help2man (`make man`) come with
# the targets that use them.
DEB_BUILD := make gcc libsqlite3-dev zlib1g-dev libisal-dev libjsmn-dev
DEB_DEMO  := gnuplot-nox python3
DEB_CHECK := bats bats-assert bats-support sqlite3 jq python3-openpyxl
DEB_SLOW  := chromium slurm-wlm munge
DEB_PKGS  := $(DEB_BUILD) $(DEB_DEMO) $(DEB_CHECK)

.PHONY: all deps deps-demo deps-full check check-slow check-full check-noshared test unit units \
        bats asan ubsan san-suite sanitize clean install uninstall demo bench man lint fuzz fuzz-regress help

all: $(TOOLS) $(GENS)

# Objects are intermediates of the tools; keep them so that a second `make`
# rebuilds nothing.
.SECONDARY:

# One line per file built; V=1 shows the commands.
ifeq ($(V),1)
Q :=
say = @:
else
Q := @
say = @printf '  %-4s %s\n' $(1) $(2)
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNFLAGS) -MMD -MP -c -o $@ $<

$(LIBEV): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(call say,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BIN)/%: $(BUILD)/tools/%.o $(LIBEV)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBEV) $(LDLIBS)

$(BIN)/%: $(BUILD)/tests/gen/%.o $(LIBEV)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBEV) $(LDLIBS)

$(BUILD)/unit/%: $(BUILD)/tests/unit/%.o $(LIBEV)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBEV) $(LDLIBS)

-include $(wildcard mk/*.mk)
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# deps-install LABEL PACKAGES: installs what is missing with apt-get when
# root (or through sudo), else prints the command to run.
deps-install = @missing=""; for p in $(2); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "$(1): all Debian packages present"; exit 0; fi; \
	echo "$(1): installing:$$missing"; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=sudo; \
	else echo "$(1): run: sudo apt-get install -y$$missing" >&2; exit 1; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq$$missing

deps:
	$(call deps-install,deps,$(DEB_PKGS))
deps-demo:
	$(call deps-install,deps,$(DEB_BUILD) $(DEB_DEMO))
deps-full: deps
	$(call deps-install,deps-full,$(DEB_SLOW))

# The test tiers (README, `make help`):
#   check          unit programs, the contract battery, every tool's Bats
#                  file and each pipeline end to end (tests/*.bats)
#   check-slow     what is slow by nature (tests/full/*.bats): Chromium,
#                  the Slurm cluster, the fuzz corpus through every tool,
#                  limits reached only with big inputs
#   sanitize       one ASan+UBSan build: the unit programs, the tools' Bats
#                  files, the fuzz corpus through the tools and harnesses
#   check-full     all three
#   check-noshared the check tier as a fresh clone without ../shared runs
#                  it: every shared-data test skips with its reason
# Bats files run one per core at a time (tests/suite.sh).
NPROC      := $(shell nproc 2>/dev/null || echo 1)
FAST_BATS  := $(sort $(wildcard tests/*.bats))
SLOW_BATS  := $(sort $(wildcard tests/full/*.bats))
# The pipelines' files (bash, gnuplot and the tools together) are not run
# under the sanitizers: the tools' own files cover their C paths.
PIPE_BATS  := $(filter $(PIPELINES:pipelines/%=tests/%.bats) tests/pipelines-common.bats,$(FAST_BATS))
TOOL_BATS  := $(filter-out $(PIPE_BATS),$(FAST_BATS))
SUITE       = EV_BIN=$(abspath $(BIN)) tests/suite.sh

units: $(UNITS)

unit: units
	@$(SUITE) unit --units "$(UNITS)"

bats: all
	@$(SUITE) bats $(FAST_BATS)

test check: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all units
	@$(SUITE) check --units "$(UNITS)" $(FAST_BATS)

check-noshared: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@EV_NO_SHARED=1 SHARED_DATA=$(abspath $(BUILD))/no-shared-data $(SUITE) check-noshared $(FAST_BATS)

check-slow: deps-full
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@$(SUITE) check-slow $(SLOW_BATS)

check-full: check check-slow sanitize

SAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all
# Stack use after return and leaks are found only when asked for.
asan: export ASAN_OPTIONS ?= detect_stack_use_after_return=1:detect_leaks=1:abort_on_error=1
asan: deps
	@$(MAKE) --no-print-directory BUILD=build/asan BIN=build/asan/bin CFLAGS="$(SAN_FLAGS) -fsanitize=address,undefined" \
	  LDFLAGS="-fsanitize=address,undefined" -j$(NPROC) all units
	@$(MAKE) --no-print-directory BUILD=build/asan BIN=build/asan/bin san-suite SAN_NAME=asan
# UBSan alone: not part of any tier (the ASan+UBSan build carries its checks).
ubsan: deps
	@$(MAKE) --no-print-directory BUILD=build/ubsan BIN=build/ubsan/bin CFLAGS="$(SAN_FLAGS) -fsanitize=undefined" \
	  LDFLAGS="-fsanitize=undefined" -j$(NPROC) all units
	@$(MAKE) --no-print-directory BUILD=build/ubsan BIN=build/ubsan/bin san-suite SAN_NAME=ubsan
san-suite:
	@$(SUITE) $(SAN_NAME) --units "$(UNITS)" $(TOOL_BATS) tests/full/fuzz-regress.bats
sanitize: asan fuzz-regress

help:
	@echo 'evkit make targets:'
	@echo '  all (default)   build bin/ (V=1 shows the commands)'
	@echo '  demo            the showcase on generated data, into ./demo-out'
	@echo '  check           the test tier to run before every commit: unit programs,'
	@echo '                  the contract battery, every tool'"'"'s Bats file, each pipeline'
	@echo '                  end to end (tests/*.bats, a file per core at a time)'
	@echo '  check-slow      what is slow by nature (tests/full/*.bats): Chromium, the'
	@echo '                  Slurm cluster, the fuzz corpus through every tool'
	@echo '  sanitize        one ASan+UBSan build: unit programs, the tools'"'"' Bats files,'
	@echo '                  the fuzz corpus through the tools and the harnesses'
	@echo '  check-full      check, check-slow and sanitize (what CI runs, with lint and'
	@echo '                  check-noshared: the check tier without ../shared)'
	@echo '  asan, ubsan     the sanitizer tier under ASan+UBSan, or UBSan alone'
	@echo '  lint            shellcheck, every header compiled on its own and the'
	@echo '                  module floors (tests/modgraph.sh)'
	@echo '  bench           the benchmarks (bench/RESULTS.md)'
	@echo '  fuzz            libFuzzer on every harness (FUZZ_TIME seconds each)'
	@echo '  install, uninstall, man, clean'
	@echo '  deps, deps-demo, deps-full   the Debian packages of the build and check,'
	@echo '                  of the build and demo only, and of the slow tier'

demo: deps-demo all
	@./pipelines/demo

bench: deps all
	bench/run.sh

man: all
	$(call deps-install,man,help2man)
	@mkdir -p $(BUILD)/man
	@for t in $(TOOLS); do n=$$(basename $$t); \
	  help2man --no-info --no-discard-stderr -n "$$(sed -n 's/^ \* *'"$$n"' - //p' tools/$$n.c | head -n1)" \
	    -o $(BUILD)/man/$$n.1 $$t || exit 1; done
	@for p in $(PIPELINE_PROGS); do n=$$(basename $$p); \
	  PATH="$(abspath $(BIN)):$$PATH" help2man --no-info --no-discard-stderr \
	    -n "$$(sed -n '2s/^# *'"$$n"' - //p' $$p)" -o $(BUILD)/man/$$n.1 $$p || exit 1; done

install: all man
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(mandir)/man1
	install -m 755 $(TOOLS) $(DESTDIR)$(bindir)
	install -d $(DESTDIR)$(libexecdir)
	@for p in $(PIPELINES); do case $$p in */demo) continue;; \
	  *.sh) install -m 644 $$p $(DESTDIR)$(libexecdir);; \
	  *) install -m 755 $$p $(DESTDIR)$(bindir);; esac; done
	install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(mandir)/man1

uninstall:
	@for t in $(TOOLS) $(PIPELINES); do rm -f $(DESTDIR)$(bindir)/$$(basename $$t) $(DESTDIR)$(libexecdir)/$$(basename $$t); done
	@for t in $(TOOLS) $(PIPELINE_PROGS); do rm -f $(DESTDIR)$(mandir)/man1/$$(basename $$t).1; done

# bench scripts read variables that bench/lib.sh's measure() sets through
# printf -v, which shellcheck cannot follow (SC2154).
lint:
	$(call deps-install,lint,shellcheck)
	shellcheck -x -P SCRIPTDIR pipelines/* tests/*.bash tests/*.sh .ci/run
	shellcheck -x -P SCRIPTDIR -e SC2154 bench/*.sh
	tests/modgraph.sh
	@for h in include/*.h include/ev/*.h; do $(CC) $(CPPFLAGS) $(WARNFLAGS) -fsyntax-only -x c $$h || exit 1; done

clean:
	rm -rf $(BUILD) $(BIN) demo-out
