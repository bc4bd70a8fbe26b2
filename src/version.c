/* SPDX-License-Identifier: MIT */
/*
 * src/version.c - the version the library was built as.
 */
#include "grb/version.h"

const char *grb_version(void)
{
	return GRB_VERSION_STRING;
}

unsigned int grb_version_number(void)
{
	return GRB_VERSION_NUMBER;
}
