/*  The shared helpers of the network evaluator: see common.h. */

#include "common.h"

void *
alloc_array(Py_ssize_t n, Py_ssize_t size)
{
    Py_ssize_t bytes = checked_mul(n > 0 ? n : 1, size);
    if (bytes < 0) return NULL;
    void *p = PyMem_Calloc((size_t)bytes, 1);
    if (!p) PyErr_NoMemory();
    return p;
}

int32_t *
int_array(PyObject *obj, Py_ssize_t *n, const char *what, int64_t lo, int64_t hi)
{
    int32_t *out;
    Py_ssize_t len;
    if (PyObject_CheckBuffer(obj)) {
        Py_buffer view;
        if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
        int ok = view.itemsize == 4 && view.format &&
                 (strcmp(view.format, "i") == 0 || strcmp(view.format, "=i") == 0 ||
                  strcmp(view.format, "@i") == 0 || strcmp(view.format, "<i") == 0);
        if (!ok) {
            PyBuffer_Release(&view);
            PyErr_Format(PyExc_TypeError, "%s: a buffer of C ints (format 'i') expected", what);
            return NULL;
        }
        len = view.len / 4;
        out = ALLOC(len, int32_t);
        if (!out) { PyBuffer_Release(&view); return NULL; }
        memcpy(out, view.buf, (size_t)len * 4);
        PyBuffer_Release(&view);
        for (Py_ssize_t i = 0; i < len; i++)
            if (out[i] < lo || out[i] >= hi) {
                PyMem_Free(out);
                PyErr_Format(PyExc_ValueError, "%s: item %zd out of range", what, i);
                return NULL;
            }
    } else {
        /* a copy: converting an item may run Python code, which may change a list */
        PyObject *fast = PySequence_Tuple(obj);
        if (!fast) return NULL;
        len = PyTuple_GET_SIZE(fast);
        out = ALLOC(len, int32_t);
        if (!out) { Py_DECREF(fast); return NULL; }
        for (Py_ssize_t i = 0; i < len; i++) {
            long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(fast, i));
            if (v == -1 && PyErr_Occurred()) {
                PyMem_Free(out); Py_DECREF(fast);
                if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
                    PyErr_Clear();
                    PyErr_Format(PyExc_ValueError, "%s: item %zd out of range", what, i);
                }
                return NULL;
            }
            if (v < lo || v >= hi) {
                PyMem_Free(out); Py_DECREF(fast);
                PyErr_Format(PyExc_ValueError, "%s: item %zd out of range", what, i);
                return NULL;
            }
            out[i] = (int32_t)v;
        }
        Py_DECREF(fast);
    }
    if (n) *n = len;
    return out;
}

