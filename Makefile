# memattr-bpf build. `make` builds ./memattr-bpf; `make test` runs every test
# (as root: the integration tests load BPF and trace real Open MPI jobs).

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PREFIX   ?= /usr/local
BUILD    := build

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -I$(BUILD) -Iuserspace -Ibpf \
	    -D_GNU_SOURCE -DMEMATTR_SPEC_DIR='"$(PREFIX)/share/memattr-bpf/uprobe_specs"'
LDLIBS   := -lbpf -lelf -lz -lm

# v3: atomic exchange, so concurrent threads' RSS changes add up exactly.
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror -I$(BUILD) -Ibpf

# Pure logic (no BPF, no global state beyond the component table): what the
# unit tests link. The rest of userspace/ drives the kernel and /proc.
PURE_MODULES := components spec procfs regions csv_out cli classify callscan mpi_fn elfsym \
		report_csv report_stats report_svg
PURE_OBJS := $(patsubst %,$(BUILD)/%.o,$(PURE_MODULES))
ALL_OBJS  := $(patsubst userspace/%.c,$(BUILD)/%.o,$(wildcard userspace/*.c))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all install test unit-test integration-test clean workloads bench
all: memattr-bpf

$(BUILD):
	mkdir -p $(BUILD) $(BUILD)/tests

# CO-RE: types come from the running kernel's BTF.
$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/memattr.bpf.o: bpf/memattr.bpf.c bpf/memattr.h $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(BUILD)/memattr.skel.h: $(BUILD)/memattr.bpf.o
	$(BPFTOOL) gen skeleton $< name memattr_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/%.o: userspace/%.c $(wildcard userspace/*.h) bpf/memattr.h | $(BUILD)
	$(CC) $(CFLAGS) -c $< -o $@

# Only the loader includes the generated skeleton.
$(BUILD)/bpf_loader.o: $(BUILD)/memattr.skel.h

memattr-bpf: $(ALL_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

install: memattr-bpf
	install -D -m 0755 memattr-bpf $(DESTDIR)$(PREFIX)/sbin/memattr-bpf
	install -d $(DESTDIR)$(PREFIX)/share/memattr-bpf/uprobe_specs
	install -m 0644 uprobe_specs/*.spec $(DESTDIR)$(PREFIX)/share/memattr-bpf/uprobe_specs/

$(BUILD)/tests/%: tests/unit/%.c $(PURE_OBJS) | $(BUILD)
	$(CC) $(CFLAGS) -Itests/unit $< $(PURE_OBJS) -o $@ -lcmocka -lelf -lm

unit-test: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; (cd tests/unit && ../../$$t); done

workloads:
	$(MAKE) -C tests/workloads

integration-test: memattr-bpf workloads
	tests/integration/run_all.sh

test: unit-test integration-test

# Overhead and accuracy benchmarks (as root); rewrites BENCHMARKS.md.
# BENCH_QUICK=1 for a short smoke run. See tools/bench/run.sh.
bench:
	tools/bench/run.sh

clean:
	rm -rf $(BUILD) memattr-bpf
	$(MAKE) -C tests/workloads clean
