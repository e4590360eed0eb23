/* ds_csv.c: graphs as two CSV tables, and the names of graph files.
 *
 * A graph is a nodes table "<case>_nodes.csv" and an edges table
 * "<case>_edges.csv" beside it (ds_csv_edges_path).
 *
 * Nodes table: a header row naming the columns Id, Op, BufId, Size, Type,
 * Pipe, Cycles and Bufs (any order, any letter case; other columns are
 * ignored), then one row per node.  Cells that do not apply to a node's
 * kind are ignored; the writer leaves them empty.  Bufs is "3;4", "[3,4]",
 * "[]" or empty.  Edges table: a header with Src and Dst (or From and To),
 * then one row per edge.
 *
 * Requires: RFC 4180 text: cells separated by commas; a cell in double
 * quotes may hold commas, line ends and doubled quotes.  Also accepted: LF,
 * CRLF or CR line ends, a UTF-8 byte order mark, blank lines (skipped),
 * spaces around an unquoted cell (not part of it), and integers written
 * with a ".0" fraction, as spreadsheets and pandas write them.
 * Guarantees: every problem is refused with one line "file:line: ..."
 * naming the column; a loaded graph has passed ds_builder_finish.  The
 * writer puts the header Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs (and
 * Src,Dst), LF line ends, Bufs as "3;4", and quotes a cell only when it
 * holds a comma, quote or line end or starts or ends with a space or tab,
 * so that reading gives back every name exactly.  It writes both tables
 * or, as far as rename() allows, neither.
 *
 * ds_csv_points reads the points other solutions reached (the columns
 * case, source, extra_ddr and makespan of a table such as
 * ../shared/published.csv; other columns ignored), with the same rules. */
#include "ds.h"

#include <stdio.h>
#include <string.h>

/* ---- names ---- */

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Does s end with suffix, ignoring ASCII case? (suffix in lower case) */
static bool ends_with_ci(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	if (k > n)
		return false;
	for (size_t i = 0; i < k; i++)
		if (lower(s[n - k + i]) != suffix[i])
			return false;
	return true;
}

char *ds_csv_edges_path(const ds_heap *h, const char *nodes_path)
{
	size_t n = strlen(nodes_path), keep = n;
	if (ends_with_ci(nodes_path, n, "_nodes.csv"))
		keep = n - strlen("_nodes.csv");
	else if (ends_with_ci(nodes_path, n, ".csv"))
		keep = n - strlen(".csv");
	char *s = ds_alloc(h, keep + sizeof "_edges.csv", 1);
	if (!s)
		return NULL;
	memcpy(s, nodes_path, keep);
	memcpy(s + keep, "_edges.csv", sizeof "_edges.csv");
	return s;
}

size_t ds_case_span(const char *path, const char **start)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	/* a leading dot starts a hidden name, not an extension */
	const char *dot = strrchr(base, '.');
	if (dot && dot > base) {
		bool csv = ends_with_ci(base, n, ".csv");
		n = (size_t)(dot - base);
		if (csv && ends_with_ci(base, n, "_nodes"))
			n -= strlen("_nodes");
	}
	*start = base;
	return n;
}

char *ds_case_name(const ds_heap *h, const char *path)
{
	const char *base;
	size_t n = ds_case_span(path, &base);
	char *s = ds_alloc(h, n + 1, 1);
	if (s)
		memcpy(s, base, n);
	return s;
}

/* ---- reading CSV ---- */

/* One file held in memory.  Cells are unquoted in place, so each is a
 * NUL-terminated string inside text, valid until csv_close. */
typedef struct csv {
	const ds_heap *heap;
	const char *path;
	char *text;
	char *p, *end;	/* the reading position and the end of the text */
	long line;	/* line of p */
	long row_line;	/* line where the last row read starts */
	char **cell;	/* the last row read */
	int64_t ncell, cap;
} csv;

static void csv_close(csv *c)
{
	ds_free(c->heap, c->text);
	ds_free(c->heap, c->cell);
	memset(c, 0, sizeof *c);
}

