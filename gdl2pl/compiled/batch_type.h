/*  The Python type Batch (gdl2pl.compiled._network.Batch): N games of one Network
    stepped together, their outputs written into the caller's arrays (batch.h). */

#ifndef GDL2PL_BATCH_TYPE_H
#define GDL2PL_BATCH_TYPE_H

#include "common.h"

#pragma GCC visibility push(hidden)

extern PyTypeObject BatchType;

#pragma GCC visibility pop

#endif
