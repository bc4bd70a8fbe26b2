/* SPDX-License-Identifier: MIT */
/*
 * clients/ctf/ctf_events.c - event classes: validation of what a tracer
 * declares, the per-trace tables found by UUID, and the decoder that
 * walks a packet with them (record_decode, record_pad, and the layout
 * lines a process reads back from metadata).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctf_internal.h"

/*
 * Text the metadata quotes: well-formed UTF-8 (no overlong form, no
 * surrogate, nothing above U+10FFFF) without control characters (C0, DEL,
 * C1), '"' or '\\'.
 */
static int text_ok(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned char c = p[i];
		uint32_t cp, min;
		size_t len, k;

		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
				return 0;
			i++;
			continue;
		}
		/* The lead byte: the length, its bits, the least code point
		 * that needs that length.  A continuation byte, an overlong
		 * lead (C0, C1) or one above F4 leads nothing. */
		if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
			cp = c & 0x1f;
			min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			cp = c & 0x0f;
			min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			cp = c & 0x07;
			min = 0x10000;
		} else {
			return 0;
		}
		if (n - i < len)
			return 0;
		for (k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f)
			return 0;
		i += len;
	}
	return 1;
}

static int name_ok(const char *s, int event)
{
	size_t n;

	if (!s)
		return 0;
	n = strlen(s);
	if (n == 0 || n > GRB_CTF_NAME_MAX)
		return 0;
	if (!event) {
		/* A C identifier (the metadata writes it with a leading
		 * underscore, which readers strip, so keywords are fine). */
		if (!isalpha((unsigned char)s[0]) && s[0] != '_')
			return 0;
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)s[i]) && s[i] != '_')
				return 0;
		return 1;
	}
	return text_ok(s, n) && strcmp(s, "grb:padding") != 0;
}

static int label_ok(const char *s)
{
	size_t n;

	if (!s)
		return 0;
	n = strlen(s);
	if (n == 0 || n > GRB_CTF_NAME_MAX)
		return 0;
	return text_ok(s, n);
}

