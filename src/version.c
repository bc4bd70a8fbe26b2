/* SPDX-License-Identifier: MIT */
/*
 * src/version.c - the version the library was built as.
 */
#include <stddef.h>

#include "grb/version.h"

const char *grb_version(unsigned int *number)
{
	if (number)
		*number = GRB_VERSION_NUMBER;
	return GRB_VERSION_STRING;
}
