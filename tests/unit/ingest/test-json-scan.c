/*
 * test-json-scan.c — the block kernels of src/ingest/json-scan.c: json_skip() and
 * json_skip_rest() over the bracket scanner, and the scalar, SSE2 and AVX2 levels giving the
 * same tokens, errors and offsets.
 * Every test of the main list runs at each kernel level; shared helpers: json-test.h.
 */
#include "json-test.h"

/*
 * Walk @s recording tokens; the value of every "args" key is passed over and every object
 * holding a "skiprest" key is abandoned there.  With @fast the tokenizer's skips do it,
 * otherwise json_next() walks over the same bytes.
 */
static void walk_skipping(const char *s, size_t len, size_t window, int fast, struct sbuf *b)
{
	struct kp_json p;
	struct trickle tr = { s, len, 0, 0 };
	struct kp_json_tok t;
	if (window)
		json_init(&p, trickle_read, &tr, window);
	else
		json_init_mem(&p, s, len);
	for (;;) {
		enum kp_json_type ty = json_next(&p, &t);
		sb_tok(b, &t);
		assert_int_not_equal(ty, JT_ERROR);
		if (ty == JT_END)
			break;
		if (ty != JT_KEY)
			continue;
		int args = t.len == 4 && memcmp(t.s, "args", 4) == 0;
		int rest = t.len == 8 && memcmp(t.s, "skiprest", 8) == 0;
		if (!args && !rest)
			continue;
		if (fast) {
			assert_int_equal(args ? json_skip(&p) : json_skip_rest(&p), 0);
			continue;
		}
		/* args: the value ends at the key's depth; skiprest: its object's close */
		int stop = args ? t.depth : t.depth - 1;
		if (args) {
			ty = json_next(&p, &t);
			assert_int_not_equal(ty, JT_ERROR);
			if (ty != JT_OBJ && ty != JT_ARR)
				continue;
		}
		do {
			ty = json_next(&p, &t);
			assert_int_not_equal(ty, JT_ERROR);
		} while (t.depth != stop);
	}
	json_free(&p);
}

static void json_skip_lands_where_walking_does(void **state)
{
	(void)state;
	size_t len;
	char *s = gen_doc(&len, 3, 400);
	struct sbuf a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	walk_skipping(s, len, 0, 0, &a);
	walk_skipping(s, len, 0, 1, &b);
	assert_string_equal(a.s, b.s);
	walk_skipping(s, len, 16, 1, &c);
	assert_string_equal(a.s, c.s);
	walk_skipping(s, len, 200, 1, &d);
	assert_string_equal(a.s, d.s);
	free(a.s);
	free(b.s);
	free(c.s);
	free(d.s);
	free(s);
}

static void json_skip_passes_over_scalars_and_array_elements(void **state)
{
	(void)state;
	const char *s = "[\"a\\\"]\", 12.5, {\"x\":[1,{}]}, [[]], null, 9]";
	struct kp_json p;
	struct kp_json_tok t;
	json_init_mem(&p, s, strlen(s));
	assert_int_equal(json_next(&p, &t), JT_ARR);
	for (int k = 0; k < 5; k++)
		assert_int_equal(json_skip(&p), 0);
	assert_int_equal(json_next(&p, &t), JT_NUM);
	assert_int_equal(t.off, (int64_t)(strchr(s, '9') - s));
	assert_int_equal(json_next(&p, &t), JT_ARR_END);
	assert_int_equal(json_next(&p, &t), JT_END);
	json_free(&p);

	/* no value where the array ends: a caller bug, reported as such */
	json_init_mem(&p, "[]", 2);
	assert_int_equal(json_next(&p, &t), JT_ARR);
	assert_int_equal(json_skip(&p), -1);
	assert_string_equal(p.err, "json_skip() where no value starts");
	json_free(&p);
}

