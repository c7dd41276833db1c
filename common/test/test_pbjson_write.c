/*
 * test_pbjson_write.c: JSON text written straight from a message
 * (seo_pbjson_write(), seo/json_write.h) against the tree encoder
 * (seo_pbjson_encode()) dumped by jansson: the same bytes for every value
 * and every message, over random messages of every type our services
 * answer or take, and over reals, integers and strings one at a time.
 */
#include <CUnit/Basic.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/agent/v1/agent.pb-c.h"
#include "seo/errors.h"
#include "seo/graph/v1/graph.pb-c.h"
#include "seo/json_text.h"
#include "seo/json_write.h"
#include "seo/nullable.h"
#include "seo/pbjson.h"
#include "seo/ranks/v1/ranks.pb-c.h"
#include "seo/realtime/v1/realtime.pb-c.h"

/* xorshift64*: the same values on every run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

/* ---- reals --------------------------------------------------------------- */

static long real_failures;

/* Whether v is written as jansson writes json_real(v). */
static void real_same(double v)
{
	json_t *j;
	char *want, *got;
	seo_jw w = SEO_JW_INIT;

	if (!isfinite(v))
		return;
	j = json_real(v);
	want = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
	seo_jw_real(&w, v);
	got = seo_jw_finish(&w, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	if (strcmp(got, want) != 0 && real_failures++ < 10) {
		fprintf(stderr, "\n  %a: got %s want %s\n", v, got, want);
		CU_FAIL("real");
	}
	free(got);
	free(want);
	json_decref(j);
}

static double bits_double(uint64_t b)
{
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

static void test_reals(void)
{
	static const double fixed[] = {
		0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1.5, 2.5, 100.0, 1e15, 1e16,
		1e17, 1e18, 1e21, 1e22, 1e23, 1e-4, 1e-5, 0.0001, 0.00001,
		123456.789, 3.14159265358979, 9007199254740993.0,
		18446744073709551616.0, DBL_MAX, -DBL_MAX, DBL_MIN, 5e-324,
		1.7976931348623157e308, 0.30000000000000004, 1e-11, 1e-12,
		99999999999999999.0, 9999999999999999.0, 0.99999999999999994,
		1234567890123456.25, 1234567890123456.75, 2251799813685248.5,
		4503599627370495.5, 0.000099999999999999991, 340282366920938463463374607431768211456.0,
	};
	size_t i;
	int k;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		real_same(fixed[i]);
		real_same(-fixed[i]);
		real_same(nextafter(fixed[i], 0));
		real_same(nextafter(fixed[i], INFINITY));
	}
	/* every power of ten and its neighbours */
	for (k = -320; k <= 308; k++) {
		double p = pow(10, k);
		real_same(p);
		real_same(nextafter(p, 0));
		real_same(nextafter(p, INFINITY));
	}
	/* any bits */
	for (i = 0; i < 400000; i++) {
		double v = bits_double(rnd());
		if (isfinite(v))
			real_same(v);
	}
	/* what answers hold: decimals of a few places, counts, ratios */
	for (i = 0; i < 300000; i++) {
		double v = (double)(int64_t)(rnd() % 100000000) / pow(10, below(9));
		real_same(v);
		real_same((double)(rnd() >> below(64)));
		real_same((double)rnd() / (double)UINT64_MAX);
	}
	/* halfway at the 17th digit: printf rounds them to even */
	for (i = 0; i < 100000; i++) {
		double n = (double)(1000000000000000ULL + rnd() % 1251799813685248ULL);
		real_same(n + 0.25);
		real_same(n + 0.75);
		real_same(n + 0.5);
		real_same((n + 0.125) / 8);
	}
	CU_ASSERT_EQUAL(real_failures, 0);
}

/* ---- integers ------------------------------------------------------------ */

static void test_integers(void)
{
	static const long long fixed[] = {0, 1, -1, 9, 10, 99, 100, -100,
					  LLONG_MAX, LLONG_MIN, INT_MAX, INT_MIN};
	char want[48], text[SEO_INT_TEXT_MAX], *got;
	seo_jw w = SEO_JW_INIT;
	size_t i;
	long failures = 0;

	for (i = 0; i < 200000 + sizeof(fixed) / sizeof(fixed[0]); i++) {
		long long v = i < sizeof(fixed) / sizeof(fixed[0])
				      ? fixed[i]
				      : (long long)(rnd() >> below(64));
		unsigned long long u = rnd() >> below(64);
		if (i % 2 && v != LLONG_MIN)
			v = -v;
		seo_jw_reset(&w);
		seo_jw_int(&w, v);
		seo_jw_char(&w, ' ');
		seo_jw_uint(&w, u);
		snprintf(want, sizeof(want), "%lld %llu", v, u);
		if ((w.len != strlen(want) || memcmp(w.buf, want, w.len) != 0) &&
		    failures++ < 10)
			fprintf(stderr, "\n  want %s\n", want);
		snprintf(want, sizeof(want), "%lld", v);
		if ((seo_fmt_int(text, v) != strlen(want) ||
		     memcmp(text, want, strlen(want)) != 0) &&
		    failures++ < 10)
			fprintf(stderr, "\n  seo_fmt_int: want %s\n", want);
	}
	CU_ASSERT_EQUAL(failures, 0);
	got = seo_jw_finish(&w, NULL);
	free(got);
}

/* ---- random messages ------------------------------------------------------- */

/* What seo_jw_string() must write of s[0..n), byte by byte. */
static size_t escape_slow(const unsigned char *s, size_t n, char *out)
{
	static const char *const named = "\bb\tt\nn\ff\rr\"\"\\\\";
	size_t len = 0;

	out[len++] = '"';
	for (size_t i = 0; i < n; i++) {
		const char *e = s[i] != 0 ? strchr(named, s[i]) : NULL;

		if (e != NULL && (e - named) % 2 == 0) {
			out[len++] = '\\';
			out[len++] = e[1];
		} else if (s[i] < 0x20) {
			len += (size_t)sprintf(out + len, "\\u%04X", s[i]);
		} else {
			out[len++] = (char)s[i];
		}
	}
	out[len++] = '"';
	return len;
}

/* Long plain text with one byte at every position and alignment: the
 * escapes, and their neighbours that need none, where the eight-byte
 * steps must stop or pass. */
static void test_string_escapes_long(void)
{
	static const unsigned char odd[] = {'"', '\\', '\n', 0x00, 0x01, 0x1f,
					    0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f};
	unsigned char buf[64];
	char want[64 * 6 + 3];

	for (size_t k = 0; k < sizeof(odd); k++)
		for (size_t at = 0; at < 40; at++)
			for (size_t off = 0; off < 8; off++) {
				seo_jw w = SEO_JW_INIT;
				size_t len = 40 + off, n, got_len;
				char *got;

				memset(buf, 'a', sizeof(buf));
				buf[off + at] = odd[k];
				n = escape_slow(buf + off, len, want);
				seo_jw_string(&w, (const char *)buf + off, len);
				got = seo_jw_finish(&w, &got_len);
				CU_ASSERT_FATAL(got != NULL);
				CU_ASSERT(got_len == n && memcmp(got, want, n) == 0);
				free(got);
			}
}

static seo_arena *arena;

/* Strings with every kind of byte: escapes, '/', DEL, UTF-8 of 2 to 4
 * bytes, and bytes that are no UTF-8 (written as U+FFFD). */
static char *random_string(void)
{
	static const char *const pieces[] = {
		"a", "Z", "0", " ", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t",
		"\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80",
		"https://a.test/p?q=1&r=2", "domain.example",
	};
	size_t n = below(4) == 0 ? 0 : below(12), i, len = 0;
	char *s = seo_arena_alloc(arena, n * 24 + 1);

	for (i = 0; i < n; i++) {
		const char *p = pieces[below(sizeof(pieces) / sizeof(pieces[0]))];
		memcpy(s + len, p, strlen(p));
		len += strlen(p);
	}
	s[len] = '\0';
	return s;
}

static double random_double(void)
{
	switch (below(6)) {
	case 0:
		return bits_double(rnd());
	case 1:
		return below(2) ? INFINITY : NAN;
	case 2:
		return (double)(int64_t)(rnd() % 10000000) / pow(10, below(7));
	case 3:
		return (double)below(1000);
	case 4:
		return -0.0;
	default:
		return (double)rnd() / (double)UINT64_MAX;
	}
}

static void fill(ProtobufCMessage *m, int depth);

/* Texts a RawJson may hold: loaded and dumped again by both writers. */
static const char *const raw_texts[] = {
	"{\"@type\":\"Thing\",\"n\":[1,2]}", " { \"a\" : 1.50 , \"b\" : [ 2e3 ] } ",
	"5", "\"s\\u00e9\\/\"", "null", "[]", "{}", "{\"a\":1,\"a\":2}",
	"[0.1, -0, 1e-7, 123456789012345678]", "true",
};

static void random_value(const ProtobufCFieldDescriptor *f, void *slot,
			 int depth)
{
	const ProtobufCEnumDescriptor *e;
	ProtobufCBinaryData *b;
	ProtobufCMessage *sub;
	size_t i;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*(uint32_t *)slot = below(3) == 0 ? (uint32_t)rnd()
						  : (uint32_t)below(300) - 100;
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)slot = below(3) == 0 ? (float)random_double()
					       : (float)below(1000) / 10.0f;
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)slot = random_double();
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)slot = below(3);
		break;
	case PROTOBUF_C_TYPE_ENUM:
		e = f->descriptor;
		*(int *)slot = below(5) == 0 ? 12345
					     : e->values[below(e->n_values)].value;
		break;
	case PROTOBUF_C_TYPE_STRING:
		*(char **)slot = random_string();
		break;
	case PROTOBUF_C_TYPE_BYTES:
		b = slot;
		b->len = below(8);
		b->data = seo_arena_alloc(arena, b->len + 1);
		for (i = 0; i < b->len; i++)
			b->data[i] = (uint8_t)rnd();
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		if (depth > 3 || below(8) == 0) {
			*(ProtobufCMessage **)slot = NULL;
			break;
		}
		sub = seo_arena_alloc(arena, ((const ProtobufCMessageDescriptor *)
						      f->descriptor)->sizeof_message);
		protobuf_c_message_init(f->descriptor, sub);
		if (strcmp(sub->descriptor->name, "seo.common.RawJson") == 0)
			*(const char **)((char *)sub + sub->descriptor->fields[0].offset) =
				below(6) == 0 ? NULL
					      : raw_texts[below(sizeof(raw_texts) /
								sizeof(raw_texts[0]))];
		else
			fill(sub, depth + 1);
		*(ProtobufCMessage **)slot = sub;
		break;
	default:
		*(int64_t *)slot = below(3) == 0 ? (int64_t)rnd()
						 : (int64_t)below(3000) - 1000;
		break;
	}
}

