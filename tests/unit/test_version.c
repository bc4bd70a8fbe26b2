/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_version.c - the library reports the version its headers
 * declare, as a string and as a number that orders versions.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "grb/version.h"

int main(void)
{
	char want[32];

	CHECK(strcmp(grb_version(), GRB_VERSION_STRING) == 0);
	CHECK_EQ(grb_version_number(), GRB_VERSION_NUMBER);
	snprintf(want, sizeof(want), "%d.%d.%d", GRB_VERSION_MAJOR,
		 GRB_VERSION_MINOR, GRB_VERSION_PATCH);
	CHECK(strcmp(GRB_VERSION_STRING, want) == 0);
	CHECK_EQ(GRB_VERSION_NUMBER >> 16, GRB_VERSION_MAJOR);
	CHECK_EQ((GRB_VERSION_NUMBER >> 8) & 0xff, GRB_VERSION_MINOR);
	CHECK_EQ(GRB_VERSION_NUMBER & 0xff, GRB_VERSION_PATCH);
	printf("test_version: %s passed\n", grb_version());
	return 0;
}
