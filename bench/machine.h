/* SPDX-License-Identifier: MIT */
/*
 * bench/machine.h - what the figures were measured on, printed at the top
 * of the table and stored in results.json.
 */
#ifndef BENCH_MACHINE_H
#define BENCH_MACHINE_H

struct bench_machine {
	char cpu_model[128];   /* /proc/cpuinfo "model name" */
	char cpu_mhz[32];      /* /proc/cpuinfo "cpu MHz" of the first CPU */
	int cpus_online;       /* sysconf(_SC_NPROCESSORS_ONLN), as nproc */
	int cpus_allowed;      /* CPUs in this process's affinity mask */
	char kernel[96];       /* uname -r */
	char clocksource[32];  /* current_clocksource */
	char date[40];         /* UTC, ISO 8601 */
	char compiler[96];     /* compiler and optimisation of this build */
};

void bench_machine_read(struct bench_machine *m);

/* Is @flag a whole word of the first "flags" line of /proc/cpuinfo? */
int bench_cpu_flag(const char *flag);

#endif /* BENCH_MACHINE_H */