/* 1-based line of byte offset off; LF, CRLF and a lone CR each end one. */
static long line_of(const char *text, size_t len, size_t off)
{
	long line = 1;
	for (size_t i = 0; i < off; i++)
		if (text[i] == '\n' ||
		    (text[i] == '\r' && (i + 1 == len || text[i + 1] != '\n')))
			line++;
	return line;
}

static int csv_open(csv *c, const ds_heap *h, const char *path, ds_err *e)
{
	memset(c, 0, sizeof *c);
	c->heap = h;
	c->path = path;
	c->line = 1;
	size_t len;
	int rc = ds_read_file(h, path, &c->text, &len, e);
	if (rc)
		return rc;
	size_t bad = ds_utf8_check(c->text, len);
	const char *nul = memchr(c->text, 0, len);
	if (bad < len)
		rc = ds_fail(e, DS_EINPUT,
			     "%s:%ld: not valid UTF-8 (byte offset %zu)", path,
			     line_of(c->text, len, bad), bad);
	else if (nul) /* cells are C strings: a NUL would cut one short */
		rc = ds_fail(e, DS_EINPUT, "%s:%ld: NUL byte in the text", path,
			     line_of(c->text, len, (size_t)(nul - c->text)));
	if (rc) {
		csv_close(c);
		return rc;
	}
	c->p = c->text;
	c->end = c->text + len;
	if (len >= 3 && memcmp(c->text, "\xEF\xBB\xBF", 3) == 0)
		c->p += 3; /* the byte order mark is not part of the header */
	return DS_OK;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Steps over the line end at c->p, whose first character is first (passed
 * in because the cell reader may have overwritten it with the cell's NUL). */
static void skip_line_end(csv *c, char first)
{
	if (first == '\r' && c->p + 1 < c->end && c->p[1] == '\n')
		c->p++;
	c->p++;
	c->line++;
}

/* Steps over blank lines (nothing but spaces and tabs) up to the line
 * where the next row starts; false at the end of the text. */
static bool csv_skip_blank_lines(csv *c)
{
	for (;;) {
		char *q = c->p;
		while (q < c->end && blank(*q))
			q++;
		if (q == c->end) {
			c->p = q;
			return false;
		}
		if (*q != '\n' && *q != '\r')
			return true;
		c->p = q;
		skip_line_end(c, *q);
	}
}

/* Unquotes the quoted cell at *pp (on its opening quote) in place: the
 * text only gets shorter.  *stop gets where the cell's text ends, *pp the
 * character after the closing quote. */
static int csv_unquote(csv *c, char **pp, char **stop, long long col,
		       ds_err *e)
{
	long open_line = c->line;
	char *p = *pp, *w = p++;
	for (;;) {
		if (p == c->end)
			return ds_fail(e, DS_EINPUT,
				       "%s:%ld: the quote opening cell %lld "
				       "is never closed",
				       c->path, open_line, col);
		if (*p == '"' && p + 1 < c->end && p[1] == '"') {
			*w++ = '"';
			p += 2;
			continue;
		}
		if (*p == '"') {
			p++;
			break;
		}
		if (*p == '\n' ||
		    (*p == '\r' && (p + 1 == c->end || p[1] != '\n')))
			c->line++;
		*w++ = *p++;
	}
	*pp = p;
	*stop = w;
	return DS_OK;
}

/* A quoted cell at *pp: unquoted, then only blanks up to the comma or
 * line end.  *stop gets where the cell's text ends, *pp the character
 * that ends the cell. */
static int csv_quoted(csv *c, char **pp, char **stop, long long col,
		      ds_err *e)
{
	int rc = csv_unquote(c, pp, stop, col, e);
	if (rc)
		return rc;
	char *p = *pp;
	while (p < c->end && blank(*p))
		p++;
	if (p < c->end && *p != ',' && *p != '\n' && *p != '\r')
		return ds_fail(e, DS_EINPUT,
			       "%s:%ld: text after the closing quote of cell "
			       "%lld",
			       c->path, c->line, col);
	*pp = p;
	return DS_OK;
}

/* An unquoted cell at *pp: up to the comma or line end, the blanks at its
 * end not part of it.  *stop gets where the cell's text ends, *pp the
 * character that ends the cell. */
static int csv_unquoted(csv *c, char **pp, char **stop, long long col,
			ds_err *e)
{
	char *cell = *pp, *p = *pp;
	while (p < c->end && *p != ',' && *p != '\n' && *p != '\r') {
		if (*p == '"')
			return ds_fail(e, DS_EINPUT,
				       "%s:%ld: quote inside unquoted cell "
				       "%lld (quote the whole cell and double "
				       "the quote)",
				       c->path, c->line, col);
		p++;
	}
	char *s = p;
	while (s > cell && blank(s[-1]))
		s--;
	*stop = s;
	*pp = p;
	return DS_OK;
}

/* Reads the cell at c->p into c->cell[c->ncell++] (the caller made room)
 * and leaves c->p on the character that ends it: *term, 0 at the end of
 * the text. */
static int csv_cell(csv *c, char *term, ds_err *e)
{
	long long col = c->ncell + 1; /* for messages */
	char *p = c->p;
	while (p < c->end && blank(*p))
		p++;
	char *cell = p, *stop = NULL; /* stop: where the cell's text ends */
	int rc;
	if (p < c->end && *p == '"')
		rc = csv_quoted(c, &p, &stop, col, e);
	else
		rc = csv_unquoted(c, &p, &stop, col, e);
	if (rc)
		return rc;
	/* The text ends in the NUL ds_read_file adds, so stop is writable
	 * even at the end of the text. */
	*term = p < c->end ? *p : 0;
	*stop = 0;
	c->cell[c->ncell++] = cell;
	c->p = p;
	return DS_OK;
}

/* Reads the next row into c->cell[0..c->ncell); *got is false at the end
 * of the text.  Blank lines are skipped. */
static int csv_row(csv *c, bool *got, ds_err *e)
{
	*got = false;
	c->ncell = 0;
	if (!csv_skip_blank_lines(c))
		return DS_OK;
	c->row_line = c->line;
	*got = true;
	for (;;) {
		int rc = ds_reserve(c->heap, (void **)&c->cell, &c->cap,
				    c->ncell + 1, sizeof *c->cell, e);
		if (rc)
			return ds_fail(e, rc, "%s: out of memory", c->path);
		char term;
		if ((rc = csv_cell(c, &term, e)))
			return rc;
		if (term == ',') {
			c->p++;
			continue;
		}
		if (term)
			skip_line_end(c, term);
		return DS_OK;
	}
}

/* Is cell one of the names in alts ("Src|From"), ignoring case? */
static bool name_is(const char *cell, const char *alts)
{
	for (const char *a = alts; *a;) {
		size_t k = strcspn(a, "|"), i = 0;
		while (i < k && cell[i] && lower(cell[i]) == lower(a[i]))
			i++;
		if (i == k && !cell[i])
			return true;
		a += a[k] ? k + 1 : k;
	}
	return false;
}

/* Finds the wanted columns in the header row just read: col[k] is the
 * index of names[k], and title[k] its spelling in the header. */
static int find_columns(const csv *c, const char *const *names, int n,
			int64_t *col, const char **title, ds_err *e)
{
	for (int k = 0; k < n; k++)
		col[k] = -1;
	for (int64_t i = 0; i < c->ncell; i++)
		for (int k = 0; k < n; k++) {
			if (!name_is(c->cell[i], names[k]))
				continue;
			if (col[k] >= 0)
				return ds_fail(e, DS_EINPUT,
					       "%s:%ld: the header has column "
					       "%s twice (columns %lld and "
					       "%lld)",
					       c->path, c->row_line, names[k],
					       (long long)col[k] + 1,
					       (long long)i + 1);
			col[k] = i;
			title[k] = c->cell[i];
		}
	/* the lists are short: names[] are this file's few constants */
	char missing[160] = "", all[160] = "";
	size_t ml = 0, al = 0;
	for (int k = 0; k < n; k++) {
		al += (size_t)snprintf(all + al, sizeof all - al, "%s%s",
				       k ? ", " : "", names[k]);
		if (col[k] < 0)
			ml += (size_t)snprintf(missing + ml, sizeof missing - ml,
					       "%s%s", ml ? ", " : "",
					       names[k]);
	}
	if (ml) {
		/* show "Src|From" as "Src/From" */
		for (char *p = all; *p; p++)
			*p = *p == '|' ? '/' : *p;
		for (char *p = missing; *p; p++)
			*p = *p == '|' ? '/' : *p;
		return ds_fail(e, DS_EINPUT,
			       "%s:%ld: the header lacks column %s (needed: "
			       "%s)",
			       c->path, c->row_line, missing, all);
	}
	return DS_OK;
}

/* s[0..len) as an integer in 0..DS_VALUE_MAX: 0 ok, 1 not a non-negative
 * integer, 2 too large.  A fraction of zeros (pandas' "256.0") is fine. */
static int parse_count(const char *s, size_t len, int64_t *out)
{
	size_t i = 0;
	int64_t v = 0;
	while (i < len && s[i] >= '0' && s[i] <= '9') {
		int d = s[i++] - '0';
		if (v > (DS_VALUE_MAX - d) / 10)
			return 2;
		v = v * 10 + d;
	}
	if (i == 0)
		return 1;
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] == '0'; i++)
			;
	if (i < len)
		return 1;
	*out = v;
	return 0;
}

