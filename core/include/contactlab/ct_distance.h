/* ct_distance.h — squared distances between contact primitives, with closest-feature
 * classification, gradients and Hessians (DESIGN §3).
 *
 * Primitives: point–point (PP, 2D and 3D), point–edge (PE, 2D and 3D), point–triangle
 * (PT, 3D), edge–edge (EE, 3D). Every distance is the *squared* Euclidean distance d²
 * between the closest points of the two primitives. Classification picks the pair of
 * closest features (e.g. a point's closest point on a triangle lies on edge t1–t2); the
 * value, gradient and Hessian are then those of the distance between those features,
 * which is smooth (C∞) inside each classification region and C¹ across region borders.
 *
 * Layout of the stencil vectors: the gradient g has n*dim entries in the order of the
 * arguments (PT: p, t0, t1, t2; EE: a0, a1, b0, b1), each vertex's components contiguous;
 * the Hessian H is (n*dim)² row-major in the same order. g and H may be NULL.
 *
 * The edge–edge mollifier (IPC 2020 §4.3): for nearly parallel edges the EE distance is
 * not smooth, so the EE barrier is multiplied by m(c) with c = |(a1-a0)×(b1-b0)|²,
 * m(c) = -c²/ε² + 2c/ε for c < ε, 1 otherwise, ε = 1e-3·|a1r-a0r|²·|b1r-b0r|² from the
 * rest positions.
 * layer: contact */
#ifndef CT_DISTANCE_H
#define CT_DISTANCE_H

/* Closest features of point p and edge (e0, e1). */
typedef enum {
    CT_PE_P_E0, /* closest point is e0 */
    CT_PE_P_E1, /* closest point is e1 */
    CT_PE_P_E   /* closest point interior to the edge (point–line distance) */
} ct_pe_type;

/* Closest features of point p and triangle (t0, t1, t2). Edge k joins t_k and t_(k+1)%3. */
typedef enum {
    CT_PT_P_T0,
    CT_PT_P_T1,
    CT_PT_P_T2,
    CT_PT_P_E0, /* edge t0–t1 */
    CT_PT_P_E1, /* edge t1–t2 */
    CT_PT_P_E2, /* edge t2–t0 */
    CT_PT_P_T   /* interior (point–plane distance) */
} ct_pt_type;

/* Closest features of edges a = (a0, a1) and b = (b0, b1). */
typedef enum {
    CT_EE_A0_B0,
    CT_EE_A0_B1,
    CT_EE_A1_B0,
    CT_EE_A1_B1,
    CT_EE_A_B0, /* b0 against the interior of a */
    CT_EE_A_B1,
    CT_EE_A0_B, /* a0 against the interior of b */
    CT_EE_A1_B,
    CT_EE_A_B   /* interior–interior (line–line distance) */
} ct_ee_type;

/* ---- classification ---- */
ct_pe_type ct_pe_classify(int dim, const double *p, const double *e0, const double *e1);
/* A degenerate triangle (|e1×e2|² <= 1e-20·|e1|²|e2|², e.g. collinear or coincident vertices)
 * is never CT_PT_P_T: the closest of its edge / vertex types is returned. Zero-length edges
 * give the point types. Ties between equally near features are broken deterministically. */
ct_pt_type ct_pt_classify(const double *p, const double *t0, const double *t1, const double *t2);
/* Nearly parallel edges (|cross|² < 1e-20·|a|²|b|²) are classified by their end points
 * (one of the PP / PE types), never CT_EE_A_B. */
ct_ee_type ct_ee_classify(const double *a0, const double *a1, const double *b0, const double *b1);

/* ---- squared distance for a given type, with optional gradient and Hessian ----
 * The type fixes the features: the result is the distance between those features (e.g.
 * CT_PT_P_T is the point–plane distance even if p projects outside the triangle), exact
 * derivatives, H exactly symmetric (not PSD-projected). An interior type on geometry where it
 * is undefined (CT_PE_P_E on a zero-length edge, CT_PT_P_T on a degenerate triangle, CT_EE_A_B
 * on parallel edges, same 1e-20 test as the classification) falls back to the nearest
 * vertex / edge type, so the result is always finite. */
double ct_pp_d2(int dim, const double *a, const double *b, double *g, double *H);
double ct_pe_d2(int dim, const double *p, const double *e0, const double *e1, ct_pe_type t,
                double *g, double *H);
double ct_pt_d2(const double *p, const double *t0, const double *t1, const double *t2,
                ct_pt_type t, double *g, double *H);
double ct_ee_d2(const double *a0, const double *a1, const double *b0, const double *b1,
                ct_ee_type t, double *g, double *H);

/* ---- classification and squared distance in one call ----
 * The type ct_xx_classify returns, and in *d2 the value of ct_xx_d2 for that type without
 * derivatives, bitwise identical (the same operations), at the cost of the classification alone.
 * ct_ee_classify_d2 also stores c = |(a1-a0)×(b1-b0)|² in *c2 (bitwise ct_ee_cross2) if c2 != NULL,
 * and, if pe != NULL, the point–edge d² of a0–b, a1–b, b0–a, b1–a in pe[0..3] (bitwise
 * ct_pe_classify_d2(3, a0, b0, b1, ...) and so on). */
ct_pe_type ct_pe_classify_d2(int dim, const double *p, const double *e0, const double *e1, double *d2);
ct_pt_type ct_pt_classify_d2(const double *p, const double *t0, const double *t1, const double *t2,
                             double *d2);
ct_ee_type ct_ee_classify_d2(const double *a0, const double *a1, const double *b0, const double *b1,
                             double *d2, double *c2, double *pe);

/* ---- closest-point coordinates (for friction tangent bases and relative velocities) ----
 * PE: *s in [0,1], closest point e0 + s (e1 - e0).
 * PT: (b1, b2), closest point t0 + b1 (t1 - t0) + b2 (t2 - t0).
 * EE: (s, r), closest points a0 + s (a1 - a0) and b0 + r (b1 - b0).
 * All clamped to the primitive (consistent with the classification). */
void ct_pe_closest(int dim, const double *p, const double *e0, const double *e1, double *s);
void ct_pt_closest(const double *p, const double *t0, const double *t1, const double *t2,
                   double *b1, double *b2);
void ct_ee_closest(const double *a0, const double *a1, const double *b0, const double *b1,
                   double *s, double *r);

/* ---- edge–edge mollifier ---- */
double ct_ee_mollifier_eps(const double *a0r, const double *a1r, const double *b0r,
                           const double *b1r);
/* c = |(a1-a0)×(b1-b0)|² with gradient (12) and Hessian (144), g/H may be NULL. */
double ct_ee_cross2(const double *a0, const double *a1, const double *b0, const double *b1,
                    double *g, double *H);
/* The same c and gradient, with the Hessian as its 3×3 blocks in (ea, eb) = (a1 − a0, b1 − b0):
 * B[p][q] (row-major) is ∂²c/∂e_p∂e_q, and ct_ee_cross2's H is (±B[vi/2][vj/2]) for vertices vi, vj
 * of (a0, a1, b0, b1), the sign + when vi, vj are both start or both end vertices. */
double ct_ee_cross2_blocks(const double *a0, const double *a1, const double *b0, const double *b1,
                           double *g, double B[2][2][9]);
/* m(c) for threshold eps, with dm/dc and d²m/dc² (may be NULL). */
double ct_ee_mollifier(double c, double eps, double *dm, double *d2m);

#endif