static void json_skip_rest_closes_the_current_container(void **state)
{
	(void)state;
	const char *s = "{\"a\": {\"b\": [1, \"}\", {\"c\": []}], \"d\": 2}, \"e\": 3}";
	struct kp_json p;
	struct kp_json_tok t;
	json_init_mem(&p, s, strlen(s));
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_next(&p, &t), JT_KEY);
	assert_int_equal(json_next(&p, &t), JT_OBJ);
	assert_int_equal(json_next(&p, &t), JT_KEY);
	assert_int_equal(json_next(&p, &t), JT_ARR);
	assert_int_equal(json_next(&p, &t), JT_NUM);
	assert_int_equal(p.depth, 3);
	assert_int_equal(json_skip_rest(&p), 0); /* the array */
	assert_int_equal(p.depth, 2);
	assert_int_equal(json_next(&p, &t), JT_KEY);
	assert_int_equal(t.len, 1);
	assert_int_equal(t.s[0], 'd');
	assert_int_equal(json_skip_rest(&p), 0); /* from before "d"'s value */
	assert_int_equal(json_next(&p, &t), JT_KEY);
	assert_int_equal(t.s[0], 'e');
	assert_int_equal(json_skip_rest(&p), 0); /* the top-level object */
	assert_int_equal(p.depth, 0);
	assert_int_equal(json_next(&p, &t), JT_END);
	json_free(&p);
}

static void json_skip_rejects_broken_structure(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		const char *err;
		int64_t off;
		int eof;
	} c[] = {
		{ "[1, {\"a\": 2]]", "unmatched ']'", 11, 0 },
		{ "[[1}", "unmatched '}'", 3, 0 },
		{ "[1, \"]", "unexpected end of input", 6, 1 },
		{ "[1, \"\\\"]\"", "unexpected end of input", 9, 1 },
		{ "{\"a\": [", "unexpected end of input", 7, 1 },
		{ "[1] x", "trailing characters after JSON value", 4, 0 },
	};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		for (size_t w = 0; w < 2; w++) {
			struct kp_json p;
			struct trickle tr = { c[k].in, strlen(c[k].in), 0, 0 };
			if (w)
				json_init(&p, trickle_read, &tr, 16);
			else
				json_init_mem(&p, c[k].in, strlen(c[k].in));
			if (json_skip(&p) == 0)
				walk(&p, NULL);
			assert_non_null(p.err);
			if (strcmp(p.err, c[k].err) != 0 || p.err_off != c[k].off ||
			    p.err_eof != c[k].eof)
				fail_msg("'%s': got '%s' @%lld eof=%d", c[k].in, p.err,
					 (long long)p.err_off, p.err_eof);
			json_free(&p);
		}
	}
}

/* issue 23 item 17: a skipped string of any length leaves the window its size */
static void json_skip_streams_a_string_longer_than_the_window(void **state)
{
	(void)state;
	size_t n = 1u << 20;
	char *s = malloc(n + 64);
	assert_non_null(s);
	size_t body = (size_t)sprintf(s, "{\"junk\": \"");
	memset(s + body, 'a', n);
	for (size_t i = body + 100; i + 6 < body + n; i += 4099)
		memcpy(s + i, "\\u00e9", 6); /* escapes across every refill boundary */
	size_t k = body + n;
	k += (size_t)sprintf(s + k, "\", \"x\": 7}");
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			s[body + 500001] = '\x01';
		struct trickle t = { s, k, 0, 0 };
		struct kp_json p;
		struct kp_json_tok tk;
		json_init(&p, trickle_read, &t, 256);
		assert_int_equal(json_next(&p, &tk), JT_OBJ);
		assert_int_equal(json_key(&p, &tk), JT_KEY);
		if (pass == 1) {
			/* a control byte deep inside is still found and located */
			assert_int_equal(json_skip(&p), -1);
			assert_string_equal(p.err, "control character in string");
			assert_int_equal(p.err_off, (int64_t)(body + 500001));
			int line, col;
			json_locate(&p, p.err_off, &line, &col);
			assert_int_equal(line, 1);
			assert_int_equal(col, (int)(body + 500001 + 1));
			json_free(&p);
			break;
		}
		assert_int_equal(json_skip(&p), 0);
		assert_int_equal(p.cap, 256); /* the window never grew for the string */
		assert_int_equal(json_key(&p, &tk), JT_KEY);
		assert_int_equal(tk.len, 1);
		assert_int_equal(json_next(&p, &tk), JT_NUM);
		assert_int_equal(tk.off, (int64_t)(k - 2));
		assert_int_equal(json_next(&p, &tk), JT_OBJ_END);
		assert_int_equal(json_next(&p, &tk), JT_END);
		json_free(&p);
	}
	free(s);
}