/* The cell of column title as an integer in 0..DS_VALUE_MAX. */
static int cell_int(const csv *c, const char *title, const char *s,
		    int64_t *out, ds_err *e)
{
	switch (parse_count(s, strlen(s), out)) {
	case 0:
		return DS_OK;
	case 2:
		return ds_fail(e, DS_EINPUT,
			       "%s:%ld: %s is too large (at most %lld), got "
			       "\"%.40s\"",
			       c->path, c->row_line, title,
			       (long long)DS_VALUE_MAX, s);
	default:
		if (!*s)
			return ds_fail(e, DS_EINPUT,
				       "%s:%ld: %s is empty, expected a "
				       "non-negative integer",
				       c->path, c->row_line, title);
		return ds_fail(e, DS_EINPUT,
			       "%s:%ld: %s must be a non-negative integer, got "
			       "\"%.40s\"",
			       c->path, c->row_line, title, s);
	}
}

/* A Bufs cell ("3;4", "[3, 4]", "[]", "") into (*bufs)[0..*n). */
static int cell_bufs(const csv *c, const char *title, const char *s,
		     int64_t **bufs, int64_t *cap, int32_t *n, ds_err *e)
{
	const char *p = s, *end = s + strlen(s);
	*n = 0;
	/* quoted cells keep their spaces; trim them here */
	while (p < end && blank(*p))
		p++;
	while (end > p && blank(end[-1]))
		end--;
	if (p < end && *p == '[') {
		if (end[-1] != ']' || end - p < 2)
			return ds_fail(e, DS_EINPUT,
				       "%s:%ld: %s: '[' without a closing ']' "
				       "in \"%.40s\"",
				       c->path, c->row_line, title, s);
		p++;
		end--;
		while (p < end && blank(*p))
			p++;
	}
	while (p < end) {
		const char *q = p;
		while (q < end && *q != ',' && *q != ';')
			q++;
		const char *a = p, *b = q;
		while (a < b && blank(*a))
			a++;
		while (b > a && blank(b[-1]))
			b--;
		int64_t v = 0;
		int bad = parse_count(a, (size_t)(b - a), &v);
		if (bad)
			return ds_fail(e, DS_EINPUT,
				       "%s:%ld: %s: item %d %s, got \"%.*s\" "
				       "(Bufs is a list like 3;4 or [3,4])",
				       c->path, c->row_line, title, *n + 1,
				       bad == 2 ? "is too large"
						: "must be a non-negative "
						  "integer",
				       (int)(b - a > 40 ? 40 : b - a), a);
		if (*n == INT32_MAX)
			return ds_fail(e, DS_EINPUT, "%s:%ld: %s: too many items",
				       c->path, c->row_line, title);
		int rc = ds_reserve(c->heap, (void **)bufs, cap,
				    (int64_t)*n + 1, sizeof **bufs, e);
		if (rc)
			return ds_fail(e, rc, "%s: out of memory", c->path);
		(*bufs)[(*n)++] = v;
		if (q == end)
			break;
		p = q + 1;
		if (p == end) /* "3;" would hide an empty item */
			return ds_fail(e, DS_EINPUT,
				       "%s:%ld: %s: empty item at the end of "
				       "\"%.40s\"",
				       c->path, c->row_line, title, s);
	}
	return DS_OK;
}

