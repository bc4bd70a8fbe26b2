/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/compat.h - compiler spellings shared by C11 and C++ builds.
 */
#ifndef GRB_IMPL_COMPAT_H
#define GRB_IMPL_COMPAT_H

#ifdef __cplusplus
#define GRB_ALIGNAS(n)   alignas(n)
/* __thread, not thread_local: C++ would otherwise call a TLS init
 * wrapper on every access to an extern thread-local of class type. */
#define GRB_THREAD_LOCAL __thread
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

/*
 * Race-injection points and the CPU override of the test build: nothing
 * in what is installed.  A test build defines both first, from a
 * test-only header the grb sources never include themselves.
 */
#ifndef GRB_HOOK
#define GRB_HOOK(point) ((void)0)
#endif
#ifndef GRB_CPU_OVERRIDE
#define GRB_CPU_OVERRIDE(cpu) (cpu)
#endif

#endif /* GRB_IMPL_COMPAT_H */