static void fill(ProtobufCMessage *m, int depth)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	unsigned i;

	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		char *member = (char *)m + f->offset;
		size_t n, size, k;
		char *arr;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = below(4);
			size = seo_pbjson_slot_size(f->type);
			arr = seo_arena_calloc(arena, n * size + 1);
			for (k = 0; k < n; k++)
				random_value(f, arr + k * size, depth);
			*(void **)member = arr;
			*(size_t *)((char *)m + f->quantifier_offset) = n;
			continue;
		}
		if (below(3) == 0)
			continue;
		random_value(f, member, depth);
		seo_pbjson_mark_set(m, f);
	}
}

static long message_failures;

/* Writes m both ways, leaving out `skip` (NULL: nothing). */
static void message_same(const ProtobufCMessage *m,
			 seo_pbjson_nullable_fn nullable, const char *skip)
{
	json_t *tree = seo_pbjson_encode(m, nullable);
	char *want = NULL, *got;
	seo_jw w = SEO_JW_INIT;
	size_t len;
	int rc;

	if (tree != NULL && skip != NULL)
		json_object_del(tree, skip);
	if (tree != NULL)
		want = seo_json_dumps(tree, JSON_COMPACT, NULL);
	json_decref(tree);
	seo_jw_char(&w, '{');
	rc = seo_pbjson_write_members(&w, m, nullable, skip, NULL);
	seo_jw_char(&w, '}');
	got = seo_jw_finish(&w, &len);
	if (rc != 0) {
		free(got);
		got = NULL;
	}
	/* A RawJson that is not JSON fails both. */
	if ((want == NULL) != (got == NULL) ||
	    (want != NULL && (strcmp(want, got) != 0 || len != strlen(want)))) {
		if (message_failures++ < 5)
			fprintf(stderr, "\n  %s\n  got  %s\n  want %s\n",
				m->descriptor->name, got ? got : "(null)",
				want ? want : "(null)");
	}
	free(want);
	free(got);
}

