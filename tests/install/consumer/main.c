/* SPDX-License-Identifier: MIT */
/*
 * tests/install/consumer/main.c - a program linked with the installed
 * grb (shared or static, as the build chooses).
 */
#include "roundtrip.h"

int main(int argc, char **argv)
{
	(void)argc;
	return consumer_roundtrip(argv[0]) ? 1 : 0;
}
