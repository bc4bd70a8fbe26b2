/* SPDX-License-Identifier: MIT */
/*
 * clients/ctf/ctf_metadata.c - the trace's TSDL metadata (CTF 1.8), from
 * the tracer's clock and registered event classes.
 *
 * Besides the TSDL a reader needs, the text carries one comment per
 * event class, "grb-layout ID FIELDS", and one with the trace UUID, so
 * that another process (grb-crash, grb-consumerd) learns where each
 * event ends without parsing TSDL (grb_ctf_metadata_load()).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctf_internal.h"
#include "grb/version.h"

static void put_int(FILE *f, unsigned int size, int is_signed,
		    unsigned int base)
{
	fprintf(f, "integer { size = %u; align = 8; signed = %s; base = %u; }",
		size * 8, is_signed ? "true" : "false", base ? base : 10);
}

static void put_field(FILE *f, const struct ctf_field *fd)
{
	fputs("\t\t", f);
	switch (fd->kind) {
	case GRB_CTF_INT:
		put_int(f, fd->size, fd->is_signed, fd->base);
		break;
	case GRB_CTF_FLOAT:
		fprintf(f, "floating_point { exp_dig = %u; mant_dig = %u; "
			"byte_order = native; align = 8; }",
			fd->size == 4 ? 8u : 11u, fd->size == 4 ? 24u : 53u);
		break;
	case GRB_CTF_STRING:
		fputs("string", f);
		break;
	case GRB_CTF_ENUM:
		fputs("enum : ", f);
		put_int(f, fd->size, fd->is_signed, 10);
		fputs(" {", f);
		for (unsigned int i = 0; i < fd->nr_labels; i++) {
			/* An unsigned 8-byte container's values from 2^63
			 * up are given as negative int64_t: print them as
			 * the unsigned values they stand for. */
			if (fd->is_signed)
				fprintf(f, "%s \"%s\" = %" PRId64, i ? "," : "",
					fd->labels[i].label,
					fd->labels[i].value);
			else
				fprintf(f, "%s \"%s\" = %" PRIu64, i ? "," : "",
					fd->labels[i].label,
					(uint64_t)fd->labels[i].value);
		}
		fputs(" }", f);
		break;
	}
	/* A leading underscore, which CTF readers remove: a field may then
	 * be named like a TSDL keyword. */
	fprintf(f, " _%s", fd->name);
	if (fd->length)
		fprintf(f, "[%u]", fd->length);
	fputs(";\n", f);
}

static void put_layout(FILE *f, const struct grb_ctf_event *ev)
{
	fprintf(f, "/* grb-layout %" PRIu32 " ", ev->id);
	if (!ev->nr_fields)
		fputc('-', f);
	for (unsigned int i = 0; i < ev->nr_fields; i++) {
		const struct ctf_field *fd = &ev->fields[i];

		if (i)
			fputc(',', f);
		switch (fd->kind) {
		case GRB_CTF_STRING:
			fputc('s', f);
			continue;
		case GRB_CTF_FLOAT:
			fprintf(f, "f%u", fd->size);
			break;
		default:
			fprintf(f, "%c%u", fd->is_signed ? 'i' : 'u', fd->size);
			break;
		}
		if (fd->length)
			fprintf(f, "x%u", fd->length);
	}
	fputs(" */\n", f);
}

static void put_event(FILE *f, const struct grb_ctf_event *ev)
{
	fprintf(f, "event {\n\tname = \"%s\";\n\tid = %" PRIu32 ";\n"
		"\tstream_id = 0;\n", ev->name, ev->id);
	if (ev->loglevel >= 0)
		fprintf(f, "\tloglevel = %d;\n", ev->loglevel);
	fputs("\tfields := struct {\n", f);
	for (unsigned int i = 0; i < ev->nr_fields; i++)
		put_field(f, &ev->fields[i]);
	fputs("\t};\n};\n", f);
	put_layout(f, ev);
	fputc('\n', f);
}

static void put_uuid(FILE *f, const uint8_t *u, int dashes)
{
	for (int i = 0; i < 16; i++) {
		if (dashes && (i == 4 || i == 6 || i == 8 || i == 10))
			fputc('-', f);
		fprintf(f, "%02x", u[i]);
	}
}