/* Builder messages start with "source: "; put the row's line after the
 * source so they point into the file. */
static int at_line(const csv *c, int rc, ds_err *e)
{
	size_t n = strlen(c->path);
	if (!e || rc != DS_EINPUT || strncmp(e->msg, c->path, n) != 0 ||
	    e->msg[n] != ':' || e->msg[n + 1] != ' ')
		return rc;
	char rest[sizeof e->msg];
	memcpy(rest, e->msg + n + 2, strlen(e->msg + n + 2) + 1);
	return ds_fail(e, rc, "%s:%ld: %s", c->path, c->row_line, rest);
}

static int check_width(const csv *c, int64_t width, ds_err *e)
{
	if (c->ncell == width)
		return DS_OK;
	return ds_fail(e, DS_EINPUT,
		       "%s:%ld: %lld cell%s, but the header has %lld columns",
		       c->path, c->row_line, (long long)c->ncell,
		       c->ncell == 1 ? "" : "s", (long long)width);
}

enum { C_ID, C_OP, C_BUFID, C_SIZE, C_TYPE, C_PIPE, C_CYCLES, C_BUFS, NCOL };

static const char *const node_columns[NCOL] = {
	"Id", "Op", "BufId", "Size", "Type", "Pipe", "Cycles", "Bufs"};

