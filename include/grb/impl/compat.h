/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/compat.h - compiler spellings shared by C11 and C++ builds.
 */
#ifndef GRB_IMPL_COMPAT_H
#define GRB_IMPL_COMPAT_H

#ifdef __cplusplus
#define GRB_ALIGNAS(n)   alignas(n)
#define GRB_THREAD_LOCAL thread_local
#else
#define GRB_ALIGNAS(n)   _Alignas(n)
#define GRB_THREAD_LOCAL _Thread_local
#endif

#define GRB_LIKELY(x)    __builtin_expect(!!(x), 1)
#define GRB_UNLIKELY(x)  __builtin_expect(!!(x), 0)
#define GRB_ALWAYS_INLINE __attribute__((always_inline)) inline
#define GRB_NOINLINE     __attribute__((noinline))
/* Thread-local storage the fast path reads: no __tls_get_addr call. */
#define GRB_TLS_MODEL    __attribute__((tls_model("initial-exec")))

#endif /* GRB_IMPL_COMPAT_H */
