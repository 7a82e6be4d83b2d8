/* libhurray: the C reference implementation of the Hurray tensor interchange
 * format. Umbrella header. The format is specified in docs/spec/. */
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

#endif
