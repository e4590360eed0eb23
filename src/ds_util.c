/* ds_util.c: errors, the allocation hook, capacities, files, text.
 *
 * All allocation in the library passes through ds_heap so that a caller
 * (and the allocation-failure tests) can replace it. */
#include "ds.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The message stays one line whatever it quotes (a caller's string, a
 * name read from a file): control characters become '?'. */
int ds_fail(ds_err *e, int code, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
		for (char *c = e->msg; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		e->code = code;
	}
	return code;
}

/* ---- heap ---- */

static void *std_fn(void *ud, void *ptr, size_t size)
{
	(void)ud;
	if (size == 0) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, size);
}

const ds_heap *ds_heap_std(void)
{
	static const ds_heap h = {std_fn, NULL};
	return &h;
}

static void *faulty_fn(void *ud, void *ptr, size_t size)
{
	ds_faulty *f = ud;
	if (size == 0) {
		if (ptr)
			f->live--;
		free(ptr);
		return NULL;
	}
	f->calls++;
	if (f->fail_at > 0 && f->calls >= f->fail_at)
		return NULL;
	void *q = realloc(ptr, size);
	if (q && !ptr)
		f->live++;
	return q;
}

ds_heap ds_heap_faulty(ds_faulty *state)
{
	ds_heap h = {faulty_fn, state};
	return h;
}

void *ds_alloc(const ds_heap *h, size_t count, size_t size)
{
	if (count == 0 || size == 0)
		count = size = 1;
	if (count > SIZE_MAX / size)
		return NULL;
	void *p = h->fn(h->ud, NULL, count * size);
	if (p)
		memset(p, 0, count * size);
	return p;
}

void *ds_grow(const ds_heap *h, void *p, size_t count, size_t size)
{
	if (count == 0 || size == 0)
		count = size = 1;
	if (count > SIZE_MAX / size)
		return NULL;
	return h->fn(h->ud, p, count * size);
}

void ds_free(const ds_heap *h, void *p)
{
	if (p)
		h->fn(h->ud, p, 0);
}

char *ds_strdup(const ds_heap *h, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = ds_alloc(h, n, 1);
	if (d)
		memcpy(d, s, n);
	return d;
}

/* The capacity a growable array of capacity cap takes for need
 * elements: at least 16, doubling (ds_reserve, ds_arena_reserve). */
static int64_t reserve_cap(int64_t cap, int64_t need)
{
	int64_t c = cap < 16 ? 16 : cap;
	while (c < need)
		c *= 2;
	return c;
}

int ds_reserve(const ds_heap *h, void **p, int64_t *cap, int64_t need,
	       size_t elem, ds_err *e)
{
	if (need <= *cap)
		return DS_OK;
	int64_t c = reserve_cap(*cap, need);
	void *q = ds_grow(h, *p, (size_t)c, elem);
	if (!q)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	*p = q;
	*cap = c;
	return DS_OK;
}

/* ---- arena ---- */

/* A block's header: the links, padded so the payload keeps the strictest
 * alignment. */
struct ds_arena_blk {
	union {
		struct {
			ds_arena_blk *prev; /* newer, or NULL at the head */
			ds_arena_blk *next; /* older */
		} link;
		max_align_t align;
	} u;
};

void ds_arena_init(ds_arena *a, const ds_heap *h)
{
	a->heap = h;
	a->head = NULL;
	a->failed = false;
}

static void arena_link(ds_arena *a, ds_arena_blk *b)
{
	if (b->u.link.prev)
		b->u.link.prev->u.link.next = b;
	else
		a->head = b;
	if (b->u.link.next)
		b->u.link.next->u.link.prev = b;
}

void *ds_arena_grow(ds_arena *a, void *p, size_t count, size_t size)
{
	if (count == 0 || size == 0)
		count = size = 1;
	if (a->failed || count > (SIZE_MAX - sizeof(ds_arena_blk)) / size) {
		a->failed = true;
		return NULL;
	}
	ds_arena_blk *old = p ? (ds_arena_blk *)p - 1 : NULL;
	ds_arena_blk *b = a->heap->fn(a->heap->ud, old,
				      sizeof *b + count * size);
	if (!b) {
		a->failed = true;
		return NULL;
	}
	if (!old) {
		b->u.link.prev = NULL;
		b->u.link.next = a->head;
	}
	arena_link(a, b);
	return b + 1;
}

