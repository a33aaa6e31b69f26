/* lcp_contacts.c — the contacts of an lcp_pgs step (Gascón et al. 2010 §3.1): the vertex–half-space,
 * vertex–face (3D) / vertex–segment (2D) and edge–edge (3D) contacts within the margin at xⁿ, at the
 * end of the unconstrained motion or met on the way (ACCD), with their frames (n, t, b), adhesion
 * areas, β and warm-start impulses. Steps 1–2 of lcp_pgs.c's overview. */
#include "lcp_pgs.h"

#include "contactlab/ct_broadphase.h"
#include "contactlab/ct_ccd.h"
#include "contactlab/ct_distance.h"

#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------------------------ */
/* contacts                                                                                     */

static const double *X(const double *x, int dim, int k) { return x + (size_t)dim * (size_t)k; }

static ct_status push_contact(lcp_state *st, const contact *ct)
{
    if (st->m == st->cap) {
        long cap = st->cap ? 2 * st->cap : 256;
        contact *nc = realloc(st->c, (size_t)cap * sizeof *nc);
        if (!nc) return CT_ENOMEM;
        st->c = nc, st->cap = cap;
    }
    st->c[st->m++] = *ct;
    return CT_OK;
}

/* Unit vector and norm of a (dim). */
static double unit(int dim, const double *a, double *n)
{
    double l = 0.0;
    for (int d = 0; d < dim; ++d) l += a[d] * a[d];
    l = sqrt(l);
    for (int d = 0; d < dim; ++d) n[d] = l > 0.0 ? a[d] / l : 0.0;
    return l;
}

