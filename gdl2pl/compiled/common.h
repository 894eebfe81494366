/*  The shared helpers of the network evaluator (the extension _network, see
    module.c): checked sizes and arrays, integer arrays handed over from Python, and
    the random numbers of playouts and batches.

    Every file of the extension includes this header first. */

#ifndef GDL2PL_COMMON_H
#define GDL2PL_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* What the extension's files share is theirs alone: no other library's function of the
   same name (libswipl's, loaded for every program, say) can stand in for one of them,
   and the module exports nothing but its PyInit__network. */
#pragma GCC visibility push(hidden)

/* ---- checked sizes and arrays ------------------------------------------------------- */

/* a * b, or -1 (with MemoryError set) if it does not fit a Py_ssize_t */
static inline Py_ssize_t
checked_mul(Py_ssize_t a, Py_ssize_t b)
{
    if (a < 0 || b < 0 || (b != 0 && a > PY_SSIZE_T_MAX / b)) {
        PyErr_SetString(PyExc_MemoryError, "a size overflows this machine's integers");
        return -1;
    }
    return a * b;
}

/* n zeroed items of `size` bytes (at least one), from PyMem; NULL with an error if the
   size overflows or memory runs out. */
void *alloc_array(Py_ssize_t n, Py_ssize_t size);

#define ALLOC(n, type) ((type *)alloc_array((n), (Py_ssize_t)sizeof(type)))

/* A fresh int32 array of a Python sequence of ints or of a buffer of C ints (array('i'),
   a memoryview), each in lo..hi-1; its length in *n. NULL with an exception otherwise. */
int32_t *int_array(PyObject *obj, Py_ssize_t *n, const char *what, int64_t lo, int64_t hi);

/* ---- random numbers ------------------------------------------------------------------ */

/* The state a generator starts from, before any seed. */
#define FIRST_RNG 0x9E3779B97F4A7C15ULL

/* xorshift64*: the next number of the generator whose state is *rng (never 0) */
static inline uint64_t
xorshift_next(uint64_t *rng)
{
    uint64_t x = *rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* The generator's state for a seed: splitmix64 of it, never zero, well spread. */
static inline uint64_t
seeded_rng(unsigned long long s)
{
    uint64_t z = (uint64_t)s + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return z ? z : 1;
}

#pragma GCC visibility pop

#endif