static void random_messages(const ProtobufCMessageDescriptor *d, int runs)
{
	int r;

	for (r = 0; r < runs; r++) {
		ProtobufCMessage *m = seo_arena_alloc(arena, d->sizeof_message);
		protobuf_c_message_init(d, m);
		fill(m, 0);
		message_same(m, seo_proto_nullable, NULL);
		message_same(m, NULL, NULL);
		if (d->n_fields > 0)
			message_same(m, seo_proto_nullable,
				     d->fields[below(d->n_fields)].name);
	}
}

static void test_messages(void)
{
	static const ProtobufCServiceDescriptor *const services[] = {
		&seo__graph__v1__graph__descriptor,
		&seo__account__v1__account__descriptor,
		&seo__realtime__v1__realtime__descriptor,
		&seo__ranks__v1__ranks__descriptor,
		&seo__agent__v1__agent__descriptor,
	};
	size_t s, i, n = 0;

	for (s = 0; s < sizeof(services) / sizeof(services[0]); s++) {
		for (i = 0; i < services[s]->n_methods; i++) {
			arena = seo_arena_new(4096);
			CU_ASSERT_PTR_NOT_NULL_FATAL(arena);
			random_messages(services[s]->methods[i].output, 200);
			random_messages(services[s]->methods[i].input, 50);
			seo_arena_free(arena);
			n += 2;
		}
	}
	fprintf(stderr, " %zu message types ", n);
	CU_ASSERT(n > 40);
	CU_ASSERT_EQUAL(message_failures, 0);
}

