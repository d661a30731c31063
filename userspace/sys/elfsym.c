// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsym.h"
#include "safe_open.h"

static int by_vaddr(const void *a, const void *b)
{
	const struct elfsym_func *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	/* Aliases: prefer the one with a size, then the shorter name (MPI_X over PMPI_X). */
	if ((x->size == 0) != (y->size == 0))
		return x->size ? -1 : 1;
	return (int)strlen(x->name) - (int)strlen(y->name);
}

static int add_func(struct elfsym_table *t, size_t *cap, uint64_t vaddr, uint64_t size,
		    const char *name)
{
	if (t->nfuncs == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct elfsym_func *f = realloc(t->funcs, n * sizeof(*f));

		if (!f)
			return -ENOMEM;
		t->funcs = f;
		*cap = n;
	}
	t->funcs[t->nfuncs].name = strdup(name);
	if (!t->funcs[t->nfuncs].name)
		return -ENOMEM;
	t->funcs[t->nfuncs].vaddr = vaddr;
	t->funcs[t->nfuncs].size = size;
	t->nfuncs++;
	return 0;
}

static int by_name(const void *a, const void *b, void *arg)
{
	const struct elfsym_func *funcs = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(funcs[x].name, funcs[y].name);

	if (c)
		return c;
	return x < y ? -1 : x > y;
}

static int index_names(struct elfsym_table *t)
{
	if (t->nfuncs > UINT32_MAX)
		return -EFBIG;
	t->by_name = malloc((t->nfuncs ? t->nfuncs : 1) * sizeof(*t->by_name));
	if (!t->by_name)
		return -ENOMEM;
	for (size_t i = 0; i < t->nfuncs; i++)
		t->by_name[i] = (uint32_t)i;
	if (t->nfuncs > 1)
		qsort_r(t->by_name, t->nfuncs, sizeof(*t->by_name), by_name, t->funcs);
	return 0;
}

static int read_symbols(struct elfsym_table *t, Elf *e)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			int type;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			type = GELF_ST_TYPE(s.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
			    !s.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || !name[0])
				continue;
			if (add_func(t, &cap, s.st_value, s.st_size, name))
				return -ENOMEM;
		}
	}
	if (t->nfuncs > 1)	/* a file without functions has funcs NULL: qsort(NULL, 0) is undefined */
		qsort(t->funcs, t->nfuncs, sizeof(*t->funcs), by_vaddr);
	return index_names(t);
}

static int read_segments(struct elfsym_table *t, Elf *e)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return -ENOEXEC;
	t->segs = calloc(n ? n : 1, sizeof(*t->segs));
	if (!t->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		t->segs[t->nsegs++] = (struct elfsym_seg){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
	return 0;
}

/*
 * Open path as an ELF file: 0 with *fd and *e set (close both), or -errno.
 * Only a regular file of sane size, and never blocking: a FIFO or device
 * planted in a library path must not stall or feed a root tool. Symlinks
 * are followed, as the loader and the probe's own attach do (/proc/PID/exe
 * and /proc/PID/root are links); st, if not NULL, says which file it was.
 */
static int open_elf(const char *path, int *fd, Elf **e, struct stat *st)
{
	struct stat sb;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	*fd = safe_openat(AT_FDCWD, path, SAFE_FOLLOW | SAFE_ANY_NLINK, ELFSYM_MAX_FILE, &sb);
	if (*fd < 0)
		return errno == EINVAL || errno == EISDIR || errno == EFBIG ? -ENOEXEC : -errno;
	if (st)
		*st = sb;
	*e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*e || elf_kind(*e) != ELF_K_ELF) {
		if (*e)
			elf_end(*e);
		close(*fd);
		return -ENOEXEC;
	}
	return 0;
}

/*
 * The GNU build ID (NT_GNU_BUILD_ID in a PT_NOTE segment, or in a note
 * section of a file without program headers) as lowercase hex into hex;
 * "" when the file has none or it does not fit.
 */
static bool note_build_id(Elf_Data *d, char *hex, size_t len)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *desc = (const unsigned char *)d->d_buf + desc_off;

		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4))
			continue;
		if (!nh.n_descsz || nh.n_descsz > ELFSYM_BUILD_ID_MAX || 2 * nh.n_descsz >= len)
			return false;
		for (size_t i = 0; i < nh.n_descsz; i++)
			snprintf(hex + 2 * i, 3, "%02x", desc[i]);
		return true;
	}
	return false;
}

static void read_build_id(Elf *e, char *hex, size_t len)
{
	Elf_Scn *scn = NULL;
	size_t n;

	hex[0] = '\0';
	if (!elf_getphdrnum(e, &n))
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			if (note_build_id(elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
							       ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR),
					  hex, len))
				return;
		}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    note_build_id(elf_getdata(scn, NULL), hex, len))
			return;
	}
	hex[0] = '\0';
}

int elfsym_build_id(const char *path, char *hex, size_t len)
{
	int fd;
	Elf *e;

	if (!len)
		return -EINVAL;
	hex[0] = '\0';
	/* A file gone, unreadable or not ELF has no build ID: not an error to the caller. */
	if (open_elf(path, &fd, &e, NULL))
		return 0;
	read_build_id(e, hex, len);
	elf_end(e);
	close(fd);
	return 0;
}

