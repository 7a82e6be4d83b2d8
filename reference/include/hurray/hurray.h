/* libhurray: the C reference implementation of the Hurray tensor interchange
 * format. Umbrella header. The format is specified in docs/spec/.
 *
 * Lifecycle: one family per kind of owning type.
 *  - A type whose struct is public and which the caller places (stack, heap,
 *    inside its own struct): _init before use, _reset to free what it owns
 *    (it is then initialised again, ready for reuse), _move to hand what it
 *    owns to another (the source is left initialised). struct
 *    hurray_descriptor, struct hurray_kv.
 *  - An opaque handle the library allocates: _create_* to make it, _destroy
 *    to free it (NULL-tolerant). struct hurray_file (the file reader), struct
 *    hurray_stream_reader, struct hurray_stream_writer. Other verbs on a
 *    handle never free it (hurray_stream_reader_close releases the transport
 *    only; hurray_stream_writer_finish ends the stream).
 *  - struct hurray_item: a tree of heap nodes that readers create and hand
 *    over whole; its struct is public for reading and for callers that build
 *    trees of their own, and a tree a reader made is freed with
 *    hurray_item_destroy (the _destroy of a handle).
 * Raw memory keeps alloc/free pairs (hurray_item_buffer_alloc/_free). */
#ifndef HURRAY_H
#define HURRAY_H

#include "hurray/export.h"
#include "hurray/version.h"
#include "hurray/status.h"
#include "hurray/alloc.h"
#include "hurray/limit.h"
#include "hurray/dtype.h"
#include "hurray/device.h"
#include "hurray/layout.h"
#include "hurray/quant.h"
#include "hurray/sections.h"
#include "hurray/descriptor.h"
#include "hurray/item.h"
#include "hurray/composite.h"
#include "hurray/stream.h"
#include "hurray/kv.h"
#include "hurray/file.h"
#include "hurray/ffi.h"

#endif