/* One data row of the nodes table to the builder. */
/* Opens the table at path and reads its header: col[i] and title[i] for
 * each of the n column names (see find_columns), *width the header's
 * cells; `starts` says what the table starts with, for the message on an
 * empty file.  c is closed again on failure. */
static int csv_start(csv *c, const ds_heap *h, const char *path,
		     const char *const *names, int n, const char *starts,
		     int64_t *col, const char **title, int64_t *width,
		     ds_err *e)
{
	int rc = csv_open(c, h, path, e);
	if (rc)
		return rc;
	bool got;
	if ((rc = csv_row(c, &got, e)) == DS_OK && !got)
		rc = ds_fail(e, DS_EINPUT, "%s: the file is empty; %s", path,
			     starts);
	if (rc == DS_OK)
		rc = find_columns(c, names, n, col, title, e);
	if (rc)
		csv_close(c);
	else
		*width = c->ncell;
	return rc;
}

/* The next data row into c (*got false at the end of the table), as wide
 * as the header. */
static int csv_next(csv *c, int64_t width, bool *got, ds_err *e)
{
	int rc = csv_row(c, got, e);
	if (rc == DS_OK && *got)
		rc = check_width(c, width, e);
	return rc;
}

static int node_row(csv *c, ds_builder *b, const int64_t *col,
		    const char **title, int64_t **bufs, int64_t *cap,
		    ds_err *e)
{
	char **cell = c->cell;
	int64_t id;
	int rc = cell_int(c, title[C_ID], cell[col[C_ID]], &id, e);
	if (rc)
		return rc;
	const char *op = cell[col[C_OP]];
	if (!*op)
		return ds_fail(e, DS_EINPUT, "%s:%ld: %s is empty", c->path,
			       c->row_line, title[C_OP]);
	bool is_alloc = strcmp(op, "ALLOC") == 0;
	if (is_alloc || strcmp(op, "FREE") == 0) {
		int64_t bufid, size;
		if ((rc = cell_int(c, title[C_BUFID], cell[col[C_BUFID]],
				   &bufid, e)) ||
		    (rc = cell_int(c, title[C_SIZE], cell[col[C_SIZE]], &size,
				   e)))
			return rc;
		rc = ds_builder_buffer(b, id, !is_alloc, bufid, size,
				       cell[col[C_TYPE]], e);
		return at_line(c, rc, e);
	}
	int64_t cycles;
	int32_t n;
	if ((rc = cell_int(c, title[C_CYCLES], cell[col[C_CYCLES]], &cycles,
			   e)) ||
	    (rc = cell_bufs(c, title[C_BUFS], cell[col[C_BUFS]], bufs, cap, &n,
			    e)))
		return rc;
	rc = ds_builder_op(b, id, op, cell[col[C_PIPE]], cycles, *bufs, n, e);
	return at_line(c, rc, e);
}

