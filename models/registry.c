/* registry.c — every model contactlab knows. A new model is one folder under models/
 * plus one line here. */
#include "contactlab/ct_model.h"

const ct_model_type *const ct_model_registry[] = {
    &ct_model_none,
    NULL,
};
