/*  _network: the compiled engine's evaluator of a propositional network, a C
    extension. One generic interpreter: a game's network arrives as integer arrays,
    never as code, so no game's text reaches C. Its files, by concern:

    - common.h, common.c: checked sizes and arrays, arrays from Python, random numbers;
    - pace.h, pace.c: long loops (the GIL released, signals, deadlines);
    - network.h, network.c: the network's arrays, their checked building, its lock;
    - evaluate.h, evaluate.c: one game's evaluation (a state, a joint move, playouts,
      tuning);
    - network_type.h, network_type.c: the Python type Network;
    - batch.h, batch.c: N games of a network stepped together, bit-sliced;
    - batch_type.h, batch_type.c: the Python type Batch;
    - module.c: the module. */

#include "common.h"

#include "batch_type.h"
#include "network_type.h"

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_network",
    "The compiled engine's network evaluator (one generic interpreter, no game code).",
    -1, NULL, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC
PyInit__network(void)
{
    if (PyType_Ready(&NetworkType) < 0 || PyType_Ready(&BatchType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&NetworkType);
    if (PyModule_AddObject(m, "Network", (PyObject *)&NetworkType) < 0) {
        Py_DECREF(&NetworkType); Py_DECREF(m); return NULL;
    }
    Py_INCREF(&BatchType);
    if (PyModule_AddObject(m, "Batch", (PyObject *)&BatchType) < 0) {
        Py_DECREF(&BatchType); Py_DECREF(m); return NULL;
    }
    return m;
}
