/* core may include kernels */
#include "kernels/exec.h"