/* The outward unit normal of surface face f (3D) / segment f (2D) at x. */
static void prim_normal(const ct_surface *s, int dim, const double *x, int f, double *n)
{
    if (dim == 3) {
        const int *F = s->faces + 3 * f;
        const double *a = X(x, 3, F[0]), *b = X(x, 3, F[1]), *cc = X(x, 3, F[2]);
        const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {cc[0] - a[0], cc[1] - a[1], cc[2] - a[2]};
        const double cr[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
        unit(3, cr, n);
    } else {
        const double *a = X(x, 2, s->edges[2 * f]), *b = X(x, 2, s->edges[2 * f + 1]);
        const double d[2] = {b[1] - a[1], -(b[0] - a[0])};
        unit(2, d, n);
    }
}

/* Distance of vertex v to primitive f (face in 3D, segment in 2D) at x, with the partner's
 * barycentric weights wb (3 or 2) of the closest point. */
static double prim_dist(const ct_surface *s, int dim, const double *x, int v, int f, double *wb)
{
    const double *P = X(x, dim, v);
    double cp[3] = {0, 0, 0};
    if (dim == 3) {
        const int *F = s->faces + 3 * f;
        double b1, b2;
        ct_pt_closest(P, X(x, 3, F[0]), X(x, 3, F[1]), X(x, 3, F[2]), &b1, &b2);
        wb[0] = 1.0 - b1 - b2, wb[1] = b1, wb[2] = b2;
        for (int k = 0; k < 3; ++k)
            for (int d = 0; d < 3; ++d) cp[d] += wb[k] * X(x, 3, F[k])[d];
    } else {
        double t;
        const int e0 = s->edges[2 * f], e1 = s->edges[2 * f + 1];
        ct_pe_closest(2, P, X(x, 2, e0), X(x, 2, e1), &t);
        wb[0] = 1.0 - t, wb[1] = t;
        for (int d = 0; d < 2; ++d) cp[d] = wb[0] * X(x, 2, e0)[d] + wb[1] * X(x, 2, e1)[d];
    }
    double l = 0.0;
    for (int d = 0; d < dim; ++d) l += (P[d] - cp[d]) * (P[d] - cp[d]);
    return sqrt(l);
}

/* Per (vertex, partner participant): the closest primitive of the candidates. */
typedef struct {
    int v, q, f;
    double d;
} best_t;

static int cmp_best(const void *a, const void *b)
{
    const best_t *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    if (x->q != y->q) return x->q < y->q ? -1 : 1;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return (x->f > y->f) - (x->f < y->f);
}

/* A frame (n given): t along the tangential part of vrel if it is not tiny, else any tangent;
 * b = n × t (3D). */
static void make_frame(int dim, const double *vrel, double fr[3][3])
{
    const double *n = fr[0];
    if (dim == 2) {
        fr[1][0] = -n[1], fr[1][1] = n[0], fr[1][2] = 0.0;
        fr[2][0] = fr[2][1] = fr[2][2] = 0.0;
        return;
    }
    double vn = vrel[0] * n[0] + vrel[1] * n[1] + vrel[2] * n[2], vt[3];
    for (int d = 0; d < 3; ++d) vt[d] = vrel[d] - vn * n[d];
    double l = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
    double vmag = sqrt(vrel[0] * vrel[0] + vrel[1] * vrel[1] + vrel[2] * vrel[2]);
    if (!(l > 1e-12 * fmax(vmag, 1e-300)) || !(l > 1e-14)) {
        /* any tangent: the axis least aligned with n, orthogonalized */
        int k = fabs(n[0]) <= fabs(n[1]) ? (fabs(n[0]) <= fabs(n[2]) ? 0 : 2) : (fabs(n[1]) <= fabs(n[2]) ? 1 : 2);
        double e[3] = {0, 0, 0};
        e[k] = 1.0;
        double en = e[0] * n[0] + e[1] * n[1] + e[2] * n[2];
        for (int d = 0; d < 3; ++d) vt[d] = e[d] - en * n[d];
        l = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
    }
    for (int d = 0; d < 3; ++d) fr[1][d] = vt[d] / l;
    fr[2][0] = n[1] * fr[1][2] - n[2] * fr[1][1];
    fr[2][1] = n[2] * fr[1][0] - n[0] * fr[1][2];
    fr[2][2] = n[0] * fr[1][1] - n[1] * fr[1][0];
}

/* The contact's relative velocity Σ w_k vx_k (of the vertex with respect to the partner). */
void ct_lcp_rel_velocity(const contact *ct, int dim, const double *vx, double *vr)
{
    vr[0] = vr[1] = vr[2] = 0.0;
    for (int k = 0; k < ct->nv; ++k)
        for (int d = 0; d < dim; ++d) vr[d] += ct->w[k] * vx[(size_t)ct->v[k] * dim + d];
}

/* The adhesion area of vertex v against participant q for the contact normal n (towards v):
 * its face-aware weight (the area it presents to the partner); between two movable bodies the
 * contacts of both sides carry the interface, each half; against a half-space or a kinematic
 * body the vertex carries it whole; a kinematic vertex carries none. So a flat interface carries
 * its area once at any pair of resolutions. Not the paper's "smaller of the two primitives'
 * averaged areas" (§5.1): with these vertex areas (⅓ of the incident faces, not their mean) a
 * cap by the partner face's area halves the interface on matched meshes (README.md). */
static double contact_area(const lcp_state *st, int v, int pa, int pb, const double *n)
{
    if (st->part_kin[pa]) return 0.0;
    const double a = ct_contact_mesh_vertex_weight(&st->cm, v, n);
    return st->part_kin[pb] ? a : 0.5 * a;
}

/* Whether surface edge e lies inside a flat region at x: its two faces coplanar (normals within
 * 1e-6 of each other). An edge crossing such an edge crosses the plane of its faces, and the
 * vertex contacts of its own end points already keep them in front of that plane: only edges
 * with a crease on both sides need an edge–edge contact. Called with the rest shape: a flat
 * region that bends stays covered by its vertex contacts, while at xⁿ the 1e-6 test makes every
 * edge of a bent region a crease (the peel's lower plate after debonding: 132–198 edge–edge
 * contacts instead of 2, duplicating the vertex contacts). */
static int flat_edge(const ct_contact_mesh *cm, const double *x, int e)
{
    if (cm->ef_ptr[e + 1] - cm->ef_ptr[e] != 2) return 0;
    double n[2][3];
    for (int k = 0; k < 2; ++k) prim_normal(cm->s, 3, x, cm->ef_face[cm->ef_ptr[e] + k], n[k]);
    return n[0][0] * n[1][0] + n[0][1] * n[1][1] + n[0][2] * n[1][2] > 1.0 - 1e-6;
}

/* The distance between segments p0p1 and q0q1 (3D). */
static double seg_dist(const double *p0, const double *p1, const double *q0, const double *q1)
{
    double sa, sb, l = 0.0;
    ct_ee_closest(p0, p1, q0, q1, &sa, &sb);
    for (int d = 0; d < 3; ++d) {
        const double r = p0[d] + sa * (p1[d] - p0[d]) - q0[d] - sb * (q1[d] - q0[d]);
        l += r * r;
    }
    return sqrt(l);
}

/* 3D edge–edge contacts from the swept candidates: edges that cross where no vertex is near (the
 * closest points interior to both edges, the edges not nearly parallel), within the reach at xⁿ or
 * at the end of the unconstrained motion, or meeting on the way (the pair's reach, lcp_coef).
 * Non-penetration only (no
 * adhesion area: the interface is integrated by the vertex contacts); n from b's closest point
 * towards a's at xⁿ. Key ct_pair_key(nx + ea, eb), apart from the vertex contacts' keys. */
static ct_status edge_contacts(lcp_state *st, const ct_step_ctx *c, const double *x0)
{
    const ct_surface *s = c->surf;
    const ct_pair_list *E = &st->cand.ee;
    for (long i = 0; i < E->n; ++i) {
        const int ea = E->ij[2 * i], eb = E->ij[2 * i + 1];
        const int v[4] = {s->edges[2 * ea], s->edges[2 * ea + 1], s->edges[2 * eb], s->edges[2 * eb + 1]};
        double P0[4][3];
        for (int k = 0; k < 4; ++k)
            for (int d = 0; d < 3; ++d) P0[k][d] = x0[(size_t)v[k] * 3 + d];
        if (flat_edge(&st->cm, c->x_rest, ea) || flat_edge(&st->cm, c->x_rest, eb)) continue;
        lcp_coef kp; /* the pair's reach */
        ct_lcp_pair_coef(st, c->vert_part[v[0]], c->vert_part[v[2]], &kp);
        const double reach = kp.reach;
        if (c->vert_part[v[0]] == c->vert_part[v[2]]) { /* self-contact: not between rest neighbours */
            const double *R = c->x_rest;
            if (seg_dist(R + 3 * (size_t)v[0], R + 3 * (size_t)v[1], R + 3 * (size_t)v[2], R + 3 * (size_t)v[3]) <
                2.0 * reach)
                continue;
        }
        double sa, sb;
        ct_ee_closest(P0[0], P0[1], P0[2], P0[3], &sa, &sb);
        const double eps = 1e-9;
        if (!(sa > eps && sa < 1.0 - eps && sb > eps && sb < 1.0 - eps)) continue; /* a vertex is the closest */
        double ua[3], ub[3], cr[3], r[3];
        for (int d = 0; d < 3; ++d) ua[d] = P0[1][d] - P0[0][d], ub[d] = P0[3][d] - P0[2][d];
        cr[0] = ua[1] * ub[2] - ua[2] * ub[1], cr[1] = ua[2] * ub[0] - ua[0] * ub[2], cr[2] = ua[0] * ub[1] - ua[1] * ub[0];
        const double la2 = ua[0] * ua[0] + ua[1] * ua[1] + ua[2] * ua[2], lb2 = ub[0] * ub[0] + ub[1] * ub[1] + ub[2] * ub[2];
        const double c2 = cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2];
        if (!(c2 > 1e-6 * la2 * lb2)) continue; /* nearly parallel: the vertex contacts hold them */
        for (int d = 0; d < 3; ++d) r[d] = P0[0][d] + sa * ua[d] - (P0[2][d] + sb * ub[d]);
        contact ct = {0};
        const double l = unit(3, r, ct.fr[0]);
        if (!(l > 1e-12)) continue; /* touching: no direction */
        {
            /* a's closest point shallowly behind b (closer than the margin, behind the sum of b's
             * faces' normals): the outward direction of b, as for a vertex behind a face
             * (find_contacts); otherwise the two contacts of one crossing get opposite normals
             * and contradict each other */
            double nb[3] = {0, 0, 0}, nfc[3];
            for (int k = st->cm.ef_ptr[eb]; k < st->cm.ef_ptr[eb + 1]; ++k) {
                prim_normal(s, 3, x0, st->cm.ef_face[k], nfc);
                for (int d = 0; d < 3; ++d) nb[d] += nfc[d];
            }
            double nbu[3];
            if (unit(3, nb, nbu) > 1e-12 && r[0] * nbu[0] + r[1] * nbu[1] + r[2] * nbu[2] < 0.0 && l < st->margin)
                for (int d = 0; d < 3; ++d) ct.fr[0][d] = nbu[d];
        }
        if (l >= reach) {
            double xs[12], dxs[12], toi = 1.0;
            for (int k = 0; k < 4; ++k)
                for (int d = 0; d < 3; ++d) xs[3 * k + d] = P0[k][d], dxs[3 * k + d] = st->dx[(size_t)v[k] * 3 + d];
            double d1 = 0.0, q0[3], q1[3], ta, tb;
            double A0[3], A1[3], B0[3], B1[3];
            for (int d = 0; d < 3; ++d)
                A0[d] = xs[d] + dxs[d], A1[d] = xs[3 + d] + dxs[3 + d], B0[d] = xs[6 + d] + dxs[6 + d], B1[d] = xs[9 + d] + dxs[9 + d];
            ct_ee_closest(A0, A1, B0, B1, &ta, &tb);
            for (int d = 0; d < 3; ++d) q0[d] = A0[d] + ta * (A1[d] - A0[d]), q1[d] = B0[d] + tb * (B1[d] - B0[d]);
            for (int d = 0; d < 3; ++d) d1 += (q0[d] - q1[d]) * (q0[d] - q1[d]);
            if (sqrt(d1) >= reach) {
                ct_ccd_opts co = ct_ccd_default_opts();
                co.thickness = 0.5 * st->margin;
                if (!ct_accd(CT_CCD_EE, 3, xs, dxs, 1.0, &co, &toi)) continue;
            }
        }
        ct.key = ct_pair_key(c->nx + ea, eb);
        ct.nv = 4;
        for (int k = 0; k < 4; ++k) ct.v[k] = v[k];
        ct.w[0] = 1.0 - sa, ct.w[1] = sa, ct.w[2] = -(1.0 - sb), ct.w[3] = -sb;
        ct.pa = c->vert_part[v[0]], ct.pb = c->vert_part[v[2]];
        ct.gap = r[0] * ct.fr[0][0] + r[1] * ct.fr[0][1] + r[2] * ct.fr[0][2];
        ct.area = 0.0;
        ct.edge = 1;
        ct.prim = -1;
        ct_status rs = push_contact(st, &ct);
        if (rs != CT_OK) return rs;
    }
    return CT_OK;
}

