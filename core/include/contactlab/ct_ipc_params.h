/* ct_ipc_params.h — the parameters of the IPC barrier, friction and broad phase that every
 * IPC-based model exposes in its "contact" object (ipc / ipc_adhesion, rcc_ipc): one list, so the
 * names, units, ranges and documentation cannot drift apart between models. A model's table
 * starts with CT_IPC_PARAM_SPECS (positional, in the order of the CT_IPC_P_* indices below) and
 * continues with its own entries from index CT_IPC_NPARAMS.
 * layer: contact */
#ifndef CT_IPC_PARAMS_H
#define CT_IPC_PARAMS_H

#include <math.h>

#include "ct_params.h"

enum {
    CT_IPC_P_DHAT, CT_IPC_P_KAPPA, CT_IPC_P_MU, CT_IPC_P_EPS_V, CT_IPC_P_COLSET, CT_IPC_P_EEW, CT_IPC_P_CCD_S,
    CT_IPC_P_KAPPA_SCALE, CT_IPC_P_BP_MARGIN, CT_IPC_P_QUADRATURE, CT_IPC_P_KIN_QUAD, CT_IPC_NPARAMS
};

/* the choices of collision_set, ee_weight, quadrature and kinematic_quadrature
 * (core/contact/ipc_params.c); quadrature's index is the ct_quadrature_kind (0 face, 1 vertex),
 * kinematic_quadrature's the ct_kinematic_sides (0 one_sided, 1 two_sided) */
extern const char *const ct_ipc_colset_choices[];
extern const char *const ct_ipc_eew_choices[];
extern const char *const ct_ipc_quadrature_choices[];
extern const char *const ct_ipc_kin_quad_choices[];

/* the initializers of entries CT_IPC_P_DHAT .. CT_IPC_P_KIN_QUAD */
#define CT_IPC_PARAM_SPECS \
    {"dhat", CT_PARAM_REAL, 1e-3, "m", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL, \
                "barrier activation distance d̂", 0}, \
    {"kappa", CT_PARAM_REAL, 0, "Pa", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL, \
                 "barrier stiffness κ (a pressure); auto: kappa_scale × the smaller Young's modulus, " \
                 "doubled while contacts keep closing below 1e-9·bbox (IPC adaptive update)", \
                 1}, \
    {"mu", CT_PARAM_REAL, 0, "", 0, INFINITY, 0, NULL, "friction coefficient μ", 0}, \
    {"eps_v", CT_PARAM_REAL, 1e-3, "m/s", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL, \
                 "friction slip-velocity threshold ε_v (static ↔ dynamic transition width)", 0}, \
    {"collision_set", CT_PARAM_CHOICE, 0, "", 0, 0, 0, ct_ipc_colset_choices, \
                  "convergent: max approximation with vertex quadrature (Li et al. 2023); " \
                  "ipc2020: sum over all primitive pairs", \
                  0}, \
    {"ee_weight", CT_PARAM_CHOICE, 0, "", 0, 0, 0, ct_ipc_eew_choices, \
               "edge-edge weight of the convergent set, times the edge's crease s_e: dhat2 (point contact, " \
               "d̂²) or area (w_e/2, the split of ipc-toolkit; the flat part (1 − s_e) to the end points)", \
               0}, \
    {"ccd_s", CT_PARAM_REAL, 0.1, "", 0, 1, CT_PARAM_MIN_EXCL | CT_PARAM_MAX_EXCL, NULL, \
                 "additive CCD stops when the distance has shrunk to this fraction", 0}, \
    {"kappa_scale", CT_PARAM_REAL, 0.1, "", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL, \
                       "auto κ = kappa_scale × min Young's modulus of the bodies", 0}, \
    {"bp_margin", CT_PARAM_REAL, 1.0, "", 0, INFINITY, 0, NULL, \
                     "proximity candidates are queried within (1 + bp_margin)·d̂ and reused until a surface " \
                     "vertex moves bp_margin·d̂/2; max_step filters them by swept boxes while the sweep stays within " \
                     "(1 + bp_margin)·d̂/2 (0: new queries every time; same results either way)", \
                     0}, \
    {"quadrature", CT_PARAM_CHOICE, 0, "", 0, 0, 0, ct_ipc_quadrature_choices, \
                  "contact weight of a vertex: face: the area it presents to the partner, sum of 1/3 of its " \
                  "faces' rest areas times max(0, -n_f.n), lagged at the step start (a flat face in full contact " \
                  "carries its true area); vertex: 1/3 of all its faces (rim vertices also count side faces)", \
                  0}, \
    {"kinematic_quadrature", CT_PARAM_CHOICE, 0, "", 0, 0, 0, ct_ipc_kin_quad_choices, \
                            "contact with a kinematic body (all vertices prescribed): one_sided: integrated from the " \
                            "movable side, like a half-space (its vertices keep 1e-3 of their weight, so its corners " \
                            "cannot pass through); two_sided: the symmetric average of both sides' vertex quadratures", \
                            0}

#endif
