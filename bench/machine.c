/* SPDX-License-Identifier: MIT */
/*
 * bench/machine.c - read the machine description from /proc and /sys.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "machine.h"
#include "util.h"

/* Copy the value of the first "key<spaces>: value" line of /proc/cpuinfo. */
static void cpuinfo_field(const char *key, char *dst, size_t cap)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];
	size_t klen = strlen(key);

	snprintf(dst, cap, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, key, klen) != 0 || !colon)
			continue;
		colon++;
		while (*colon == ' ')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(dst, cap, "%s", colon);
		break;
	}
	fclose(f);
}

int bench_cpu_flag(const char *flag)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	static char line[16384];
	size_t n = strlen(flag);
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line;

		if (strncmp(line, "flags", 5) != 0)
			continue;
		while (!found && (p = strstr(p, flag)) != NULL) {
			found = p > line && p[-1] == ' ' &&
				(p[n] == ' ' || p[n] == '\n' || p[n] == '\0');
			p += n;
		}
		break;
	}
	fclose(f);
	return found;
}

void bench_machine_read(struct bench_machine *m)
{
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	memset(m, 0, sizeof(*m));
	cpuinfo_field("model name", m->cpu_model, sizeof(m->cpu_model));
	cpuinfo_field("cpu MHz", m->cpu_mhz, sizeof(m->cpu_mhz));
	m->cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	m->cpus_allowed = bench_nr_cpus();
	snprintf(m->kernel, sizeof(m->kernel), "%s",
		 uname(&u) == 0 ? u.release : "unknown");
	snprintf(m->clocksource, sizeof(m->clocksource), "unknown");
	f = fopen("/sys/devices/system/clocksource/clocksource0/"
		  "current_clocksource", "re");
	if (f) {
		if (fgets(m->clocksource, sizeof(m->clocksource), f))
			m->clocksource[strcspn(m->clocksource, "\n")] = '\0';
		fclose(f);
	}
	gmtime_r(&now, &tm);
	strftime(m->date, sizeof(m->date), "%Y-%m-%d %H:%M UTC", &tm);
#ifdef __OPTIMIZE__
	snprintf(m->compiler, sizeof(m->compiler), "compiler %s, optimised",
		 __VERSION__);
#else
	snprintf(m->compiler, sizeof(m->compiler),
		 "compiler %s, NOT optimised: figures are meaningless",
		 __VERSION__);
#endif
}
