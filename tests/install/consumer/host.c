/* SPDX-License-Identifier: MIT */
/*
 * tests/install/consumer/host.c - a program that knows nothing of grb: it
 * dlopen()s a plugin that carries the static libgrb.a inside it and calls
 * the plugin's consumer_roundtrip().
 *
 * Usage: host PLUGIN.so
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int (*roundtrip)(const char *who);
	void *plugin;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: host PLUGIN.so\n");
		return 2;
	}
	plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!plugin) {
		fprintf(stderr, "host: dlopen: %s\n", dlerror());
		return 1;
	}
	/* dlsym() returns an object pointer that POSIX guarantees can hold
	 * a function's address; ISO C has no cast between the two, so the
	 * conversion goes through a union. */
	{
		union { void *obj; int (*fn)(const char *); } u;

		u.obj = dlsym(plugin, "consumer_roundtrip");
		roundtrip = u.fn;
	}
	if (!roundtrip) {
		fprintf(stderr, "host: dlsym consumer_roundtrip: %s\n", dlerror());
		dlclose(plugin);
		return 1;
	}
	ret = roundtrip("plugin");
	dlclose(plugin);
	return ret ? 1 : 0;
}