static int int_size_ok(unsigned int size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/* Does @v fit an integer of @size bytes, signed or not? */
static int fits(int64_t v, unsigned int size, int is_signed)
{
	if (size == 8)
		return 1;
	if (is_signed) {
		int64_t lim = INT64_C(1) << (size * 8 - 1);

		return v >= -lim && v < lim;
	}
	return v >= 0 && (uint64_t)v < (UINT64_C(1) << (size * 8));
}

static int field_ok(const struct grb_ctf_field *f)
{
	if (!name_ok(f->name, 0))
		return 0;
	switch (f->kind) {
	case GRB_CTF_INT:
		if (!int_size_ok(f->size))
			return 0;
		if (f->base != 0 && f->base != 2 && f->base != 8 &&
		    f->base != 10 && f->base != 16)
			return 0;
		break;
	case GRB_CTF_FLOAT:
		if (f->size != 4 && f->size != 8)
			return 0;
		break;
	case GRB_CTF_STRING:
		return f->size == 0 && f->length == 0;
	case GRB_CTF_ENUM:
		if (!int_size_ok(f->size) || !f->labels || f->nr_labels == 0 ||
		    f->nr_labels > GRB_CTF_ENUM_MAX)
			return 0;
		for (unsigned int i = 0; i < f->nr_labels; i++) {
			if (!label_ok(f->labels[i].label) ||
			    !fits(f->labels[i].value, f->size, f->is_signed))
				return 0;
			for (unsigned int j = 0; j < i; j++)
				if (!strcmp(f->labels[i].label,
					    f->labels[j].label))
					return 0;
		}
		break;
	default:
		return 0;
	}
	return f->length <= GRB_CTF_ARRAY_MAX;
}

void grb__ctf_event_free(struct grb_ctf_event *ev)
{
	if (!ev)
		return;
	for (unsigned int i = 0; i < ev->nr_fields; i++) {
		struct ctf_field *f = &ev->fields[i];

		for (unsigned int j = 0; f->labels && j < f->nr_labels; j++)
			free((char *)f->labels[j].label);
		free(f->labels);
		free(f->name);
	}
	free(ev->fields);
	free(ev->name);
	free(ev);
}

int grb__ctf_event_build(const struct grb_ctf_event_desc *desc,
			 struct grb_ctf_event **out)
{
	struct grb_ctf_event *ev;

	if (!desc || !name_ok(desc->name, 1) ||
	    desc->nr_fields > GRB_CTF_MAX_FIELDS ||
	    (desc->nr_fields && !desc->fields) ||
	    desc->loglevel < -1 || desc->loglevel > 14)
		return -EINVAL;
	for (unsigned int i = 0; i < desc->nr_fields; i++) {
		if (!field_ok(&desc->fields[i]))
			return -EINVAL;
		for (unsigned int j = 0; j < i; j++)
			if (!strcmp(desc->fields[i].name, desc->fields[j].name))
				return -EINVAL;
	}
	ev = (struct grb_ctf_event *)calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->name = strdup(desc->name);
	ev->loglevel = desc->loglevel;
	ev->fields = (struct ctf_field *)calloc(desc->nr_fields + 1,
						sizeof(*ev->fields));
	if (!ev->name || !ev->fields)
		goto nomem;
	for (unsigned int i = 0; i < desc->nr_fields; i++) {
		const struct grb_ctf_field *s = &desc->fields[i];
		struct ctf_field *f = &ev->fields[i];

		ev->nr_fields = i + 1;
		f->name = strdup(s->name);
		if (!f->name)
			goto nomem;
		f->kind = s->kind;
		f->size = s->size;
		f->is_signed = s->is_signed != 0;
		f->base = s->base ? s->base : 10;
		f->length = s->length;
		if (s->kind == GRB_CTF_ENUM) {
			f->labels = (struct grb_ctf_enum_label *)calloc(
				s->nr_labels, sizeof(*f->labels));
			if (!f->labels)
				goto nomem;
			for (unsigned int j = 0; j < s->nr_labels; j++) {
				f->nr_labels = j + 1;
				f->labels[j].value = s->labels[j].value;
				f->labels[j].label = strdup(s->labels[j].label);
				if (!f->labels[j].label)
					goto nomem;
			}
		}
		if (s->kind == GRB_CTF_STRING)
			ev->nr_strings++;
		else
			ev->fixed_size += (size_t)s->size *
				(s->length ? s->length : 1);
	}
	*out = ev;
	return 0;
nomem:
	grb__ctf_event_free(ev);
	return -ENOMEM;
}

uint32_t grb_ctf_event_id(const struct grb_ctf_event *ev)
{
	return ev ? ev->id : UINT32_MAX;
}

/* ------------------------------------------------------------------ */
/* The tables of the traces this process knows, by UUID. */

static pthread_mutex_t types_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ctf_types *_Atomic types_head;

struct ctf_types *grb__ctf_types_find(const uint8_t uuid[16])
{
	/* Acquire pairs with the release that published each entry. */
	struct ctf_types *t = atomic_load_explicit(&types_head,
						   memory_order_acquire);

	for (; t; t = t->next)
		if (!memcmp(t->uuid, uuid, 16))
			return t;
	return NULL;
}

/*
 * A new table, linked for the life of the process: decoders may hold a
 * pointer to it from any thread, so it is never freed (its classes are
 * freed with the tracer that registered them, see grb_ctf_destroy()).
 */
struct ctf_types *grb__ctf_types_new(const uint8_t uuid[16])
{
	struct ctf_types *t;

	pthread_mutex_lock(&types_lock);
	t = grb__ctf_types_find(uuid);
	if (!t) {
		t = (struct ctf_types *)calloc(1, sizeof(*t));
		if (t) {
			memcpy(t->uuid, uuid, 16);
			t->next = atomic_load_explicit(&types_head,
						       memory_order_relaxed);
			atomic_store_explicit(&types_head, t,
					      memory_order_release);
		}
	}
	pthread_mutex_unlock(&types_lock);
	return t;
}

/* ------------------------------------------------------------------ */
/* Decoding. */

long grb__ctf_payload_len(const struct grb_ctf_event *ev, const char *p,
			  size_t avail)
{
	size_t n = 0;

	if (!ev->nr_strings)
		return ev->fixed_size <= avail ? (long)ev->fixed_size : -EINVAL;
	for (unsigned int i = 0; i < ev->nr_fields; i++) {
		const struct ctf_field *f = &ev->fields[i];

		if (f->kind == GRB_CTF_STRING) {
			const char *nul;

			if (n >= avail)
				return -EINVAL;
			nul = (const char *)memchr(p + n, 0, avail - n);
			if (!nul)
				return -EINVAL;
			n = (size_t)(nul - p) + 1;
		} else {
			n += (size_t)f->size * (f->length ? f->length : 1);
			if (n > avail)
				return -EINVAL;
		}
	}
	return (long)n;
}

int grb__ctf_record_decode(const struct grb_config *cfg, const void *subbuf,
			   size_t offset, size_t data_size,
			   struct grb_record *rec)
{
	const char *base = (const char *)subbuf;
	const struct ctf_packet *ph = (const struct ctf_packet *)subbuf;
	const struct grb_ctf_event *ev;
	struct ctf_types *types;
	uint32_t w, id, nr, rank;
	size_t hlen;
	long plen;

	(void)cfg;
	if (data_size < sizeof(*ph) || offset < sizeof(*ph) ||
	    offset >= data_size || data_size - offset < sizeof(w))
		return -EINVAL;
	memcpy(&w, base + offset, sizeof(w));
	rec->offset = offset;
	rec->rflags = 0;
	if ((w & 31u) == GRB_CTF_PADDING_ID) {
		uint16_t n;
		size_t len;

		if (data_size - offset < CTF_PAD_HEADER)
			return -EINVAL;
		memcpy(&n, base + offset + 1, sizeof(n));
		len = CTF_PAD_HEADER + n;
		if (len > data_size - offset)
			return -EINVAL;
		rec->header_len = len;
		rec->payload_off = offset + len;
		rec->payload_len = 0;
		rec->next = offset + len;
		rec->timestamp = 0;
		rec->rflags = GRB_RFLAG_PADDING;
		return 0;
	}
	if ((w & 31u) == CTF_ID_EXT) {
		if (data_size - offset < CTF_EXT_HEADER)
			return -EINVAL;
		memcpy(&id, base + offset + 1, sizeof(id));
		memcpy(&rec->timestamp, base + offset + 5, sizeof(uint64_t));
		rec->rflags = GRB_RFLAG_FULL_TIMESTAMP;
		hlen = CTF_EXT_HEADER;
	} else {
		id = w & 31u;
		rec->timestamp = w >> 5;
		hlen = sizeof(w);
	}
	types = grb__ctf_types_find(ph->uuid);
	if (!types)
		return -EINVAL;
	/* Acquire pairs with the release that published the class. */
	nr = atomic_load_explicit(&types->nr, memory_order_acquire);
	if (ctf_rank_of(id, &rank) || rank >= nr)
		return -EINVAL;
	ev = types->ev[rank];
	plen = grb__ctf_payload_len(ev, base + offset + hlen,
				    data_size - offset - hlen);
	if (plen < 0)
		return -EINVAL;
	rec->header_len = hlen;
	rec->payload_off = offset + hlen;
	rec->payload_len = (size_t)plen;
	rec->next = offset + hlen + (size_t)plen;
	return 0;
}

/*
 * Padding over a dead writer's bytes: "grb:padding" events, each the id
 * byte 30 (no timestamp, so a reader's clock is untouched), a u16 count
 * n and n bytes, which the metadata declares a sequence.  Every slot is
 * at least a 4-byte header, so @len >= 4 and a chain of events of 3 to
 * CTF_PAD_MAX bytes always spans it exactly.
 */
void grb__ctf_pad(const struct grb_config *cfg, void *at, size_t len)
{
	char *p = (char *)at;

	(void)cfg;
	while (len >= CTF_PAD_HEADER) {
		size_t n = len < CTF_PAD_MAX ? len : CTF_PAD_MAX;
		uint16_t cnt;

		/* Never leave a tail too short for a header. */
		if (len - n != 0 && len - n < CTF_PAD_HEADER)
			n -= CTF_PAD_HEADER;
		cnt = (uint16_t)(n - CTF_PAD_HEADER);
		p[0] = (char)GRB_CTF_PADDING_ID;
		memcpy(p + 1, &cnt, sizeof(cnt));
		memset(p + CTF_PAD_HEADER, 0, cnt);
		p += n;
		len -= n;
	}
}

/* ------------------------------------------------------------------ */
/* Layouts read back from metadata (ctf_metadata.c writes the lines). */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "u4", "i8x16", "f8", "s": one field of a layout line. */
static int parse_field(const char **pp, const char *end, struct ctf_field *f)
{
	const char *p = *pp;
	unsigned long size = 0, length = 0;

	if (p >= end)
		return -EBADMSG;
	switch (*p++) {
	case 'u': f->kind = GRB_CTF_INT; break;
	case 'i': f->kind = GRB_CTF_INT; f->is_signed = 1; break;
	case 'f': f->kind = GRB_CTF_FLOAT; break;
	case 's': f->kind = GRB_CTF_STRING; *pp = p; return 0;
	default: return -EBADMSG;
	}
	while (p < end && *p >= '0' && *p <= '9' && size < 100)
		size = size * 10 + (unsigned long)(*p++ - '0');
	if (p < end && *p == 'x') {
		p++;
		while (p < end && *p >= '0' && *p <= '9' &&
		       length <= GRB_CTF_ARRAY_MAX)
			length = length * 10 + (unsigned long)(*p++ - '0');
		if (length == 0 || length > GRB_CTF_ARRAY_MAX)
			return -EBADMSG;
	}
	if (f->kind == GRB_CTF_FLOAT ? (size != 4 && size != 8)
	    : !int_size_ok((unsigned int)size))
		return -EBADMSG;
	f->size = (unsigned int)size;
	f->length = (unsigned int)length;
	*pp = p;
	return 0;
}

/* "grb-layout ID FIELD,FIELD,...": one class; -EBADMSG when damaged. */
static int parse_layout(const char *p, const char *end, uint32_t *id,
			struct grb_ctf_event **out)
{
	struct grb_ctf_event *ev;
	unsigned long v = 0;
	int ret;

	if (p >= end || *p < '0' || *p > '9')
		return -EBADMSG;
	while (p < end && *p >= '0' && *p <= '9' && v <= GRB_CTF_MAX_EVENTS)
		v = v * 10 + (unsigned long)(*p++ - '0');
	if (v > GRB_CTF_MAX_EVENTS || p >= end || *p != ' ')
		return -EBADMSG;
	p++;
	ev = (struct grb_ctf_event *)calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->fields = (struct ctf_field *)calloc(GRB_CTF_MAX_FIELDS,
						sizeof(*ev->fields));
	if (!ev->fields) {
		free(ev);
		return -ENOMEM;
	}
	ev->id = (uint32_t)v;
	ev->loglevel = -1;
	if (p < end && *p == '-') {
		p++;    /* no fields */
	} else {
		for (;;) {
			struct ctf_field *f;

			if (ev->nr_fields == GRB_CTF_MAX_FIELDS) {
				ret = -EBADMSG;
				goto fail;
			}
			f = &ev->fields[ev->nr_fields++];
			ret = parse_field(&p, end, f);
			if (ret)
				goto fail;
			if (f->kind == GRB_CTF_STRING)
				ev->nr_strings++;
			else
				ev->fixed_size += (size_t)f->size *
					(f->length ? f->length : 1);
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			break;
		}
	}
	/* The line's own end: a text cut inside the line (a partial copy)
	 * is damaged, not a class with fewer or shorter fields. */
	if (end - p < 3 || memcmp(p, " */", 3) != 0) {
		ret = -EBADMSG;
		goto fail;
	}
	*id = ev->id;
	*out = ev;
	return 0;
fail:
	grb__ctf_event_free(ev);
	return ret;
}

int grb_ctf_metadata_load(const char *text, size_t len, uint8_t uuid[16])
{
	/* Each at the start of a line: no name in the TSDL can hold a
	 * newline (name_ok()), so none can pass for one of these. */
	static const char tkey[] = "\n/* grb-trace uuid=";
	static const char lkey[] = "\n/* grb-layout ";
	const char *end, *p, *q;
	struct ctf_types *types;
	uint8_t u[16];
	int ret = 0;

	if (!text)
		return -EBADMSG;
	end = text + len;
	p = (const char *)memmem(text, len, tkey, sizeof(tkey) - 1);
	if (!p || (size_t)(end - p) < sizeof(tkey) - 1 + 32)
		return -EBADMSG;
	p += sizeof(tkey) - 1;
	for (int i = 0; i < 16; i++) {
		int hi = hexval(p[2 * i]), lo = hexval(p[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EBADMSG;
		u[i] = (uint8_t)(hi << 4 | lo);
	}
	types = grb__ctf_types_new(u);
	if (!types)
		return -ENOMEM;
	pthread_mutex_lock(&types_lock);
	for (q = text; (q = (const char *)memmem(q, (size_t)(end - q), lkey,
						  sizeof(lkey) - 1));) {
		struct grb_ctf_event *ev;
		uint32_t id, nr, rank;

		q += sizeof(lkey) - 1;
		ret = parse_layout(q, end, &id, &ev);
		if (ret)
			break;
		nr = atomic_load_explicit(&types->nr, memory_order_relaxed);
		if (ctf_rank_of(id, &rank)) {
			grb__ctf_event_free(ev);
			ret = -EBADMSG;
			break;
		}
		if (rank < nr) {
			/* Known already (this process made it or loaded
			 * it): classes never change. */
			grb__ctf_event_free(ev);
			continue;
		}
		if (rank != nr) {
			grb__ctf_event_free(ev);
			ret = -EBADMSG;
			break;
		}
		types->ev[rank] = ev;
		/* Release: the class before the count that shows it. */
		atomic_store_explicit(&types->nr, nr + 1,
				      memory_order_release);
	}
	pthread_mutex_unlock(&types_lock);
	if (!ret && uuid)
		memcpy(uuid, u, 16);
	return ret;
}