bool ds_arena_reserve(ds_arena *a, void **p, int64_t *cap, int64_t need,
		      size_t elem)
{
	if (need <= *cap)
		return true;
	int64_t c = reserve_cap(*cap, need);
	void *q = ds_arena_grow(a, *p, (size_t)c, elem);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

void *ds_arena_alloc(ds_arena *a, size_t count, size_t size)
{
	void *p = ds_arena_grow(a, NULL, count, size);
	if (p)
		memset(p, 0, count && size ? count * size : 1);
	return p;
}

void ds_arena_release(ds_arena *a, void *p)
{
	if (!p)
		return;
	ds_arena_blk *b = (ds_arena_blk *)p - 1;
	if (b->u.link.prev)
		b->u.link.prev->u.link.next = b->u.link.next;
	else
		a->head = b->u.link.next;
	if (b->u.link.next)
		b->u.link.next->u.link.prev = b->u.link.prev;
	a->heap->fn(a->heap->ud, b, 0);
}

void ds_arena_free(ds_arena *a)
{
	ds_arena_blk *b = a->head;
	while (b) {
		ds_arena_blk *next = b->u.link.next;
		a->heap->fn(a->heap->ud, b, 0);
		b = next;
	}
	a->head = NULL;
	a->failed = false;
}

/* ---- memories ---- */

const char *const ds_mem_names[DS_NMEM] = {"L1", "UB", "L0A", "L0B", "L0C"};

void ds_caps_default(ds_caps *c)
{
	static const int64_t def[DS_NMEM] = {4096, 1024, 256, 256, 512};
	memcpy(c->cap, def, sizeof def);
}

bool ds_pipe_busier(int64_t la, const char *na, int64_t lb, const char *nb)
{
	return la > lb || (la == lb && strcmp(na, nb) < 0);
}

int ds_mem_from_name(const char *name)
{
	for (int m = 0; m < DS_NMEM; m++)
		if (strcmp(name, ds_mem_names[m]) == 0)
			return m;
	return -1;
}

int ds_caps_parse(ds_caps *c, const char *spec, ds_err *e)
{
	const char *p = spec;
	while (*p) {
		const char *eq = strchr(p, '=');
		const char *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (!eq || eq > end)
			return ds_fail(e, DS_EINPUT,
				       "--cap: expected MEM=SIZE in '%s'", spec);
		char name[8];
		size_t nl = (size_t)(eq - p);
		if (nl >= sizeof name)
			nl = sizeof name - 1;
		memcpy(name, p, nl);
		name[nl] = 0;
		int m = ds_mem_from_name(name);
		if (m < 0)
			return ds_fail(e, DS_EINPUT,
				       "--cap: unknown memory '%.*s' (L1, UB, "
				       "L0A, L0B, L0C)",
				       (int)(eq - p), p);
		int64_t v = 0;
		const char *q = eq + 1;
		if (q == end)
			return ds_fail(e, DS_EINPUT, "--cap: no size for %s",
				       name);
		for (; q < end; q++) {
			if (*q < '0' || *q > '9')
				return ds_fail(e, DS_EINPUT,
					       "--cap: size of %s is not a "
					       "positive integer",
					       name);
			v = v * 10 + (*q - '0');
			if (v > DS_VALUE_MAX)
				return ds_fail(e, DS_EINPUT,
					       "--cap: size of %s is too large",
					       name);
		}
		if (v <= 0)
			return ds_fail(e, DS_EINPUT,
				       "--cap: size of %s must be positive",
				       name);
		c->cap[m] = v;
		p = *end ? end + 1 : end;
	}
	return DS_OK;
}

/* ---- files ---- */

int ds_read_file(const ds_heap *h, const char *path, char **text, size_t *len,
		 ds_err *e)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return ds_fail(e, DS_EINPUT, "%s: cannot open: %s", path,
			       strerror(errno));
	size_t cap = 1 << 16, n = 0;
	char *buf = ds_grow(h, NULL, cap, 1);
	if (!buf) {
		fclose(f);
		return ds_fail(e, DS_ENOMEM, "%s: out of memory", path);
	}
	for (;;) {
		if (n + 1 >= cap) {
			char *nb = ds_grow(h, buf, cap * 2, 1);
			if (!nb) {
				ds_free(h, buf);
				fclose(f);
				return ds_fail(e, DS_ENOMEM,
					       "%s: out of memory", path);
			}
			buf = nb;
			cap *= 2;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		ds_free(h, buf);
		return ds_fail(e, DS_EINPUT, "%s: read error", path);
	}
	buf[n] = 0;
	*text = buf;
	*len = n;
	return DS_OK;
}

int ds_write_files_atomic(const ds_heap *h, int count,
			  const char *const *paths, const char *const *data,
			  const size_t *lens, ds_err *e)
{
	char **tmp = ds_alloc(h, (size_t)count, sizeof *tmp);
	if (!tmp)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	int rc = DS_OK, made = 0;
	for (; made < count; made++) {
		const char *path = paths[made];
		size_t pl = strlen(path) + 16;
		char *t = ds_alloc(h, pl, 1);
		if (!t) {
			rc = ds_fail(e, DS_ENOMEM, "%s: out of memory", path);
			break;
		}
		snprintf(t, pl, "%s.tmpXXXXXX", path);
		int fd = mkstemp(t);
		if (fd < 0) {
			rc = ds_fail(e, DS_EINPUT, "%s: cannot create: %s",
				     path, strerror(errno));
			ds_free(h, t);
			break;
		}
		tmp[made] = t;
		fchmod(fd, 0644); /* mkstemp makes 0600; results are shared */
		FILE *f = fdopen(fd, "wb");
		bool ok = f != NULL;
		if (ok && lens[made])
			ok = fwrite(data[made], 1, lens[made], f) == lens[made];
		if (f)
			ok = (fclose(f) == 0) && ok;
		else
			close(fd);
		if (!ok) {
			rc = ds_fail(e, DS_EINPUT, "%s: cannot write: %s", path,
				     strerror(errno));
			made++;
			break;
		}
	}
	/* rename() fails in practice only on a destination that is a folder:
	 * look for one before the first rename, so that a failure leaves all
	 * the old files in place */
	for (int i = 0; rc == DS_OK && i < count; i++) {
		struct stat st;
		if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc = ds_fail(e, DS_EINPUT, "%s: cannot write: it is "
				     "a folder", paths[i]);
	}
	for (int i = 0; rc == DS_OK && i < count; i++)
		if (rename(tmp[i], paths[i]) != 0)
			rc = ds_fail(e, DS_EINPUT, "%s: cannot write: %s",
				     paths[i], strerror(errno));
	for (int i = 0; i < made; i++) {
		if (rc != DS_OK)
			remove(tmp[i]);
		ds_free(h, tmp[i]);
	}
	ds_free(h, tmp);
	return rc;
}

int ds_write_file_atomic(const ds_heap *h, const char *path, const char *data,
			 size_t len, ds_err *e)
{
	return ds_write_files_atomic(h, 1, &path, &data, &len, e);
}

size_t ds_utf8_check(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		unsigned c = u[i];
		size_t k;
		unsigned min;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			k = 1, min = 0x80, c &= 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			k = 2, min = 0x800, c &= 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			k = 3, min = 0x10000, c &= 0x07;
		} else {
			return i;
		}
		for (size_t j = 1; j <= k; j++) {
			if (i + j >= len || (u[i + j] & 0xC0) != 0x80)
				return i;
			c = (c << 6) | (u[i + j] & 0x3F);
		}
		if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
			return i;
		i += k + 1;
	}
	return len;
}