/* ---- kernel levels: scalar, SSE2, AVX2 give the same tokens, errors and offsets ---- */

/* The levels this CPU runs (json_simd_set() caps at the best). */
static int levels(enum kp_json_simd *lv)
{
	int n = 0;
	for (int k = JSON_SIMD_SCALAR; k <= JSON_SIMD_AVX2; k++)
		if (json_simd_set((enum kp_json_simd)k) == (enum kp_json_simd)k)
			lv[n++] = (enum kp_json_simd)k;
	return n;
}

/*
 * Everything a caller sees of @s[0..len): with @mode 0 json_next() on every token; 1 the
 * fast calls (walk_fast); 2 json_next() with "args" values skipped and objects holding
 * "skiprest" abandoned there; 3 json_skip() of the whole document.  @window 0 reads it all
 * at once, else trickles it through a window that small.  Errors end the record.
 */
static void record(const char *s, size_t len, int mode, size_t window, struct sbuf *b)
{
	struct kp_json p;
	struct kp_json_tok t;
	struct trickle tr = { s, len, 0, 0 };
	if (window)
		json_init(&p, trickle_read, &tr, window);
	else
		json_init_mem(&p, s, len);
	enum kp_json_type ty = JT_END;
	if (mode == 0) {
		walk(&p, b);
	} else if (mode == 1) {
		walk_fast(&p, b);
	} else if (mode == 3) {
		if (json_skip(&p) == 0)
			walk(&p, b);
	} else {
		while ((ty = json_next(&p, &t)) != JT_END && ty != JT_ERROR) {
			sb_tok(b, &t);
			if (ty == JT_KEY && t.len == 4 && memcmp(t.s, "args", 4) == 0)
				json_skip(&p);
			else if (ty == JT_KEY && t.len == 8 && memcmp(t.s, "skiprest", 8) == 0)
				json_skip_rest(&p);
		}
	}
	sb_printf(b, "end %s @%lld eof=%d pos %lld\n", p.err ? p.err : "-", (long long)p.err_off,
		  p.err_eof, (long long)(p.base + (int64_t)p.pos));
	if (p.err) {
		int line, col;
		json_locate(&p, p.err_off, &line, &col);
		sb_printf(b, "at %d:%d\n", line, col);
	}
	json_free(&p);
}

/* record() of @s at every level, in every mode, whole and trickled: all the same. */
static void levels_agree(const char *what, const char *s, size_t len)
{
	static const size_t windows[] = { 0, 16, 100 };
	enum kp_json_simd lv[3];
	int n = levels(lv);
	for (int mode = 0; mode < 4; mode++) {
		for (size_t w = 0; w < sizeof(windows) / sizeof(*windows); w++) {
			struct sbuf ref = { 0 };
			json_simd_set(lv[0]);
			record(s, len, mode, windows[w], &ref);
			for (int k = 1; k < n; k++) {
				struct sbuf b = { 0 };
				json_simd_set(lv[k]);
				record(s, len, mode, windows[w], &b);
				if (strcmp(ref.s, b.s) != 0)
					fail_msg("%s: mode %d window %zu: %s:\n%s\n%s:\n%s", what,
						 mode, windows[w], json_simd_name(lv[0]), ref.s,
						 json_simd_name(lv[k]), b.s);
				free(b.s);
			}
			free(ref.s);
		}
	}
	json_simd_set(JSON_SIMD_AUTO);
}