static int load_nodes(const ds_heap *h, const char *path, ds_builder *b,
		      ds_err *e)
{
	csv c;
	int64_t col[NCOL], width, cap = 0;
	const char *title[NCOL];
	int rc = csv_start(&c, h, path, node_columns, NCOL,
			   "a nodes table starts with the header "
			   "Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs",
			   col, title, &width, e);
	if (rc)
		return rc;
	int64_t *bufs = NULL;
	bool got;
	while ((rc = csv_next(&c, width, &got, e)) == DS_OK && got &&
	       (rc = node_row(&c, b, col, title, &bufs, &cap, e)) == DS_OK)
		;
	ds_free(h, bufs);
	csv_close(&c);
	return rc;
}

static const char *const edge_columns[2] = {"Src|From", "Dst|To"};

static int load_edges(const ds_heap *h, const char *path, ds_builder *b,
		      ds_err *e)
{
	csv c;
	int64_t col[2], width;
	const char *title[2];
	int rc = csv_start(&c, h, path, edge_columns, 2,
			   "an edges table starts with the header Src,Dst",
			   col, title, &width, e);
	if (rc)
		return rc;
	bool got;
	while ((rc = csv_next(&c, width, &got, e)) == DS_OK && got) {
		int64_t src, dst;
		if ((rc = cell_int(&c, title[0], c.cell[col[0]], &src, e)) ||
		    (rc = cell_int(&c, title[1], c.cell[col[1]], &dst, e)) ||
		    (rc = ds_builder_edge(b, src, dst, e)))
			break;
	}
	csv_close(&c);
	return rc;
}

int ds_load_csv(const ds_heap *h, const char *nodes_path, const ds_caps *caps,
		ds_graph **out, ds_err *e)
{
	*out = NULL;
	char *edges_path = ds_csv_edges_path(h, nodes_path);
	ds_builder *b = edges_path ? ds_builder_new(h, nodes_path) : NULL;
	if (!b) {
		ds_free(h, edges_path);
		return ds_fail(e, DS_ENOMEM, "%s: out of memory", nodes_path);
	}
	int rc = load_nodes(h, nodes_path, b, e);
	if (!rc)
		rc = load_edges(h, edges_path, b, e);
	if (!rc)
		rc = ds_builder_finish(b, caps, out, e);
	ds_builder_free(b);
	ds_free(h, edges_path);
	return rc;
}

/* ---- points reached by other solutions ---- */

static const char *const point_columns[4] = {"case", "source", "extra_ddr",
					     "makespan"};

/* One data row: a point when its case is case_name and both figures are
 * given (a row may leave one empty).  Every row's figures are checked, so
 * that a bad file fails for every case alike. */
static int point_row(csv *c, const int64_t *col, const char **title,
		     const char *case_name, ds_points *pts, ds_err *e)
{
	char **cell = c->cell;
	ds_point pt = {NULL, 0, 0};
	int rc = DS_OK;
	if (*cell[col[2]])
		rc = cell_int(c, title[2], cell[col[2]], &pt.extra_ddr, e);
	if (!rc && *cell[col[3]])
		rc = cell_int(c, title[3], cell[col[3]], &pt.makespan, e);
	if (rc || strcmp(cell[col[0]], case_name) != 0 || !*cell[col[2]] ||
	    !*cell[col[3]])
		return rc;
	if (!rc)
		rc = ds_reserve(c->heap, (void **)&pts->p, &pts->cap,
				pts->n + 1, sizeof *pts->p, e);
	if (!rc && !(pt.label = ds_strdup(c->heap, cell[col[1]])))
		rc = ds_fail(e, DS_ENOMEM, "%s: out of memory", c->path);
	if (!rc)
		pts->p[pts->n++] = pt;
	return rc;
}

