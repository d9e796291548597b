# Fuzzing (issue 12).  Included by the Makefile; none of this is part of
# `make all`.
#
#   make fuzz-deps      install clang and its libFuzzer runtime (Debian)
#   make fuzz           build every tests/fuzz/fuzz_*.c with libFuzzer and run
#                       each for FUZZ_TIME seconds [60] on a copy of its corpus
#   make fuzz-regress   replay the committed corpus through every harness,
#                       built with gcc and ASan+UBSan (part of `make sanitize`)
#   make fuzz-corpus    regenerate the seed part of tests/fuzz/corpus/
#
# Findings land in $(FUZZ_BUILD)/artifacts/<harness>/; new inputs found
# while fuzzing stay in $(FUZZ_BUILD)/work/<harness>/ (add the interesting
# ones to tests/fuzz/corpus/<harness>/ after `-merge=1`).

FUZZ_CC      ?= clang
FUZZ_TIME    ?= 60
FUZZ_BUILD   ?= $(BUILD)/fuzz
FUZZ_REGRESS_BUILD ?= $(BUILD)/fuzz-regress
FUZZ_SRC     := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES   := $(FUZZ_SRC:tests/fuzz/%.c=%)
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/bin/%)
FUZZ_REGRESS_BINS := $(FUZZ_NAMES:%=$(FUZZ_REGRESS_BUILD)/bin/%)
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
# -MMD -MP: objects depend on the headers they include (the Makefile reads
# every .d under $(BUILD)), so a changed header rebuilds them.
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -MMD -MP
FUZZ_DEB_PKGS := clang libclang-rt-dev llvm

.PHONY: fuzz-deps fuzz-build fuzz-corpus

fuzz-deps:
	@missing=""; for p in $(FUZZ_DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "fuzz-deps: all Debian packages present"; exit 0; fi; \
	echo "fuzz-deps: installing:$$missing"; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=sudo; \
	else echo "fuzz-deps: run: sudo apt-get install -y$$missing" >&2; exit 1; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq$$missing

# libFuzzer build: the library with coverage instrumentation, then one
# binary per harness.
$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<

$(FUZZ_BUILD)/libev.a: $(LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
	rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_BUILD)/bin/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_BUILD)/libev.a $(TOOL_SRC)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_BUILD)/libev.a $(LDLIBS)

fuzz-build: fuzz-deps $(FUZZ_BINS)

# Each harness runs FUZZ_TIME seconds on a scratch copy of its corpus; the
# run fails on the first crash, leak, sanitizer report or abort().
fuzz: fuzz-build
	@set -e; for h in $(FUZZ_NAMES); do \
	  c=$${h#fuzz_}; work=$(FUZZ_BUILD)/work/$$c; art=$(FUZZ_BUILD)/artifacts/$$c; \
	  mkdir -p $$work $$art; \
	  dict=; [ ! -f tests/fuzz/dict/$$c.dict ] || dict=-dict=tests/fuzz/dict/$$c.dict; \
	  echo "fuzz: $$h for $(FUZZ_TIME) s"; \
	  rc=0; $(FUZZ_BUILD)/bin/$$h -max_total_time=$(FUZZ_TIME) -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 $$dict -artifact_prefix=$$art/ $$work tests/fuzz/corpus/$$c \
	    >$(FUZZ_BUILD)/$$c.log 2>&1 || rc=$$?; \
	  grep -E '^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss_mb)' $(FUZZ_BUILD)/$$c.log || true; \
	  if [ $$rc != 0 ] || ls $$art | grep -q .; then \
	    tail -n 40 $(FUZZ_BUILD)/$$c.log; echo "fuzz: $$h: finding, inputs in $$art" >&2; exit 1; fi; \
	done

# Regression replay with gcc + ASan/UBSan: no clang needed.
$(FUZZ_REGRESS_BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CPPFLAGS) $(FUZZ_FLAGS) $(FUZZ_SAN) $(WARNFLAGS) -c -o $@ $<

$(FUZZ_REGRESS_BUILD)/libev.a: $(LIB_SRC:%.c=$(FUZZ_REGRESS_BUILD)/obj/%.o)
	$(call say,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_REGRESS_BUILD)/bin/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_REGRESS_BUILD)/obj/tests/fuzz/regress_main.o \
                             $(FUZZ_REGRESS_BUILD)/libev.a $(TOOL_SRC)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(FUZZ_FLAGS) $(FUZZ_SAN) $(WARNFLAGS) -o $@ $< \
	  $(FUZZ_REGRESS_BUILD)/obj/tests/fuzz/regress_main.o $(FUZZ_REGRESS_BUILD)/libev.a $(LDLIBS)

fuzz-regress: $(FUZZ_REGRESS_BINS)
	@set -e; for h in $(FUZZ_NAMES); do \
	  c=$${h#fuzz_}; \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
	    $(FUZZ_REGRESS_BUILD)/bin/$$h tests/fuzz/corpus/$$c; \
	done

fuzz-corpus: all
	EV_BIN=$(abspath $(BIN)) tests/fuzz/make-corpus.sh