static void json_levels_agree_on_escapes_across_block_boundaries(void **state)
{
	(void)state;
	/* escapes, backslash runs before quotes, brackets and \u in strings, placed at every
	 * offset around the 16-, 32- and 64-byte block edges of both the string scan and the
	 * skip scan (which starts at the '{' of "args") */
	static const char *const esc[] = {
		"\\\"",           "\\\\", "\\\\\\\"", "\\\\\\\\",   "\\u00e9",
		"\\ud83d\\ude00", "\\/",  "]}[{",     "\\\"]}\\\\", "\\n\\t\\r\\b\\f",
	};
	char doc[1024], pad[160];
	for (size_t e = 0; e < sizeof(esc) / sizeof(*esc); e++) {
		for (int at = 0; at < 140; at++) {
			memset(pad, 'x', (size_t)at);
			pad[at] = 0;
			int n = snprintf(doc, sizeof(doc),
					 "{\"k%s%s\": \"%s%s\", \"args\": {\"s\": \"%s%s]\", \"t\": "
					 "[1, {\"u\": \"%s\"}, \"%s%s\"]}, \"skiprest\": \"%s%s\", "
					 "\"z\": 1}",
					 pad + at / 2, esc[e], pad, esc[e], pad, esc[e], esc[e],
					 pad, esc[e], pad + at / 3, esc[e]);
			assert_true(n > 0 && (size_t)n < sizeof(doc));
			levels_agree(doc, doc, (size_t)n);
		}
	}
}

static void json_levels_agree_on_every_truncation(void **state)
{
	(void)state;
	size_t len;
	char *s = gen_doc(&len, 9, 3);
	for (size_t cut = 0; cut <= len; cut++) {
		char *c = malloc(cut + 1);
		memcpy(c, s, cut);
		levels_agree("truncated", c, cut);
		free(c);
	}
	free(s);
}

static void json_levels_agree_on_invalid_utf8_and_control_bytes(void **state)
{
	(void)state;
	/* not UTF-8 (accepted: not validated), DEL, and control bytes (errors in strings,
	 * unchecked inside skipped values) at every offset of a key, a value and a skip */
	static const char bytes[] = { '\xff', '\xc0', '\x80', '\xe2', '\x7f',
				      '\x01', '\x1f', '\t',   '\n',   '\0' };
	char doc[512], str[96];
	for (size_t b = 0; b < sizeof(bytes); b++) {
		for (int at = 0; at < 70; at++) {
			memset(str, 'a', sizeof(str));
			str[at] = bytes[b];
			str[at + 1] = '\xa9';
			str[80] = 0;
			for (int where = 0; where < 3; where++) {
				int n;
				if (where == 0)
					n = snprintf(doc, sizeof(doc), "{\"%.80s\": 1}", str);
				else if (where == 1)
					n = snprintf(doc, sizeof(doc), "[\"%.80s\", 2]", str);
				else
					n = snprintf(doc, sizeof(doc),
						     "{\"args\": [\"%.80s\", {\"x\": \"%.80s\"}], \"b\": 2}",
						     str, str);
				/* snprintf stops at a NUL in str: put the byte back in by hand */
				for (int k = 0; k < n; k++)
					if (doc[k] == 'a' && k + 1 < n && doc[k + 1] == '\xa9' &&
					    bytes[b] == '\0')
						doc[k] = '\0';
				levels_agree("bytes", doc, (size_t)n);
			}
		}
	}
	/* and UTF-8 that is not valid still passes at every level */
	enum kp_json_simd lv[3];
	int n = levels(lv);
	for (int k = 0; k < n; k++) {
		json_simd_set(lv[k]);
		assert_int_equal(walk_mem("[\"\xff\xfe\xc0\x80\"]", 8, NULL), JT_END);
	}
	json_simd_set(JSON_SIMD_AUTO);
}

static void json_levels_agree_on_mutated_input(void **state)
{
	(void)state;
	size_t len;
	char *s = gen_doc(&len, 11, 6);
	char *m = malloc(len);
	unsigned x = 7;
	static const char bytes[] = "{}[]\",:\\ 0-.eEtfnu\x01\xff";
	for (int k = 0; k < 400; k++) {
		memcpy(m, s, len);
		for (int j = 0; j < 1 + k % 4; j++) {
			x = x * 1103515245u + 12345u;
			m[(x >> 8) % len] = bytes[(x >> 20) % (sizeof(bytes) - 1)];
		}
		levels_agree("mutated", m, k % 7 ? len : (x >> 4) % len);
	}
	free(m);
	free(s);
}

