/* SPDX-License-Identifier: MIT */
/* The one definition of the library's global state (global.h). */
#include "global.h"

struct fdr_state fdr_st FDR_HIDDEN;