/* The text and its length agree, and a RawJson that is not JSON fails. */
static void test_raw_json_fault(void)
{
	Seo__Realtime__V1__SchemaEntity e = SEO__REALTIME__V1__SCHEMA_ENTITY__INIT;
	Seo__Common__RawJson raw = SEO__COMMON__RAW_JSON__INIT;
	seo_jw w = SEO_JW_INIT;

	e.source = "s";
	e.properties = &raw;
	raw.json = "{oops";
	CU_ASSERT_EQUAL(seo_pbjson_write(&w, &e.base, seo_proto_nullable),
			SEO_EINVAL);
	seo_jw_free(&w);
	raw.json = "[1,\"\\u00e9\"]";
	CU_ASSERT_EQUAL(seo_pbjson_write(&w, &e.base, seo_proto_nullable), 0);
	CU_ASSERT_EQUAL(w.len, strlen("{\"type\":[],\"id\":null,\"block_index\":0,"
				      "\"source\":\"s\",\"properties\":[1,\"\xc3\xa9\"]}"));
	seo_jw_free(&w);
}

int main(void)
{
	CU_pSuite s;
	int failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("pbjson_write", NULL, NULL);
	CU_add_test(s, "reals as jansson writes them", test_reals);
	CU_add_test(s, "integers as printf writes them", test_integers);
	CU_add_test(s, "random messages, both ways", test_messages);
	CU_add_test(s, "raw json", test_raw_json_fault);
	CU_add_test(s, "string escapes in long text", test_string_escapes_long);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = (int)CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}
