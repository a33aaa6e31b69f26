/* ipc_params.c — the choice lists of the IPC parameter table (ct_ipc_params.h). */
#include "contactlab/ct_ipc_params.h"

const char *const ct_ipc_colset_choices[] = {"convergent", "ipc2020", NULL};
const char *const ct_ipc_eew_choices[] = {"dhat2", "area", NULL};
const char *const ct_ipc_quadrature_choices[] = {"face", "vertex", NULL};
const char *const ct_ipc_kin_quad_choices[] = {"one_sided", "two_sided", NULL};