static void json_levels_count_newlines_alike(void **state)
{
	(void)state;
	enum kp_json_simd lv[3];
	int nl = levels(lv);
	char *buf = malloc(9000);
	unsigned x = 3;
	for (size_t len = 0; len < 9000; len += len < 700 ? 1 : 251) {
		for (size_t i = 0; i < len; i++) {
			x = x * 1103515245u + 12345u;
			/* dense runs (a lane's 8-bit counter must not wrap) and sparse stretches */
			buf[i] = (len / 7) % 3 == 0 || (x >> 16) % 5 == 0 ? '\n' : (char)(x >> 24);
		}
		size_t off = len % 33 < len ? len % 33 : 0;
		int64_t want = 0;
		for (size_t i = off; i < len; i++)
			want += buf[i] == '\n';
		for (int k = 0; k < nl; k++) {
			json_simd_set(lv[k]);
			if (json_count_nl(buf + off, len - off) != want)
				fail_msg("%s: %zu bytes at %zu", json_simd_name(lv[k]), len - off,
					 off);
		}
	}
	free(buf);
	json_simd_set(JSON_SIMD_AUTO);
}

static void json_simd_picks_the_level_from_the_cpu_or_kprof_simd(void **state)
{
	(void)state;
	enum kp_json_simd lv[3];
	int n = levels(lv);
	assert_int_equal(lv[0], JSON_SIMD_SCALAR);
#if defined(__x86_64__)
	assert_true(n >= 2); /* SSE2 is x86-64's baseline */
#endif
	enum kp_json_simd best = lv[n - 1];
	assert_int_equal(json_simd_set(JSON_SIMD_AVX2), best); /* capped */
	struct kp_json p;
	json_simd_set(JSON_SIMD_SCALAR);
	json_init_mem(&p, "1", 1);
	assert_int_equal(p.simd, JSON_SIMD_SCALAR);
	json_free(&p);
	assert_string_equal(json_simd_name(JSON_SIMD_SSE2), "sse2");

	setenv("KPROF_SIMD", "scalar", 1);
	assert_int_equal(json_simd_set(JSON_SIMD_AUTO), JSON_SIMD_SCALAR);
	assert_int_equal(json_simd(), JSON_SIMD_SCALAR);
	setenv("KPROF_SIMD", "avx2", 1);
	assert_int_equal(json_simd_set(JSON_SIMD_AUTO), best);
	setenv("KPROF_SIMD", "fast", 1); /* not a level: the CPU's best */
	assert_int_equal(json_simd_set(JSON_SIMD_AUTO), best);
	unsetenv("KPROF_SIMD");
	assert_int_equal(json_simd_set(JSON_SIMD_AUTO), best);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_skip_lands_where_walking_does),
		cmocka_unit_test(json_skip_passes_over_scalars_and_array_elements),
		cmocka_unit_test(json_skip_rest_closes_the_current_container),
		cmocka_unit_test(json_skip_rejects_broken_structure),
		cmocka_unit_test(json_skip_streams_a_string_longer_than_the_window),
	};
	const struct CMUnitTest across[] = {
		cmocka_unit_test(json_levels_agree_on_escapes_across_block_boundaries),
		cmocka_unit_test(json_levels_agree_on_every_truncation),
		cmocka_unit_test(json_levels_agree_on_invalid_utf8_and_control_bytes),
		cmocka_unit_test(json_levels_agree_on_mutated_input),
		cmocka_unit_test(json_levels_count_newlines_alike),
		cmocka_unit_test(json_simd_picks_the_level_from_the_cpu_or_kprof_simd),
	};
	int fail = 0;
	RUN_AT_LEVELS(fail, "json-scan", tests);
	fail += cmocka_run_group_tests_name("json-scan, across levels", across, at_auto, NULL);
	return fail;
}
