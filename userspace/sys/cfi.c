// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi.h"
#include "elfsym.h"

#define CFI_MAX_FILES	2048	/* past this, files are not cached (then not unwound) */
#define ROW_CACHE	256	/* per file: return addresses repeat */

struct row_slot {
	uint64_t vaddr;		/* 0: empty */
	int ret;
	struct cfi_row row;
};

struct cfi_file {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	Elf *elf;
	Dwarf *dwarf;		/* for .debug_frame, NULL when none */
	Dwarf_CFI *eh, *debug;	/* NULL when the file has no such section */
	struct elfsym_table syms;
	struct row_slot *rows;
	uint64_t entry;		/* e_entry: _start, 0 when none */
	/* .eh_frame_hdr's sorted table of FDEs, in the file's mapping; NULL when unusable. */
	const uint8_t *fde_table;
	uint32_t nfdes;
	uint64_t hdr_vaddr;
	const uint8_t *raw;	/* the whole file, as libelf mapped it */
	size_t raw_size;
};

static struct cfi_file **files;
static unsigned int nfiles;

unsigned int cfi_files_loaded(void)
{
	return nfiles;
}

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Bytes at ELF address vaddr, n of them within the file, or NULL. */
static const uint8_t *at_vaddr(const struct cfi_file *f, uint64_t vaddr, size_t n)
{
	for (size_t i = 0; i < f->syms.nsegs; i++) {
		const struct elfsym_seg *s = &f->syms.segs[i];

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		if (s->filesz - (vaddr - s->vaddr) < n || s->offset + (vaddr - s->vaddr) + n > f->raw_size)
			return NULL;
		return f->raw + s->offset + (vaddr - s->vaddr);
	}
	return NULL;
}

/*
 * The binary search table of .eh_frame_hdr (PT_GNU_EH_FRAME): where each
 * FDE, so each function with CFI, starts. libdw answers rows, whose range
 * is the row's, not the function's; a function's bounds need the FDE.
 * Only the encoding every linker writes (datarel sdata4 pairs) is read.
 */