ct_status ct_lcp_find_contacts(lcp_state *st, const ct_step_ctx *c, const ct_linear_system *sys)
{
    const int dim = c->dim;
    const ct_surface *s = c->surf;
    const double h = c->h, *x0 = c->x_prev, *vx = sys->vx_free;
    const double reach = st->reach; /* the broad phase's: the largest pair reach */
    st->m = 0;
    ct_status rs;
    /* half-spaces */
    for (int i = 0; i < s->nbv; ++i) {
        const int k = s->bverts[i];
        if (!st->movable[k]) continue;
        for (int o = 0; o < c->nobstacles; ++o) {
            const ct_obstacle *ob = &c->obstacles[o];
            double g = 0.0, gv = 0.0;
            for (int d = 0; d < dim; ++d) {
                g += ob->normal[d] * (x0[(size_t)k * dim + d] - ob->point[d]);
                gv += ob->normal[d] * vx[(size_t)k * dim + d];
            }
            lcp_coef kp;
            ct_lcp_pair_coef(st, c->vert_part[k], c->nbodies + o, &kp);
            if (fmin(g, g + h * gv) >= kp.reach) continue;
            contact ct = {0};
            ct.key = ct_pair_key(k, c->nbodies + o);
            ct.nv = 1, ct.v[0] = k, ct.w[0] = 1.0;
            ct.pa = c->vert_part[k], ct.pb = c->nbodies + o;
            for (int d = 0; d < dim; ++d) ct.fr[0][d] = ob->normal[d];
            ct.off = 0.0;
            for (int d = 0; d < dim; ++d) ct.off -= ob->normal[d] * ob->point[d];
            ct.gap = g;
            ct.prim = -1;
            if ((rs = push_contact(st, &ct)) != CT_OK) return rs;
        }
    }
    /* other bodies (and self-contact) through the swept broad phase */
    const size_t nxd = (size_t)c->nx * dim;
    if ((rs = ct_lcp_grow((void **)&st->dx, &st->dx_cap, (long)nxd + 1, sizeof *st->dx)) != CT_OK) return rs;
    if ((rs = ct_lcp_grow((void **)&st->x1, &st->x1_cap, (long)nxd + 1, sizeof *st->x1)) != CT_OK) return rs;
    double *dx = st->dx, *x1 = st->x1;
    for (size_t i = 0; i < nxd; ++i) dx[i] = h * vx[i], x1[i] = x0[i] + dx[i];
    rs = ct_broadphase_ccd(s, x0, dx, st->movable, reach, c->threads, &st->cand);
    const ct_pair_list *L = dim == 3 ? &st->cand.vf : &st->cand.ve;
    best_t *B = rs == CT_OK ? malloc(((size_t)L->n + 1) * sizeof *B) : NULL;
    long nb = 0;
    if (rs == CT_OK && !B) rs = CT_ENOMEM;
    for (long i = 0; rs == CT_OK && i < L->n; ++i) {
        const int v = L->ij[2 * i], f = L->ij[2 * i + 1];
        const int fv0 = dim == 3 ? s->faces[3 * f] : s->edges[2 * f];
        if (!st->movable[v] && st->part_kin[c->vert_part[fv0]]) continue;
        lcp_coef kp; /* the pair's reach (≤ the broad phase's) */
        ct_lcp_pair_coef(st, c->vert_part[v], c->vert_part[fv0], &kp);
        const double rq = kp.reach;
        double wb[3];
        /* self-contact: not between rest neighbours (a vertex and a face of its own body that are
         * this close at rest, e.g. across a 2.5 mm layer of a plate, are kept apart by the
         * elasticity; as contacts they push the vertex through its own body) */
        if (c->vert_part[v] == c->vert_part[fv0] && prim_dist(s, dim, c->x_rest, v, f, wb) < 2.0 * rq) continue;
        const double d0 = prim_dist(s, dim, x0, v, f, wb), d1 = prim_dist(s, dim, x1, v, f, wb);
        double d = fmin(d0, d1);
        if (d0 >= rq) {
            /* not near at xⁿ: do they meet on the way? Ranked after the near ones by the time of
             * impact, then those that only end near, so that a vertex moving through a thin part
             * in one unconstrained step gets the face it reaches first, not the far side's face
             * it is closest to at the end of the motion */
            double xs[12], dxs[12], toi = 1.0;
            const int nvs = dim == 3 ? 4 : 3;
            const int *pv = dim == 3 ? s->faces + 3 * f : s->edges + 2 * f;
            for (int dd = 0; dd < dim; ++dd) xs[dd] = x0[(size_t)v * dim + dd], dxs[dd] = dx[(size_t)v * dim + dd];
            for (int k = 1; k < nvs; ++k)
                for (int dd = 0; dd < dim; ++dd)
                    xs[k * dim + dd] = x0[(size_t)pv[k - 1] * dim + dd], dxs[k * dim + dd] = dx[(size_t)pv[k - 1] * dim + dd];
            ct_ccd_opts co = ct_ccd_default_opts();
            co.thickness = 0.5 * st->margin;
            if (ct_accd(dim == 3 ? CT_CCD_PT : CT_CCD_PE, dim, xs, dxs, 1.0, &co, &toi)) d = rq + toi;
            else if (d1 < rq) d = rq + 1.0 + d1;
            else continue;
        }
        B[nb++] = (best_t){v, c->vert_part[fv0], f, d};
    }
    if (rs == CT_OK && nb) qsort(B, (size_t)nb, sizeof *B, cmp_best);
    for (long i = 0; rs == CT_OK && i < nb; ++i) {
        if (i > 0 && B[i].v == B[i - 1].v && B[i].q == B[i - 1].q) continue; /* the closest only */
        const int v = B[i].v, f = B[i].f;
        const int *pv = dim == 3 ? s->faces + 3 * f : s->edges + 2 * f;
        const int npv = dim == 3 ? 3 : 2;
        double wb[3], r[3] = {0, 0, 0}, nf[3] = {0, 0, 0};
        prim_dist(s, dim, x0, v, f, wb);
        for (int d = 0; d < dim; ++d) {
            r[d] = x0[(size_t)v * dim + d];
            for (int k = 0; k < npv; ++k) r[d] -= wb[k] * x0[(size_t)pv[k] * dim + d];
        }
        prim_normal(s, dim, x0, f, nf);
        contact ct = {0};
        double n[3] = {0, 0, 0};
        const double l = unit(dim, r, n);
        double rn = 0.0;
        for (int d = 0; d < dim; ++d) rn += r[d] * nf[d];
        /* on the face or shallowly behind it (by less than the margin): its outward normal. A
         * vertex further behind the face's plane is not in it (it is beyond a thin part, or a
         * rest neighbour inside its own body): the direction from the closest point keeps it on
         * its side, as an unsigned distance does */
        if (!(l > 1e-12) || (rn < 0.0 && -rn < st->margin))
            for (int d = 0; d < dim; ++d) n[d] = nf[d];
        for (int d = 0; d < dim; ++d) ct.fr[0][d] = n[d];
        ct.key = ct_pair_key(v, B[i].q);
        ct.nv = 1 + npv, ct.v[0] = v, ct.w[0] = 1.0;
        for (int k = 0; k < npv; ++k) ct.v[1 + k] = pv[k], ct.w[1 + k] = -wb[k];
        ct.pa = c->vert_part[v], ct.pb = B[i].q;
        ct.gap = 0.0;
        for (int d = 0; d < dim; ++d) ct.gap += n[d] * r[d];
        ct.prim = f;
        if ((rs = push_contact(st, &ct)) != CT_OK) break;
    }
    free(B);
    if (rs == CT_OK && dim == 3) rs = edge_contacts(st, c, x0);
    if (rs != CT_OK) return rs;
    /* frames, the pair's coefficients, areas, β */
    for (long i = 0; i < st->m; ++i) {
        contact *ct = &st->c[i];
        double vr[3];
        ct_lcp_rel_velocity(ct, dim, vx, vr);
        make_frame(dim, vr, ct->fr);
        ct_lcp_pair_coef(st, ct->pa, ct->pb, &ct->k);
        ct->area = ct->k.c > 0.0 && !ct->edge ? contact_area(st, ct->v[0], ct->pa, ct->pb, ct->fr[0]) : 0.0;
        const pair_rec *R = ct_pair_map_find(&st->pairs, ct->key);
        ct->beta = R ? R->beta : (!st->started ? st->beta0 : 0.0);
        for (int r = 0; r < 3; ++r) {
            ct->lam[r] = 0.0;
            if (R && st->warm)
                for (int d = 0; d < dim; ++d) ct->lam[r] += R->lam[d] * ct->fr[r][d];
        }
    }
    return CT_OK;
}

