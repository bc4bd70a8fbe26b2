/* SPDX-License-Identifier: MIT */
/*
 * grb/version.h - the version of the headers, and of the library at run
 * time.
 *
 * The numbers follow semantic versioning; while the major version is 0,
 * a minor version may change the API.  The library's SONAME changes with
 * every change of its ABI, whatever the version says (docs/abi.md).
 * CMakeLists.txt reads the version from this file.
 */
#ifndef GRB_VERSION_H
#define GRB_VERSION_H

#include "grb/api.h"

#define GRB_VERSION_MAJOR 0
#define GRB_VERSION_MINOR 2
#define GRB_VERSION_PATCH 0
#define GRB_VERSION_STRING "0.2.0"
/* One number that compares: 0xMMmmpp. */
#define GRB_VERSION_NUMBER \
	((GRB_VERSION_MAJOR << 16) | (GRB_VERSION_MINOR << 8) | GRB_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/**
 * grb_version - the version of the library actually loaded.
 *
 * Compare with GRB_VERSION_STRING to detect headers and a library that
 * do not match.
 * Return: the library's GRB_VERSION_STRING (static, never NULL).
 * Context: any thread.
 */
GRB_API const char *grb_version(void);

/**
 * grb_version_number - the loaded library's GRB_VERSION_NUMBER (0xMMmmpp),
 * for comparisons: grb_version_number() >= 0x000200 means 0.2 or later.
 * Context: any thread.
 */
GRB_API unsigned int grb_version_number(void);

#ifdef __cplusplus
}
#endif

#endif /* GRB_VERSION_H */