static void load_fde_table(struct cfi_file *f)
{
	const uint8_t *h;
	GElf_Phdr ph;
	size_t n, ptr_size;
	uint32_t count;

	f->raw = (const uint8_t *)elf_rawfile(f->elf, &f->raw_size);
	if (!f->raw || elf_getphdrnum(f->elf, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		h = at_vaddr(f, ph.p_vaddr, 12);
		if (!h || h[0] != 1 || h[2] != DW_EH_PE_udata4 ||
		    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
			return;
		switch (h[1] & 0x0f) {
		case DW_EH_PE_udata4:
		case DW_EH_PE_sdata4:
			ptr_size = 4;
			break;
		case DW_EH_PE_udata8:
		case DW_EH_PE_sdata8:
			ptr_size = 8;
			break;
		default:
			return;
		}
		h = at_vaddr(f, ph.p_vaddr, 4 + ptr_size + 4);
		if (!h)
			return;
		count = rd32(h + 4 + ptr_size);
		if (!count || !at_vaddr(f, ph.p_vaddr, 4 + ptr_size + 4 + (size_t)count * 8))
			return;
		f->fde_table = h + 4 + ptr_size + 4;
		f->nfdes = count;
		f->hdr_vaddr = ph.p_vaddr;
		return;
	}
}

int cfi_file_fde_range(const struct cfi_file *f, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	size_t lo = 0, hi = f->nfdes;
	const uint8_t *fde;
	uint64_t fde_vaddr, loc;
	uint32_t range;

	/* Last FDE starting at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->hdr_vaddr + (uint64_t)(int64_t)(int32_t)rd32(f->fde_table + mid * 8) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	*start = f->hdr_vaddr + (uint64_t)(int64_t)(int32_t)rd32(f->fde_table + (lo - 1) * 8);
	fde_vaddr = f->hdr_vaddr + (uint64_t)(int64_t)(int32_t)rd32(f->fde_table + (lo - 1) * 8 + 4);
	/*
	 * length, CIE pointer, pc_begin (pcrel sdata4, as GCC and clang write
	 * it), pc_range. Checked against the table's start: another encoding
	 * would not decode to it.
	 */
	fde = at_vaddr(f, fde_vaddr, 16);
	if (!fde || rd32(fde) == 0xffffffff)
		return -ENOTSUP;
	loc = fde_vaddr + 8 + (uint64_t)(int64_t)(int32_t)rd32(fde + 8);
	if (loc != *start)
		return -ENOTSUP;
	range = rd32(fde + 12);
	*end = *start + range;
	return vaddr < *end ? 0 : -ENOENT;
}

int cfi_file_func_offset(const struct cfi_file *f, const char *name, uint64_t *off)
{
	return elfsym_func_offset(&f->syms, name, off);
}

/* Open the ELF and its CFI. The mapping libelf made outlives the descriptor. */
static int load_cfi(struct cfi_file *f, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	GElf_Ehdr eh;

	if (fd < 0)
		return -errno;
	f->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (f->elf && elf_kind(f->elf) == ELF_K_ELF) {
		if (gelf_getehdr(f->elf, &eh))
			f->entry = eh.e_entry;
		f->eh = dwarf_getcfi_elf(f->elf);
		/* .debug_frame: code built without .eh_frame (rare), or a file with both. */
		f->dwarf = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
		if (f->dwarf)
			f->debug = dwarf_getcfi(f->dwarf);
	}
	if (f->elf && elf_kind(f->elf) == ELF_K_ELF)
		load_fde_table(f);
	if (f->elf)
		elf_cntl(f->elf, ELF_C_FDDONE);
	close(fd);
	return f->elf ? 0 : -ENOEXEC;
}

static void cfi_file_free(struct cfi_file *f)
{
	if (f->eh)
		dwarf_cfi_end(f->eh);
	if (f->dwarf)
		dwarf_end(f->dwarf);
	if (f->elf)
		elf_end(f->elf);
	elfsym_free(&f->syms);
	free(f->rows);
	free(f);
}

struct cfi_file *cfi_file_get(const char *path)
{
	struct cfi_file *f, **grown;
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return NULL;
	for (unsigned int i = 0; i < nfiles; i++) {
		f = files[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino && f->size == (uint64_t)st.st_size &&
		    f->mtime_ns == mtime_ns(&st))
			return f;
	}
	if (nfiles >= CFI_MAX_FILES)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = (uint64_t)st.st_size;
	f->mtime_ns = mtime_ns(&st);
	f->rows = calloc(ROW_CACHE, sizeof(*f->rows));
	if (!f->rows || elfsym_load(&f->syms, path) || load_cfi(f, path)) {
		cfi_file_free(f);
		return NULL;
	}
	grown = realloc(files, (nfiles + 1) * sizeof(*files));
	if (!grown) {
		cfi_file_free(f);
		return NULL;
	}
	files = grown;
	files[nfiles++] = f;
	return f;
}

int cfi_file_vaddr(const struct cfi_file *f, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->syms.nsegs; i++) {
		const struct elfsym_seg *s = &f->syms.segs[i];

		if (off >= s->offset && off < s->offset + s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const char *cfi_file_func(const struct cfi_file *f, uint64_t off)
{
	uint64_t delta;

	return elfsym_name_at(&f->syms, off, &delta);
}

/* A register plus an offset: the only CFA rule compilers emit outside the PLT. */
static int breg(const Dwarf_Op *op, uint8_t *reg, int64_t *off)
{
	if (op->atom == DW_OP_bregx) {
		if (op->number >= CFI_NREGS)
			return -ENOTSUP;
		*reg = (uint8_t)op->number;
		*off = (int64_t)op->number2;
		return 0;
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg16) {
		*reg = (uint8_t)(op->atom - DW_OP_breg0);
		*off = (int64_t)op->number;
		return 0;
	}
	return -ENOTSUP;
}

/* libdw's register rule as a plain one; DWARF expressions are not followed. */
static int reg_rule(Dwarf_Frame *fr, int regno, struct cfi_rule *rule)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	int r = dwarf_frame_register(fr, regno, mem, &ops, &nops);

	if (r < 0)
		return -ENOTSUP;
	if (!nops) {
		/* 0: same value (this frame did not touch it); 1: undefined. */
		rule->kind = r == 0 ? CFI_SAME : CFI_UNDEF;
		return 0;
	}
	if (ops[0].atom == DW_OP_call_frame_cfa) {
		if (nops == 1)
			rule->off = 0;
		else if (nops == 2 && ops[1].atom == DW_OP_plus_uconst)
			rule->off = (int64_t)ops[1].number;
		else
			return -ENOTSUP;
		rule->kind = r == 0 ? CFI_OFFSET : CFI_VAL_OFFSET;
		return 0;
	}
	if (nops == 1 && r == 0 && ops[0].atom == DW_OP_regx && ops[0].number < CFI_NREGS) {
		rule->kind = CFI_REGISTER;
		rule->reg = (uint8_t)ops[0].number;
		return 0;
	}
	return -ENOTSUP;
}

static const int tracked[] = { CFI_RBX, CFI_RBP, CFI_R12, CFI_R13, CFI_R14, CFI_R15, CFI_RA };

static int frame_row(Dwarf_Frame *fr, struct cfi_row *row)
{
	Dwarf_Addr start, end;
	Dwarf_Op *ops;
	size_t nops;
	bool signal;

	memset(row, 0, sizeof(*row));
	if (dwarf_frame_info(fr, &start, &end, &signal) != CFI_RA || signal)
		return -ENOTSUP;
	if (dwarf_frame_cfa(fr, &ops, &nops) || nops != 1 || breg(ops, &row->cfa_reg, &row->cfa_off))
		return -ENOTSUP;
	for (size_t i = 0; i < sizeof(tracked) / sizeof(tracked[0]); i++)
		if (reg_rule(fr, tracked[i], &row->rule[tracked[i]]))
			return -ENOTSUP;
	return 0;
}

int cfi_file_row(struct cfi_file *f, uint64_t vaddr, struct cfi_row *row)
{
	struct row_slot *slot = &f->rows[(vaddr ^ (vaddr >> 8)) % ROW_CACHE];
	Dwarf_CFI *cfi[2] = { f->eh, f->debug };
	Dwarf_Frame *fr = NULL;
	int ret = -ENOENT;

	memset(row, 0, sizeof(*row));
	if (slot->vaddr == vaddr && vaddr) {
		*row = slot->row;
		return slot->ret;
	}
	for (int i = 0; i < 2 && ret == -ENOENT; i++) {
		if (!cfi[i] || dwarf_cfi_addrframe(cfi[i], vaddr, &fr))
			continue;
		ret = frame_row(fr, row);
		free(fr);
	}
	/*
	 * The entry point (_start: the loader's, the program's) is the
	 * outermost frame; the loader's has no CFI at all. Its first bytes
	 * (mov %rsp,%rdi; call _dl_start) end the walk, not as a failure.
	 */
	if (ret == -ENOENT && f->entry && vaddr >= f->entry && vaddr - f->entry < 16) {
		memset(row, 0, sizeof(*row));
		row->cfa_reg = CFI_RSP;
		row->rule[CFI_RA].kind = CFI_UNDEF;
		ret = 0;
	}
	slot->vaddr = vaddr;
	slot->ret = ret;
	slot->row = *row;
	return ret;
}
