# memattr-bpf build. `make` builds ./memattr-bpf; `make test` runs every test
# (as root: the integration tests load BPF and trace real Open MPI jobs).

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PREFIX   ?= /usr/local
SYSTEMD_DIR ?= /etc/systemd/system
SYSCONF_DIR ?= /etc
BUILD    := build

# The architecture built for: this machine's, or ARCH=arm64 on x86-64 (a
# cross-build into build-arm64/: the tool, its BPF object and its unit
# tests, run with qemu-user; docs/operations.md, "arm64").
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH     ?= $(HOST_ARCH)
ifneq ($(ARCH),$(HOST_ARCH))
ifeq ($(ARCH),arm64)
CC       := aarch64-linux-gnu-gcc
RUN      ?= qemu-aarch64 -L /
BUILD    := build-arm64
else
$(error ARCH=$(ARCH): cross-builds are to arm64 from x86-64)
endif
endif
RUN      ?=

CFLAGS   ?= -O2 -g
# userspace/ is layered (docs/ARCHITECTURE.md): cmd -> engine -> core,
# output -> sys; report, merge, model and export are commands' libraries beside the engine.
# A folder's objects are compiled with the include paths of itself and of
# the layers it may use, and no other: an include the wrong way up does not
# compile (`make layers-check` shows it). bpf/memattr.h, the kernel's
# records, is below them all; the generated skeleton is the loader's (sys).
SRC_DIRS := cmd engine core output report merge model export sys
USES_cmd    := cmd merge model export report engine core output sys
USES_model  := model report output sys
# export and diff: report's readers, and pprof's messages generated from
# export/profile.proto by protoc-c into $(BUILD)/proto (on export's path only).
USES_export := export report output sys
USES_merge  := merge report output sys
USES_report := report output sys
USES_engine := engine core output sys
USES_core   := core sys
USES_output := output sys
USES_sys    := sys
# A folder's internal/ (engine/internal: the tracker's and sessions'
# structures) is on its own path only: the layers above see its public
# headers (engine.h), not its insides.
INTERNAL  = $(wildcard userspace/$(1)/internal)
layer_inc = $(patsubst %,-I%,$(call INTERNAL,$(1))) $(patsubst %,-Iuserspace/%,$(USES_$(1))) \
	    $(if $(filter sys,$(1)),-I$(BUILD)) $(if $(filter export,$(1)),-I$(BUILD)/proto) -Ibpf
# Tests and fuzzers stand above every layer.
ALL_INC  := -I$(BUILD) -I$(BUILD)/proto $(patsubst %,-Iuserspace/%,$(SRC_DIRS)) \
	    $(patsubst %,-I%,$(foreach d,$(SRC_DIRS),$(call INTERNAL,$(d)))) -Ibpf
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror \
	    -D_GNU_SOURCE -DMEMATTR_SPEC_DIR='"$(PREFIX)/share/memattr-bpf/uprobe_specs"'
LDLIBS   := -lbpf -ldw -lelf -lz -lm -lpthread -lprotobuf-c

# v3: atomic exchange, so concurrent threads' RSS changes add up exactly.
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror -I$(BUILD) -Ibpf

# Pure logic (no BPF, no global state beyond the component table): what the
# unit tests link. The rest of userspace/ drives the kernel and /proc.
PURE_MODULES := components alloc_stack heap_peak spec procfs regions gone_regions csv_out cli num_arg cmd_args classify callscan unwind mpi_fn elfsym \
		report_csv report_stats report_svg report_html report_style report_nodes safe_open hooks \
		metrics metrics_fold metrics_render daemon_cfg spool http_listen gz_read sock_proto sock_limit \
		node_name merge_read merge_info merge_files gz_file held proc_owner proc_at infer infer_mem heapwalk \
		model model_app model_fit model_read model_peaks model_print report_oom trend memcg \
		exp_load exp_profile exp_build exp_demangle exp_folded exp_speedscope exp_pprof exp_writers exp_out \
		exp_diff exp_diff_print exp_diff_html profile.pb-c export_cmd diff_cmd report report_cmd ring_budget \
		recount_gap touched_count count_window page_runs lost_records probe_hold remote_read
