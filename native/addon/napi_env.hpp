// The one way the addon includes node-addon-api. A worker thread may be terminated while a call is
// in flight or while the module is being registered; then no JS can run, and node-addon-api must
// drop the exception it cannot throw instead of turning it into a C++ exception that ends the
// process. (Belongs in the build's defines too; here it cannot be forgotten by any file.)
#pragma once

#ifndef NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS
#define NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS
#endif
#include <napi.h>