/* ---- text ---- */

void ds_text_init(ds_text *t, const ds_heap *h)
{
	memset(t, 0, sizeof *t);
	t->heap = h;
}

void ds_text_printf(ds_text *t, const char *fmt, ...)
{
	if (t->failed)
		return;
	for (;;) {
		int64_t room = t->cap - t->len;
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(room > 0 ? t->s + t->len : NULL,
				  room > 0 ? (size_t)room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if (n < room) {
			t->len += n;
			return;
		}
		if (ds_reserve(t->heap, (void **)&t->s, &t->cap,
			       t->len + n + 1, 1, NULL) != DS_OK) {
			t->failed = true;
			return;
		}
	}
}

void ds_text_free(ds_text *t)
{
	ds_free(t->heap, t->s);
	memset(t, 0, sizeof *t);
}

int ds_hkey_cmp(const void *a, const void *b)
{
	const ds_hkey *p = a, *q = b;
	if (p->h != q->h)
		return p->h < q->h ? -1 : 1;
	return (p->x > q->x) - (p->x < q->x);
}

/* Digit d (8 bits) of k's sort key, least significant first: the four
 * of x (sign flipped: x is signed), then the eight of h. */
static unsigned hkey_digit(const ds_hkey *k, int d)
{
	if (d < 4)
		return ((uint32_t)k->x ^ 0x80000000u) >> (8 * d) & 0xff;
	return (unsigned)(k->h >> (8 * (d - 4)) & 0xff);
}

/* Below this many keys, qsort: the radix sort's fixed cost (twelve
 * histograms of 256) would dominate.  Not tuned: the sorts that cost
 * time here are of thousands of keys (every node or edge of a graph). */
#define HKEY_RADIX_MIN 64

void ds_hkey_sort(const ds_heap *h, ds_hkey *k, size_t n)
{
	ds_hkey *t = n >= HKEY_RADIX_MIN && n <= UINT32_MAX
			     ? ds_alloc(h, n, sizeof *t)
			     : NULL;
	if (!t) {
		qsort(k, n, sizeof *k, ds_hkey_cmp);
		return;
	}
	static const int nd = 12;
	uint32_t cnt[12][256] = {{0}};
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < nd; d++)
			cnt[d][hkey_digit(&k[i], d)]++;
	ds_hkey *src = k, *dst = t;
	for (int d = 0; d < nd; d++) {
		if (cnt[d][hkey_digit(&k[0], d)] == n)
			continue; /* one digit for all: the pass changes nothing */
		uint32_t at = 0;
		for (int v = 0; v < 256; v++) {
			uint32_t c = cnt[d][v];
			cnt[d][v] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[d][hkey_digit(&src[i], d)]++] = src[i];
		ds_hkey *s = src;
		src = dst;
		dst = s;
	}
	if (src != k)
		memcpy(k, src, n * sizeof *k);
	ds_free(h, t);
}