void ds_points_free(const ds_heap *h, ds_points *pts)
{
	for (int64_t i = 0; i < pts->n; i++)
		ds_free(h, pts->p[i].label);
	ds_free(h, pts->p);
	memset(pts, 0, sizeof *pts);
}

int ds_csv_points(const ds_heap *h, const char *path, const char *case_name,
		  ds_points *out, ds_err *e)
{
	memset(out, 0, sizeof *out);
	csv c;
	int64_t col[4], width;
	const char *title[4];
	int rc = csv_start(&c, h, path, point_columns, 4,
			   "it starts with the header "
			   "case,source,extra_ddr,makespan",
			   col, title, &width, e);
	if (rc)
		return rc;
	bool got;
	while ((rc = csv_next(&c, width, &got, e)) == DS_OK && got &&
	       (rc = point_row(&c, col, title, case_name, out, e)) == DS_OK)
		;
	csv_close(&c);
	if (rc)
		ds_points_free(h, out);
	return rc;
}

/* ---- writing CSV ---- */

/* s as one cell, quoted only when it must be: it holds a comma, a quote or
 * a line end, or starts or ends with a space the reader would trim. */
static void put_cell(ds_text *t, const char *s)
{
	size_t n = strlen(s);
	bool quote = strpbrk(s, ",\"\r\n") != NULL ||
		     (n && (blank(s[0]) || blank(s[n - 1])));
	if (!quote) {
		ds_text_printf(t, "%s", s);
		return;
	}
	ds_text_printf(t, "\"");
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			ds_text_printf(t, "\"\"");
		else
			ds_text_printf(t, "%c", *p);
	}
	ds_text_printf(t, "\"");
}

static void nodes_table(const ds_graph *g, ds_text *t)
{
	ds_text_printf(t, "Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs\n");
	for (int32_t v = 0; v < g->n; v++) {
		ds_text_printf(t, "%d,", v);
		put_cell(t, g->ops[g->op[v]]);
		if (g->kind[v] != DS_OP) {
			int32_t x = g->buf[v];
			ds_text_printf(t, ",%lld,%lld,%s,,,\n",
				       (long long)g->buf_id[x],
				       (long long)g->buf_size[x],
				       ds_mem_names[g->buf_mem[x]]);
			continue;
		}
		ds_text_printf(t, ",,,,");
		put_cell(t, g->pipes[g->pipe[v]]);
		ds_text_printf(t, ",%lld,", (long long)g->cycles[v]);
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			ds_text_printf(t, "%s%lld", k > g->use_off[v] ? ";" : "",
				       (long long)g->buf_id[g->use[k]]);
		ds_text_printf(t, "\n");
	}
}

static void edges_table(const ds_graph *g, ds_text *t)
{
	ds_text_printf(t, "Src,Dst\n");
	for (int64_t k = 0; k < g->nedge; k++)
		ds_text_printf(t, "%d,%d\n", g->esrc[k], g->edst[k]);
}

int ds_write_csv(const ds_graph *g, const char *nodes_path, ds_err *e)
{
	const ds_heap *h = g->heap;
	char *edges_path = ds_csv_edges_path(h, nodes_path);
	ds_text nt, et;
	ds_text_init(&nt, h);
	ds_text_init(&et, h);
	nodes_table(g, &nt);
	edges_table(g, &et);
	int rc;
	if (!edges_path || nt.failed || et.failed) {
		rc = ds_fail(e, DS_ENOMEM, "%s: out of memory", nodes_path);
	} else {
		/* all or nothing: both tables reach their temporaries
		 * before the first rename */
		const char *paths[2] = {edges_path, nodes_path};
		const char *data[2] = {et.s, nt.s};
		size_t lens[2] = {(size_t)et.len, (size_t)nt.len};
		rc = ds_write_files_atomic(h, 2, paths, data, lens, e);
	}
	ds_free(h, edges_path);
	ds_text_free(&nt);
	ds_text_free(&et);
	return rc;
}