int elfsym_load(struct elfsym_table *t, const char *path)
{
	struct stat st;
	int fd, ret;
	Elf *e;

	memset(t, 0, sizeof(*t));
	ret = open_elf(path, &fd, &e, &st);
	if (ret)
		return ret;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->size = (uint64_t)st.st_size;
	t->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	t->path = strdup(path);
	ret = t->path ? read_segments(t, e) : -ENOMEM;
	if (!ret)
		ret = read_symbols(t, e);
	if (!ret)
		read_build_id(e, t->build_id, sizeof(t->build_id));
	elf_end(e);
	close(fd);
	if (ret)
		elfsym_free(t);
	return ret;
}

void elfsym_free(struct elfsym_table *t)
{
	for (size_t i = 0; i < t->nfuncs; i++)
		free(t->funcs[i].name);
	free(t->funcs);
	free(t->by_name);
	free(t->segs);
	free(t->path);
	memset(t, 0, sizeof(*t));
}

static bool vaddr_to_off(const struct elfsym_table *t, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct elfsym_seg *s = &t->segs[i];

		if (vaddr >= s->vaddr && vaddr < s->vaddr + s->filesz) {
			*off = vaddr - s->vaddr + s->offset;
			return true;
		}
	}
	return false;
}

static bool off_to_vaddr(const struct elfsym_table *t, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct elfsym_seg *s = &t->segs[i];

		if (off >= s->offset && off < s->offset + s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

int elfsym_func_offset(const struct elfsym_table *t, const char *name, uint64_t *file_off)
{
	size_t lo = 0, hi = t->nfuncs;
	const struct elfsym_func *f;

	/* The first of the name's entries: the one a scan in vaddr order would find. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->funcs[t->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->nfuncs || strcmp(t->funcs[t->by_name[lo]].name, name))
		return -ENOENT;
	f = &t->funcs[t->by_name[lo]];
	return vaddr_to_off(t, f->vaddr, file_off) ? 0 : -ENOENT;
}

const char *elfsym_name_at(const struct elfsym_table *t, uint64_t off, uint64_t *delta)
{
	size_t lo = 0, hi = t->nfuncs;
	uint64_t vaddr;

	if (!off_to_vaddr(t, off, &vaddr))
		return NULL;
	/* Last function starting at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->funcs[mid].vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* Aliases sort best first: step back to the first of this address. */
	lo--;
	while (lo > 0 && t->funcs[lo - 1].vaddr == t->funcs[lo].vaddr)
		lo--;
	/* A symbol without a size covers up to the next one. */
	if (t->funcs[lo].size && vaddr >= t->funcs[lo].vaddr + t->funcs[lo].size)
		return NULL;
	*delta = vaddr - t->funcs[lo].vaddr;
	return t->funcs[lo].name;
}

static int read_dynamic(Elf *e, struct elfsym_needed *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			return -ENOEXEC;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *str;
			char **v;

			if (!gelf_getdyn(d, (int)i, &dyn))
				continue;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH)
				continue;
			str = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!str)
				continue;
			if (dyn.d_tag != DT_NEEDED) {
				/* DT_RUNPATH wins over DT_RPATH, as in the loader. */
				if (out->runpath && dyn.d_tag == DT_RPATH)
					continue;
				free(out->runpath);
				out->runpath = strdup(str);
				continue;
			}
			v = realloc(out->names, (out->n + 1) * sizeof(*v));
			if (!v)
				return -ENOMEM;
			out->names = v;
			v[out->n] = strdup(str);
			if (!v[out->n])
				return -ENOMEM;
			out->n++;
		}
	}
	return 0;
}

int elfsym_read_needed(const char *path, struct elfsym_needed *out)
{
	int fd, ret;
	Elf *e;

	memset(out, 0, sizeof(*out));
	ret = open_elf(path, &fd, &e, NULL);
	if (ret)
		return ret;
	ret = read_dynamic(e, out);
	elf_end(e);
	close(fd);
	if (ret)
		elfsym_needed_free(out);
	return ret;
}

void elfsym_needed_free(struct elfsym_needed *nd)
{
	for (size_t i = 0; i < nd->n; i++)
		free(nd->names[i]);
	free(nd->names);
	free(nd->runpath);
	memset(nd, 0, sizeof(*nd));
}

/*
 * The writable PT_LOAD holding file offset off: the first page of the
 * segment is at (p_offset rounded down), but once the loader has made its
 * RELRO part read-only the rw-p mapping starts further in -- any page of
 * the segment's file part can be the mapping's.
 */
static bool holds_offset(const GElf_Phdr *ph, uint64_t off)
{
	uint64_t first = ph->p_offset & ~(ELFSYM_PAGE - 1);

	return ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && off >= first &&
	       off < ph->p_offset + ph->p_filesz;
}

int elfsym_writable_end(int fd, uint64_t map_start, uint64_t map_offset, uint64_t *end)
{
	struct stat st;
	size_t n;
	Elf *e;
	int ret = -ENOENT;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -ENOEXEC;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getphdrnum(e, &n)) {
		if (e)
			elf_end(e);
		return -ENOEXEC;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || !holds_offset(&ph, map_offset))
			continue;
		/* File offset f lies at map_start + (f - map_offset), up to memsz. */
		*end = map_start - map_offset + ph.p_offset + ph.p_memsz;
		*end = (*end + ELFSYM_PAGE - 1) & ~(ELFSYM_PAGE - 1);
		ret = 0;
		break;
	}
	elf_end(e);
	return ret;
}
