/* registry.c — every model contactlab knows. A new model is one folder under models/
 * plus one line here (and its extern declaration). */
#include "contactlab/ct_model.h"

extern const ct_model_type ct_model_ipc_adhesion;
extern const ct_model_type ct_model_ipc;
extern const ct_model_type ct_model_rcc_ipc;
extern const ct_model_type ct_model_lcp_pgs;
extern const ct_model_type ct_model_imls;
/* test models (tests/models/): they exercise the core, they are not contact models for studies */
extern const ct_model_type ct_model_lcp_halfspace;

const ct_model_type *const ct_model_registry[] = {
    &ct_model_none,
    &ct_model_ipc_adhesion,
    &ct_model_ipc,
    &ct_model_rcc_ipc,
    &ct_model_lcp_pgs,
    &ct_model_imls,
    &ct_model_lcp_halfspace,
    NULL,
};
