/*  The Python type Network (gdl2pl.compiled._network.Network): a game's network,
    built from its arrays, answering for one state or joint move at a time, and
    playing random playouts in C. */

#ifndef GDL2PL_NETWORK_TYPE_H
#define GDL2PL_NETWORK_TYPE_H

#include "network.h"

#pragma GCC visibility push(hidden)

extern PyTypeObject NetworkType;

#pragma GCC visibility pop

#endif
