/* a kernel reaching into core: the layering test must reject it */
#include "core/internal.h"