PURE_OBJS := $(patsubst %,$(BUILD)/%.o,$(PURE_MODULES))
ALL_SRCS  := $(foreach d,$(SRC_DIRS),$(wildcard userspace/$(d)/*.c))
ALL_HDRS  := $(foreach d,$(SRC_DIRS),$(wildcard userspace/$(d)/*.h userspace/$(d)/internal/*.h))
ALL_OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(notdir $(ALL_SRCS))) $(BUILD)/profile.pb-c.o
vpath %.c $(patsubst %,userspace/%,$(SRC_DIRS))
# Each object gets its folder's include paths (a target-specific variable).
$(foreach d,$(SRC_DIRS),$(eval $(patsubst %.c,$(BUILD)/%.o,$(notdir $(wildcard userspace/$(d)/*.c))): LAYER_INC := $(call layer_inc,$(d))))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all install test unit-test integration-test clean workloads bench sanitize-test fuzz fuzz-build cross
# The SPANK plugin (srun --memattr), built where Slurm's headers are (libslurm-dev).
SPANK_SRCS := $(wildcard userspace/spank/*.c)
SPANK_SO   := $(if $(wildcard /usr/include/slurm/spank.h),memattr_spank.so)
SPANK_DIR  ?= $(PREFIX)/lib/memattr-bpf

all: memattr-bpf $(SPANK_SO)

memattr_spank.so: $(SPANK_SRCS) userspace/spank/spank_memattr.h
	$(CC) $(filter-out -I%,$(CFLAGS)) -fPIC -shared -DMEMATTR_BIN='"$(PREFIX)/sbin/memattr-bpf"' \
		$(SPANK_SRCS) -o $@

$(BUILD):
	mkdir -p $(BUILD) $(BUILD)/tests

# CO-RE: types come from the running kernel's BTF; for another
# architecture, from Debian's kernel for it (tools/arm64/vmlinux-h.sh).
ifeq ($(ARCH),$(HOST_ARCH))
$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@
else
$(BUILD)/vmlinux.h: | $(BUILD)
	tools/arm64/vmlinux-h.sh $(ARCH) > $@.tmp && mv $@.tmp $@
endif

$(BUILD)/memattr.bpf.o: bpf/memattr.bpf.c bpf/memattr.h bpf/arch.h bpf/exec_filter.h $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(BUILD)/memattr.skel.h: $(BUILD)/memattr.bpf.o
	$(BPFTOOL) gen skeleton $< name memattr_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/%.o: %.c $(ALL_HDRS) bpf/memattr.h | $(BUILD)
	$(CC) $(CFLAGS) $(LAYER_INC) -c $< -o $@

# Only the loader includes the generated skeleton.
$(BUILD)/bpf_loader.o: $(BUILD)/memattr.skel.h

# pprof's messages: C from export/profile.proto (Debian's protobuf-c-compiler).
$(BUILD)/proto/profile.pb-c.c $(BUILD)/proto/profile.pb-c.h &: userspace/export/profile.proto | $(BUILD)
	mkdir -p $(BUILD)/proto
	protoc-c --proto_path=userspace/export --c_out=$(BUILD)/proto $<
$(BUILD)/profile.pb-c.o: $(BUILD)/proto/profile.pb-c.c $(BUILD)/proto/profile.pb-c.h
	$(CC) $(CFLAGS) -I$(BUILD)/proto -c $< -o $@
$(BUILD)/exp_pprof.o: $(BUILD)/proto/profile.pb-c.h

memattr-bpf: $(ALL_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# The same program inside another build dir (the sanitizer build below);
# it finds the specs next to itself, as ./memattr-bpf does.
$(BUILD)/memattr-bpf: $(ALL_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)
	ln -sfn ../uprobe_specs $(BUILD)/uprobe_specs

# The docs a package installs (the README links them; ARCHITECTURE.md and the
# benchmark history are for the source tree).
USER_DOCS := docs/user-guide.md docs/attribution.md docs/operations.md docs/reliability.md

install: memattr-bpf $(SPANK_SO)
	install -D -m 0755 memattr-bpf $(DESTDIR)$(PREFIX)/sbin/memattr-bpf
	# srun --memattr: add "required $(SPANK_DIR)/memattr_spank.so" to Slurm's plugstack.conf.
	$(if $(SPANK_SO),install -D -m 0755 memattr_spank.so $(DESTDIR)$(SPANK_DIR)/memattr_spank.so)
	install -d $(DESTDIR)$(PREFIX)/share/memattr-bpf/uprobe_specs
	install -m 0644 uprobe_specs/*.spec $(DESTDIR)$(PREFIX)/share/memattr-bpf/uprobe_specs/
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/memattr-bpf/README.md
	# The README's links: docs/ for users and admins, where they point.
	install -d $(DESTDIR)$(PREFIX)/share/doc/memattr-bpf/docs
	install -m 0644 $(USER_DOCS) $(DESTDIR)$(PREFIX)/share/doc/memattr-bpf/docs/
	# The node service: a unit for systemd and its settings (an existing file is kept).
	sed 's|/usr/local/|$(PREFIX)/|g' tools/systemd/memattr-bpf.service > memattr-bpf.service.tmp
	install -D -m 0644 memattr-bpf.service.tmp $(DESTDIR)$(SYSTEMD_DIR)/memattr-bpf.service
	rm -f memattr-bpf.service.tmp
	[ -e $(DESTDIR)$(SYSCONF_DIR)/memattr-bpf/memattr-bpf.conf ] || \
		install -D -m 0644 tools/systemd/memattr-bpf.conf $(DESTDIR)$(SYSCONF_DIR)/memattr-bpf/memattr-bpf.conf
	for m in docs/man/*.[1-8]; do install -D -m 0644 $$m $(DESTDIR)$(PREFIX)/share/man/man$${m##*.}/$${m##*/}; done

# Man pages (docs/man): no warning from man or groff, and every option the
# code accepts documented (tools/check-man-options.sh).
MAN_PAGES := $(wildcard docs/man/*.[1-8])
.PHONY: man-check rules-check
man-check:
	@set -e; for m in $(MAN_PAGES); do \
		w=$$( { LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l -Tutf8 $$m >/dev/null; groff -ww -z -man $$m; } 2>&1 ); \
		if [ -n "$$w" ]; then echo "$$m:"; echo "$$w"; exit 1; fi; echo "man-check: $$m"; done
	tools/check-man-options.sh
	tools/check-output-columns.py

# The layers hold (docs/ARCHITECTURE.md): a probe in a lower folder that
# includes an upper layer's header must not compile (tools/check-layers.py
# places it and builds it with make's own rule, in $(BUILD)/layers-check),
# and no #include cycle between files nor use cycle between modules.
# export's pprof and speedscope files read by other readers: Go's pprof
# (golang-go) and Python's json (no root).
.PHONY: export-check
export-check: memattr-bpf
	tools/check-export.sh ./memattr-bpf

# tools/validate/table.py compares the sampled and the exact tool only inside
# the holds (run.sh --hold-every), and every sample against the exact tool's
# two around it; attach_plan.py sizes, waits for and judges run.sh's late
# attach: made-up runs, no root.
.PHONY: validate-check
validate-check:
	tools/validate/check_holds.py
	tools/validate/check_attach_plan.py

.PHONY: layers-check
layers-check: memattr-bpf
	tools/check-layers.py $(MAKE) $(BUILD)/layers-check $(filter $(BUILD)/%.o,$(ALL_OBJS)) -- \
		$(foreach d,$(SRC_DIRS),"$(d)=$(USES_$(d))")

# Prometheus rules and their unit tests, and the Grafana dashboard's
# expressions (promtool: Debian's prometheus package).
rules-check:
	promtool check rules tools/prometheus/memattr-rules.yml
	cd tools/prometheus && promtool test rules memattr-rules.test.yml
	tools/grafana/check-dashboard.py tools/grafana/memattr-bpf.json tools/prometheus/memattr-rules.yml

$(BUILD)/tests/%: tests/unit/%.c $(PURE_OBJS) | $(BUILD)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests/unit $< $(PURE_OBJS) -o $@ -lcmocka -lelf -lm -lpthread -lz -lprotobuf-c

# test_elfsym reads the GNU build ID of a library linked here with one the
# test knows (BUILDID_HEX, as --build-id=0x... writes it) and of the same
# library linked with none.
BUILDID_HEX := 4d454d41545452aa00112233445566778899abcd
BUILDID_SOS := $(BUILD)/tests/buildid_fixed.so $(BUILD)/tests/buildid_none.so
$(BUILD)/tests/buildid_fixed.so: tests/unit/fixtures/buildid.c | $(BUILD)
	$(CC) -shared -fPIC -Wl,--build-id=0x$(BUILDID_HEX) $< -o $@
$(BUILD)/tests/buildid_none.so: tests/unit/fixtures/buildid.c | $(BUILD)
	$(CC) -shared -fPIC -Wl,--build-id=none $< -o $@
$(BUILD)/tests/test_elfsym: tests/unit/test_elfsym.c $(PURE_OBJS) $(BUILDID_SOS) | $(BUILD)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests/unit -DBUILDID_DIR='"$(abspath $(BUILD))/tests"' \
		-DBUILDID_HEX='"$(BUILDID_HEX)"' $< $(PURE_OBJS) -o $@ -lcmocka -lelf -lm -lpthread -lz -lprotobuf-c

# The attribution core, without /proc and without the stack scanner: its
# test supplies requester_find itself.
$(BUILD)/tests/test_process: tests/unit/test_process.c $(PURE_OBJS) $(BUILD)/process.o | $(BUILD)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests/unit $< $(PURE_OBJS) $(BUILD)/process.o -o $@ -lcmocka -lelf -lm -lpthread -lz -lprotobuf-c

# The sinks of files: the CSV sink and the opt-in modes' (their rows on row_sink.c, row_file.c).
SINK_TEST_OBJS := $(patsubst %,$(BUILD)/%.o,csv_sink csv_out gz_file row_file row_sink \
		  mpi_calls_sink alloc_stacks_sink heap_sites_sink)
# fsync wrapped: the test sees which writes were made durable.
$(BUILD)/tests/test_csv_sink: tests/unit/test_csv_sink.c $(SINK_TEST_OBJS) | $(BUILD)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests/unit $< $(SINK_TEST_OBJS) -o $@ -Wl,--wrap=fsync -lcmocka -lm -lz

# The OOM post-mortem's pure parts, with the CSV sink's run_info rows and the engine's fold.
$(BUILD)/tests/test_oom: tests/unit/test_oom.c $(PURE_OBJS) $(BUILD)/csv_sink.o $(BUILD)/row_file.o $(BUILD)/oom.o | $(BUILD)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests/unit $< $(PURE_OBJS) $(BUILD)/csv_sink.o $(BUILD)/row_file.o $(BUILD)/oom.o -o $@ \
		-lcmocka -lelf -lm -lpthread -lz -lprotobuf-c

# merge's command too: two nodes' datasets merged whole (merge.o is no pure module).
$(BUILD)/tests/test_merge: tests/unit/test_merge.c $(PURE_OBJS) $(BUILD)/merge.o | $(BUILD)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests/unit $< $(PURE_OBJS) $(BUILD)/merge.o -o $@ -lcmocka -lelf -lm -lpthread -lz -lprotobuf-c

# The engine's symbol cache on the pure modules (its ELF tables: elfsym.o).
$(BUILD)/tests/test_symbol_cache: tests/unit/test_symbol_cache.c $(PURE_OBJS) $(BUILD)/symbol_cache.o | $(BUILD)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests/unit $< $(PURE_OBJS) $(BUILD)/symbol_cache.o -o $@ \
		-lcmocka -lelf -lm -lpthread -lz -lprotobuf-c

$(BUILD)/tests/test_proc_table: tests/unit/test_proc_table.c $(BUILD)/proc_table.o | $(BUILD)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests/unit $< $(BUILD)/proc_table.o -o $@ -lcmocka

# Discovery on a fake /proc tree the test writes (tests/unit/test_discovery.c):
# discovery's objects on the pure modules (procfs_set_roots points them there).
DISCOVERY_OBJS := $(BUILD)/discovery.o $(BUILD)/slurm_listpids.o
$(BUILD)/tests/test_discovery: tests/unit/test_discovery.c $(PURE_OBJS) $(DISCOVERY_OBJS) | $(BUILD)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests/unit $< $(PURE_OBJS) $(DISCOVERY_OBJS) -o $@ -lcmocka -lelf -lm -lpthread -lz -lprotobuf-c

# The engine fed synthetic records (tests/unit/test_engine.c): every object
# of engine/ and the layers below it but the BPF loader, whose fake
# (tests/unit/fake_tracer.c) keeps the event entry: no BPF, no root.
ENGINE_TEST_OBJS := $(filter-out $(BUILD)/bpf_loader.o,$(foreach d,engine core output sys,\
		    $(patsubst %.c,$(BUILD)/%.o,$(notdir $(wildcard userspace/$(d)/*.c)))))
$(BUILD)/tests/test_engine: tests/unit/test_engine.c tests/unit/fake_tracer.c tests/unit/fake_tracer.h \
			    $(ENGINE_TEST_OBJS) | $(BUILD)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests/unit $< tests/unit/fake_tracer.c $(ENGINE_TEST_OBJS) -o $@ \
		-lcmocka $(LDLIBS)

# Each mutation of the engine named in test_engine.c makes its test fail
# (tools/engine-mutants.py edits engine/*.c and restores them: not while
# another build of this tree runs).
.PHONY: engine-mutants
engine-mutants: $(BUILD)/tests/test_engine $(BUILD)/tests/test_discovery
	tools/engine-mutants.py $(BUILD)

unit-test: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; (cd tests/unit && $(RUN) ../../$$t); done

# The cross-build's parts (make ARCH=arm64 cross): the tool, its BPF object, the unit tests.
cross: $(BUILD)/memattr-bpf $(UNIT_BINS)

workloads:
	$(MAKE) -C tests/workloads

integration-test: memattr-bpf workloads
	tests/integration/run_all.sh

test: unit-test integration-test

# Overhead and accuracy benchmarks (as root); rewrites BENCHMARKS.md.
# BENCH_QUICK=1 for a short smoke run. See tools/bench/run.sh.
bench:
	tools/bench/run.sh

# report's memory does not grow with its input (issue 32, finding 12): peak
# RSS on a 200 MiB synthetic rank file against a 50 MiB one (no root, ~15 s).
.PHONY: report-memory-test
report-memory-test: memattr-bpf
	tools/report-memory-test.sh ./memattr-bpf

# model, export and diff in bounded memory, their outputs those of a small run.
.PHONY: model-export-memory-test
model-export-memory-test: memattr-bpf
	tools/model-export-memory-test.sh ./memattr-bpf

# ASan + UBSan, stopping at the first error: the unit tests, then the
# report of a fixture run, built apart in build-san/ (the normal build is
# left alone). tools/sanitize-test.sh also traces a real job with it.
SAN_BUILD  := build-san
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
sanitize-test:
	CFLAGS="$(SAN_CFLAGS)" $(MAKE) BUILD=$(SAN_BUILD) $(SAN_BUILD)/memattr-bpf unit-test
	tools/sanitize-test.sh report $(SAN_BUILD)/memattr-bpf

# libFuzzer harnesses (tests/fuzz/fuzz_*.c) with clang, each seeded from
# tests/fuzz/corpus/NAME: `make fuzz` runs each for FUZZ_SECONDS (see
# tools/fuzz.sh; inputs found go to build-fuzz/, the committed seeds stay).
FUZZ_CC      ?= clang
FUZZ_BUILD   := build-fuzz
FUZZ_SECONDS ?= 20
FUZZ_CFLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-std=gnu11 -Wall -Wextra -Werror $(patsubst %,-Iuserspace/%,$(SRC_DIRS)) -Ibpf -D_GNU_SOURCE
FUZZERS      := spec report maps environ stat export
fuzz_mods_spec    := spec safe_open
fuzz_mods_report  := report_csv report_stats report_svg report_html report_style report_oom report_nodes safe_open hooks gz_read
fuzz_mods_maps    := procfs
fuzz_mods_environ := procfs
fuzz_mods_stat    := procfs
fuzz_mods_export  := report_csv report_stats report_svg report_style safe_open gz_read exp_load exp_profile exp_build exp_demangle \
		     exp_folded exp_speedscope exp_pprof exp_writers exp_out exp_diff exp_diff_print exp_diff_html
# export's pprof writer: the messages protoc-c generates (make's rule above).
fuzz_gen_export   := $(BUILD)/proto/profile.pb-c.c
FUZZ_BINS    := $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZERS))

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(ALL_SRCS) $(ALL_HDRS) $(BUILD)/proto/profile.pb-c.c
	@mkdir -p $(FUZZ_BUILD)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(BUILD)/proto $< $(foreach m,$(fuzz_mods_$*),$(filter %/$(m).c,$(ALL_SRCS))) \
		$(fuzz_gen_$*) -o $@ -lm -lz -lprotobuf-c

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	tools/fuzz.sh $(FUZZ_SECONDS) $(FUZZERS)

clean:
	rm -rf $(BUILD) build-arm64 $(SAN_BUILD) $(FUZZ_BUILD) memattr-bpf memattr_spank.so
	$(MAKE) -C tests/workloads clean
