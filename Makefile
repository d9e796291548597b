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
LDLIBS   += -lsqlite3 -lz -lm -ldl

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

# libxlsxwriter is loaded by lib/report/xlsx.c when a workbook is opened (it
# pulls in libcrypto, a millisecond of every start otherwise): its soname,
# read from the development library the build sees.
LXW_SONAME = $(shell objdump -p "$$($(CC) -print-file-name=libxlsxwriter.so)" 2>/dev/null | awk '$$1 == "SONAME" { print $$2 }')
$(BUILD)/lib/report/xlsx.o: CPPFLAGS += $(if $(LXW_SONAME),-DEV_LXW_SONAME='"$(LXW_SONAME)"')

# Debian packages the build, the tests and the reports need.
DEB_PKGS := make gcc libsqlite3-dev zlib1g-dev libjsmn-dev bats bats-assert bats-support \
            gnuplot-nox sqlite3 jq python3 help2man shellcheck slurm-wlm munge libxlsxwriter-dev \
            python3-openpyxl chromium

.PHONY: all deps check test unit bats asan ubsan sanitize clean install uninstall \
        demo bench man lint fuzz fuzz-regress

all: $(TOOLS) $(GENS)

# Objects are intermediates of the tools; keep them so that a second `make`
# rebuilds nothing.
.SECONDARY:

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNFLAGS) -MMD -MP -c -o $@ $<

$(LIBEV): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BIN)/%: $(BUILD)/tools/%.o $(LIBEV)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBEV) $(LDLIBS)

$(BIN)/%: $(BUILD)/tests/gen/%.o $(LIBEV)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBEV) $(LDLIBS)

$(BUILD)/unit/%: $(BUILD)/tests/unit/%.o $(LIBEV)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBEV) $(LDLIBS)

-include $(wildcard mk/*.mk)
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Installs what is missing with apt-get when root (or through sudo), else
# prints the command to run.
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all Debian packages present"; exit 0; fi; \
	echo "deps: installing:$$missing"; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=sudo; \
	else echo "deps: run: sudo apt-get install -y$$missing" >&2; exit 1; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq$$missing

unit: $(UNITS)
	@set -e; for t in $(UNITS); do echo "unit: $$t"; $$t; done

# The suites run between two snapshots of ../shared/data and the source
# tree: a test that writes into its inputs fails the run.
bats: all
	@mkdir -p $(BUILD)
	@tests/untouched.sh snapshot $(BUILD)/untouched.state
	EV_BIN=$(abspath $(BIN)) bats --print-output-on-failure tests/
	@tests/untouched.sh compare $(BUILD)/untouched.state

test check: deps
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) bats

SAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all
# Stack use after return and leaks are found only when asked for.
asan: export ASAN_OPTIONS ?= detect_stack_use_after_return=1:detect_leaks=1:abort_on_error=1
asan:
	$(MAKE) BUILD=build/asan BIN=build/asan/bin CFLAGS="$(SAN_FLAGS) -fsanitize=address,undefined" \
	  LDFLAGS="-fsanitize=address,undefined" all unit bats
ubsan:
	$(MAKE) BUILD=build/ubsan BIN=build/ubsan/bin CFLAGS="$(SAN_FLAGS) -fsanitize=undefined" \
	  LDFLAGS="-fsanitize=undefined" all unit bats
sanitize: asan ubsan

demo: deps all
	@./pipelines/demo

bench: deps all
	bench/run.sh

man: all
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
	shellcheck -x -P SCRIPTDIR pipelines/* tests/*.bash
	shellcheck -x -P SCRIPTDIR -e SC2154 bench/*.sh
	@for h in include/*.h include/ev/*.h; do $(CC) $(CPPFLAGS) $(WARNFLAGS) -fsyntax-only -x c $$h || exit 1; done

clean:
	rm -rf $(BUILD) $(BIN) demo-out
