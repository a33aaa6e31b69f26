/* model_none.c — the built-in model "none": no contact at all. Every op is NULL, so the
 * core's defaults apply (no energy, no forces, full steps). It lets the core run and be
 * tested on its own, and is the reference for "what contact changes". */
#include "contactlab/ct_model.h"

static const ct_param_spec none_params[] = {{NULL}};

const ct_model_type ct_model_none = {
    .name = "none",
    .summary = "no contact: bodies pass through each other and through obstacles",
    .family = CT_FAMILY_ENERGY,
    .guarantees = 0,
    .state_size = 0,
    .params = none_params,
};