int grb__ctf_metadata(const struct grb_ctf *t, char **text, size_t *len)
{
	const char *clk = t->clock == GRB_CTF_CLOCK_TSC ? "tsc" : "monotonic";
	uint32_t nr;
	FILE *f;

	*text = NULL;
	*len = 0;
	f = open_memstream(text, len);
	if (!f)
		return -ENOMEM;
	fputs("/* CTF 1.8 */\n", f);
	fputs("/* grb-trace uuid=", f);
	put_uuid(f, t->types->uuid, 0);
	fputs(" */\n\n", f);
	fputs("typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	      "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	      "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	      "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	      "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
	      "typealias integer { size = 27; align = 1; signed = false; } := uint27_t;\n\n",
	      f);
	fputs("trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"", f);
	put_uuid(f, t->types->uuid, 1);
	fputs("\";\n\tbyte_order = le;\n"
	      "\tpacket.header := struct {\n"
	      "\t\tuint32_t magic;\n"
	      "\t\tuint8_t uuid[16];\n"
	      "\t\tuint32_t stream_id;\n"
	      "\t\tuint64_t stream_instance_id;\n"
	      "\t};\n};\n\n", f);
	fprintf(f, "env {\n\thostname = \"%s\";\n\tdomain = \"ust\";\n"
		"\ttracer_name = \"grb\";\n\ttracer_major = %u;\n"
		"\ttracer_minor = %u;\n\ttrace_name = \"%s\";\n};\n\n",
		t->hostname, GRB_VERSION_MAJOR, GRB_VERSION_MINOR, t->name);
	fprintf(f, "clock {\n\tname = \"%s\";\n\tdescription = \"%s\";\n"
		"\tfreq = %" PRIu64 ";\n\toffset_s = %" PRId64 ";\n"
		"\toffset = %" PRIu64 ";\n\tprecision = 1;\n"
		"\tabsolute = false;\n};\n\n", clk,
		t->clock == GRB_CTF_CLOCK_TSC ? "time-stamp counter" :
		"CLOCK_MONOTONIC", t->clock_freq, t->clock_offset_s,
		t->clock_offset);
	fprintf(f, "typealias integer { size = 27; align = 1; signed = false; "
		"map = clock.%s.value; } := uint27_clock_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; "
		"map = clock.%s.value; } := uint64_clock_t;\n\n", clk, clk);
	fputs("struct packet_context {\n"
	      "\tuint64_clock_t timestamp_begin;\n"
	      "\tuint64_clock_t timestamp_end;\n"
	      "\tuint64_t content_size;\n"
	      "\tuint64_t packet_size;\n"
	      "\tuint64_t packet_seq_num;\n"
	      "\tuint64_t events_discarded;\n"
	      "\tuint32_t cpu_id;\n"
	      "};\n\n", f);
	/* Id 30: padding over a dead writer's bytes, no timestamp: the
	 * 5-bit id, 3 zero bits, then its payload (grb__ctf_pad()). */
	fputs("struct event_header_compact {\n"
	      "\tenum : uint5_t { compact = 0 ... 29, padding = 30, "
	      "extended = 31 } id;\n"
	      "\tvariant <id> {\n"
	      "\t\tstruct { uint27_clock_t timestamp; } compact;\n"
	      "\t\tstruct { } padding;\n"
	      "\t\tstruct { uint32_t id; uint64_clock_t timestamp; } extended;\n"
	      "\t} v;\n"
	      "} align(8);\n\n", f);
	fputs("stream {\n\tid = 0;\n"
	      "\tevent.header := struct event_header_compact;\n"
	      "\tpacket.context := struct packet_context;\n};\n\n", f);
	fputs("event {\n\tname = \"grb:padding\";\n\tid = 30;\n"
	      "\tstream_id = 0;\n\tfields := struct {\n"
	      "\t\tuint16_t len;\n\t\tuint8_t bytes[len];\n\t};\n};\n\n", f);
	nr = atomic_load_explicit(&t->types->nr, memory_order_acquire);
	for (uint32_t i = 0; i < nr; i++)
		put_event(f, t->types->ev[i]);
	if (fclose(f))
		return -ENOMEM;
	return 0;
}

/*
 * Put the temporary file @tmp at @path: over what is there, or with
 * @excl only where nothing is (-EEXIST otherwise).  A tracer's first
 * metadata must never replace another's, which a creation racing with it
 * may have written since it found none (grb_ctf_create()).
 */
static int publish(const char *tmp, const char *path, int excl)
{
	int fd;

	if (!excl)
		return rename(tmp, path) ? -errno : 0;
	if (link(tmp, path) == 0)
		return 0;
	if (errno != EPERM && errno != EOPNOTSUPP)
		return -errno;
	/* A file system without hard links (vfat): claim the name, then
	 * put the text over the claim. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	if (rename(tmp, path) == 0)
		return 0;
	fd = -errno;
	unlink(path);
	return fd;
}

/*
 * Put @text at @path, whole (publish()), through a temporary file,
 * hidden (".NAME.TID.tmp"): babeltrace2 takes every other file of the
 * directory for a stream, and a reader that came by between the write
 * and the rename failed on it.  The thread's id makes it this writer's
 * own: two tracers racing for one trace otherwise wrote one file, and
 * the winner could publish the loser's text.
 */
static int write_file(const char *path, const char *text, size_t len,
		      int excl)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dir_len = slash ? (int)(slash - path + 1) : 0;
	char tmp[4200];
	size_t done = 0;
	int fd, ret = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.%s.%ld.tmp", dir_len,
			     path, base, (long)syscall(SYS_gettid)) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret)
		ret = publish(tmp, path, excl);
	/* Failed, or linked: the temporary file goes (renamed: gone). */
	if (ret || excl)
		unlink(tmp);
	return ret;
}

int grb__ctf_metadata_write(const struct grb_ctf *t, int excl)
{
	char *text;
	size_t len;
	int ret;

	if (!t->meta_path && !t->trace_dir)
		return 0;
	ret = grb__ctf_metadata(t, &text, &len);
	if (ret)
		return ret;
	if (t->meta_path)
		ret = write_file(t->meta_path, text, len, excl);
	if (!ret && t->trace_dir) {
		char path[4200];

		if ((size_t)snprintf(path, sizeof(path), "%s/metadata",
				     t->trace_dir) >= sizeof(path))
			ret = -ENAMETOOLONG;
		else
			ret = write_file(path, text, len, excl);
		/* A first write that failed leaves nothing of its own. */
		if (ret && excl && t->meta_path)
			unlink(t->meta_path);
	}
	free(text);
	return ret;
}