/* The gaps of contact ct at x_next: *g_lin with the step's frame (linear: the constraint's gap),
 * and the returned true gap, for a vertex–face (segment) contact the distance to the same face,
 * negative when the vertex is behind the face's plane with its closest point inside the face
 * (penetration, which the linearization misses when the vertex slides along a face that turns). */
double ct_lcp_end_gap(const contact *ct, const ct_step_ctx *c, const double *x_next, double *g_lin)
{
    const int dim = c->dim;
    double g = ct->off;
    for (int k = 0; k < ct->nv; ++k)
        for (int d = 0; d < dim; ++d) g += ct->w[k] * ct->fr[0][d] * x_next[(size_t)ct->v[k] * dim + d];
    *g_lin = g;
    if (ct->prim < 0) return g;
    double wb[3], nf[3], r[3];
    const int npv = dim == 3 ? 3 : 2;
    const int *pv = dim == 3 ? c->surf->faces + 3 * ct->prim : c->surf->edges + 2 * ct->prim;
    const double dist = prim_dist(c->surf, dim, x_next, ct->v[0], ct->prim, wb);
    prim_normal(c->surf, dim, x_next, ct->prim, nf);
    double rn = 0.0;
    for (int d = 0; d < dim; ++d) {
        r[d] = x_next[(size_t)ct->v[0] * dim + d];
        for (int k = 0; k < npv; ++k) r[d] -= wb[k] * x_next[(size_t)pv[k] * dim + d];
        rn += r[d] * nf[d];
    }
    int inside = 1;
    for (int k = 0; k < npv; ++k) inside &= wb[k] > 1e-12;
    return rn < 0.0 && inside ? -dist : dist;
}
