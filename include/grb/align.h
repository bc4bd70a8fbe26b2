/* SPDX-License-Identifier: MIT */
/*
 * grb/align.h - alignment helpers for values, offsets and pointers.
 *
 * Two families, because a ring buffer needs both:
 *
 *  - value/pointer alignment (grb_align, grb_align_floor, grb_ptr_align,
 *    grb_ptr_align_floor, grb_is_aligned, grb_ptr_is_aligned) rounds or
 *    tests an absolute quantity;
 *  - offset alignment (grb_offset_align, grb_offset_align_floor) answers
 *    "how many bytes must I skip (or back up) from this position so that
 *    the next object is aligned?", which is what a writer needs when it
 *    lays out a record at a byte offset inside a sub-buffer whose base is
 *    itself aligned.  Working on offsets rather than addresses keeps the
 *    record layout independent of where the buffer is mapped, so a reader
 *    in another process decodes the same padding.
 *
 * Every alignment must be a non-zero power of two; this is a precondition,
 * checked by assert() in debug builds and never in release builds.
 *
 * Context: any thread, signal-safe, no side effects.
 */
#ifndef GRB_ALIGN_H
#define GRB_ALIGN_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True when x is a non-zero power of two. */
static inline int grb_is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

/**
 * grb_align - round v up to the next multiple of a.
 * @v: value to round.
 * @a: alignment, a non-zero power of two.
 *
 * Return: the smallest multiple of @a that is >= @v, modulo 2^64 (a value
 * within a - 1 of UINT64_MAX wraps to 0, as unsigned arithmetic does).
 */
static inline uint64_t grb_align(uint64_t v, uint64_t a)
{
	assert(grb_is_pow2(a));
	return (v + a - 1) & ~(a - 1);
}

/**
 * grb_align_floor - round v down to a multiple of a.
 * @v: value to round.
 * @a: alignment, a non-zero power of two.
 *
 * Return: the largest multiple of @a that is <= @v.
 */
static inline uint64_t grb_align_floor(uint64_t v, uint64_t a)
{
	assert(grb_is_pow2(a));
	return v & ~(a - 1);
}

/**
 * grb_is_aligned - test whether v is a multiple of a.
 * @v: value to test.
 * @a: alignment, a non-zero power of two.
 *
 * Return: 1 when @v is a multiple of @a, else 0.
 */
static inline int grb_is_aligned(uint64_t v, uint64_t a)
{
	assert(grb_is_pow2(a));
	return (v & (a - 1)) == 0;
}

/**
 * grb_offset_align - padding needed to align an offset upwards.
 * @drift: offset of the next object from an @a-aligned base.
 * @a: alignment, a non-zero power of two.
 *
 * Return: the number of bytes (0 to @a - 1) to add to @drift so that it
 * becomes a multiple of @a.
 */
static inline size_t grb_offset_align(size_t drift, size_t a)
{
	assert(grb_is_pow2(a));
	return (a - drift) & (a - 1);
}

/**
 * grb_offset_align_floor - distance to the previous aligned offset.
 * @drift: offset of the object from an @a-aligned base.
 * @a: alignment, a non-zero power of two.
 *
 * Return: the number of bytes (0 to @a - 1) to subtract from @drift so that
 * it becomes a multiple of @a.
 */
static inline size_t grb_offset_align_floor(size_t drift, size_t a)
{
	assert(grb_is_pow2(a));
	return drift & (a - 1);
}

/**
 * grb_ptr_align - round a pointer up to an alignment.
 * @p: pointer to round.
 * @a: alignment, a non-zero power of two.
 *
 * Return: @p advanced by 0 to @a - 1 bytes so that it is @a-aligned.
 */
static inline void *grb_ptr_align(const void *p, size_t a)
{
	uintptr_t v = (uintptr_t)p;

	return (void *)(uintptr_t)grb_align(v, a);
}

/**
 * grb_ptr_align_floor - round a pointer down to an alignment.
 * @p: pointer to round.
 * @a: alignment, a non-zero power of two.
 *
 * Return: @p moved back by 0 to @a - 1 bytes so that it is @a-aligned.
 */
static inline void *grb_ptr_align_floor(const void *p, size_t a)
{
	uintptr_t v = (uintptr_t)p;

	return (void *)(uintptr_t)grb_align_floor(v, a);
}

/**
 * grb_ptr_is_aligned - test a pointer's alignment.
 * @p: pointer to test.
 * @a: alignment, a non-zero power of two.
 *
 * Return: 1 when @p is @a-aligned, else 0.
 */
static inline int grb_ptr_is_aligned(const void *p, size_t a)
{
	return grb_is_aligned((uintptr_t)p, a);
}

/*
 * Object alignment: align a typed pointer on the natural alignment of the
 * type it points to, as the seed's object_align() does.  These are macros
 * because the pointed-to type is the argument; in C++ they need a cast at
 * the call site, as void * does not convert implicitly.
 */
#ifdef __cplusplus
#define GRB_ALIGNOF(t) alignof(t)
#else
#define GRB_ALIGNOF(t) _Alignof(t)
#endif
#define GRB_OBJECT_ALIGN(p)       grb_ptr_align((p), GRB_ALIGNOF(__typeof__(*(p))))
#define GRB_OBJECT_ALIGN_FLOOR(p) grb_ptr_align_floor((p), GRB_ALIGNOF(__typeof__(*(p))))

#ifdef __cplusplus
}
#endif

#endif /* GRB_ALIGN_H */
