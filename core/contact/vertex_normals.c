/* vertex_normals.c — unit vertex normals from one-rings, their exact derivatives and the chain
 * from the IMLS stencil z = (x, p, n) to vertex positions (see ct_vertex_normals.h; design note
 * imls_design.md §1.1, §2.6). */
#include "contactlab/ct_vertex_normals.h"

#include "contactlab/ct_parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ct_vnormal_topo_free(ct_vnormal_topo *t)
{
    if (!t) return;
    free(t->ring_ptr);
    free(t->ring);
    free(t->cell_ptr);
    free(t->cell);
    memset(t, 0, sizeof *t);
}

ct_status ct_vnormal_topo_init(ct_vnormal_topo *t, int dim, int nv, int ncell, const int *cells)
{
    memset(t, 0, sizeof *t);
    if ((dim != 2 && dim != 3) || nv < 0 || ncell < 0 || (ncell > 0 && !cells)) return CT_EINPUT;
    const int c = dim; /* vertices per cell */
    for (int f = 0; f < ncell; ++f) {
        for (int a = 0; a < c; ++a) {
            int u = cells[c * f + a];
            if (u < 0 || u >= nv) return CT_EINPUT;
            for (int b = 0; b < a; ++b)
                if (cells[c * f + b] == u) return CT_EINPUT;
        }
    }
    t->dim = dim;
    t->nv = nv;
    t->cell_ptr = calloc((size_t)nv + 1, sizeof *t->cell_ptr);
    t->ring_ptr = calloc((size_t)nv + 1, sizeof *t->ring_ptr);
    int *vc_ptr = calloc((size_t)nv + 1, sizeof *vc_ptr); /* incident cells per vertex */
    int *vc = malloc(((size_t)ncell * (size_t)c + 1) * sizeof *vc);
    int *fill = calloc((size_t)nv + 1, sizeof *fill);
    if (!t->cell_ptr || !t->ring_ptr || !vc_ptr || !vc || !fill) goto nomem;
    for (int f = 0; f < ncell; ++f)
        for (int a = 0; a < c; ++a) vc_ptr[cells[c * f + a] + 1]++;
    for (int v = 0; v < nv; ++v) vc_ptr[v + 1] += vc_ptr[v];
    for (int f = 0; f < ncell; ++f)
        for (int a = 0; a < c; ++a) {
            int u = cells[c * f + a];
            vc[vc_ptr[u] + fill[u]++] = f;
        }
    /* ring sizes (upper bound first: 1 + (c − 1)·cells, then the exact count) */
    size_t ring_cap = 0;
    for (int v = 0; v < nv; ++v) ring_cap += 1 + (size_t)(c - 1) * (size_t)(vc_ptr[v + 1] - vc_ptr[v]);
    t->ring = malloc((ring_cap + 1) * sizeof *t->ring);
    t->cell = malloc(((size_t)ncell * (size_t)c * 2 + 1) * sizeof *t->cell);
    if (!t->ring || !t->cell) goto nomem;
    int nr = 0, nc = 0;
    t->max_ring = 0;
    for (int v = 0; v < nv; ++v) {
        t->ring_ptr[v] = nr;
        t->cell_ptr[v] = nc;
        int *ring = t->ring + nr;
        int m = 0;
        ring[m++] = v;
        for (int e = vc_ptr[v]; e < vc_ptr[v + 1]; ++e) {
            const int *cf = cells + c * vc[e];
            int pos = 0;
            while (cf[pos] != v) ++pos;
            int w[2];
            if (dim == 3) {
                w[0] = cf[(pos + 1) % 3];
                w[1] = cf[(pos + 2) % 3];
            } else {
                w[0] = cf[0];
                w[1] = cf[1];
            }
            for (int s = 0; s < 2; ++s) {
                int j = 0;
                while (j < m && ring[j] != w[s]) ++j;
                if (j == m) ring[m++] = w[s];
                t->cell[2 * nc + s] = j;
            }
            ++nc;
        }
        nr += m;
        if (m > t->max_ring) t->max_ring = m;
    }
    t->ring_ptr[nv] = nr;
    t->cell_ptr[nv] = nc;
    free(vc_ptr);
    free(vc);
    free(fill);
    return CT_OK;
nomem:
    free(vc_ptr);
    free(vc);
    free(fill);
    ct_vnormal_topo_free(t);
    return CT_ENOMEM;
}

ct_status ct_vnormal_topo_from_surface(ct_vnormal_topo *t, const ct_surface *s)
{
    if (!s) return CT_EINPUT;
    if (s->dim == 3) return ct_vnormal_topo_init(t, 3, s->nv, s->nf, s->faces);
    return ct_vnormal_topo_init(t, s->dim, s->nv, s->ned, s->edges);
}

const int *ct_vnormal_ring(const ct_vnormal_topo *t, int v, int *m)
{
    *m = t->ring_ptr[v + 1] - t->ring_ptr[v];
    return t->ring + t->ring_ptr[v];
}

/* ---- one vertex ---- */

static void cross3(const double *a, const double *b, double *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* dN(:, slot) += s·[a]ₓ (3 × 3 block in a row-major 3 × ld matrix) */
static void add_skew(double *dN, int ld, int slot, double s, const double *a)
{
    double *B = dN + 3 * slot;
    B[0 * ld + 1] += -s * a[2];
    B[0 * ld + 2] += s * a[1];
    B[1 * ld + 0] += s * a[2];
    B[1 * ld + 2] += -s * a[0];
    B[2 * ld + 0] += -s * a[1];
    B[2 * ld + 1] += s * a[0];
}

/* N (dim) of vertex v and, if dN is given, ∂N/∂ring (dim × m·dim, row-major). Returns the
 * degeneracy scale Σ |cell normal|. */
static double raw_normal(const ct_vnormal_topo *t, const double *x, int v, double *N, double *dN)
{
    const int d = t->dim;
    const int *ring = t->ring + t->ring_ptr[v];
    const int m = t->ring_ptr[v + 1] - t->ring_ptr[v];
    const int ld = m * d;
    double scale = 0.0;
    for (int a = 0; a < d; ++a) N[a] = 0.0;
    if (dN) memset(dN, 0, (size_t)d * (size_t)ld * sizeof *dN);
    const double *xv = x + (size_t)d * (size_t)v;
    for (int e = t->cell_ptr[v]; e < t->cell_ptr[v + 1]; ++e) {
        const int sb = t->cell[2 * e], sc = t->cell[2 * e + 1];
        const double *xb = x + (size_t)d * (size_t)ring[sb];
        const double *xc = x + (size_t)d * (size_t)ring[sc];
        if (d == 3) {
            double p[3], q[3], f[3], cb[3];
            for (int a = 0; a < 3; ++a) {
                p[a] = xb[a] - xv[a];
                q[a] = xc[a] - xv[a];
                cb[a] = xc[a] - xb[a];
            }
            cross3(p, q, f);
            for (int a = 0; a < 3; ++a) N[a] += 0.5 * f[a];
            scale += 0.5 * sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
            if (dN) {
                add_skew(dN, ld, sb, -0.5, q);
                add_skew(dN, ld, sc, 0.5, p);
                add_skew(dN, ld, 0, 0.5, cb);
            }
        } else { /* segment (a, b) = ring slots (sb, sc): N += J (x_b − x_a), J = [[0, 1], [−1, 0]] */
            const double dx = xc[0] - xb[0], dy = xc[1] - xb[1];
            N[0] += dy;
            N[1] += -dx;
            scale += sqrt(dx * dx + dy * dy);
            if (dN) {
                dN[0 * ld + 2 * sc + 1] += 1.0;
                dN[1 * ld + 2 * sc + 0] += -1.0;
                dN[0 * ld + 2 * sb + 1] -= 1.0;
                dN[1 * ld + 2 * sb + 0] -= -1.0;
            }
        }
    }
    return scale;
}

/* n, dn = (P/ρ) dN in place, and the Hessian of aᵀn (if hess) from dN (before the in-place step). */
static ct_status vertex_normal(const ct_vnormal_topo *t, const double *x, int v, double *n, double *dn,
                               const double *av, double *hess)
{
    const int d = t->dim;
    const int m = t->ring_ptr[v + 1] - t->ring_ptr[v];
    const int ld = m * d;
    double N[3];
    const double scale = raw_normal(t, x, v, N, dn);
    double rho = 0.0;
    for (int a = 0; a < d; ++a) rho += N[a] * N[a];
    rho = sqrt(rho);
    if (!(rho > 1e-12 * scale) || !isfinite(rho)) {
        for (int a = 0; a < d; ++a) n[a] = 0.0;
        return CT_EINVERTED;
    }
    for (int a = 0; a < d; ++a) n[a] = N[a] / rho;
    double P[9];
    for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) P[a * d + b] = (a == b ? 1.0 : 0.0) - n[a] * n[b];
    if (hess) {
        const int *cells = t->cell + 2 * t->cell_ptr[v];
        const int ncell = t->cell_ptr[v + 1] - t->cell_ptr[v];
        double Pa[3], an = 0.0, c[3], M[9];
        for (int a = 0; a < d; ++a) {
            Pa[a] = 0.0;
            for (int b = 0; b < d; ++b) Pa[a] += P[a * d + b] * av[b];
            an += av[a] * n[a];
            c[a] = Pa[a] / rho;
        }
        const double r2 = 1.0 / (rho * rho);
        for (int a = 0; a < d; ++a)
            for (int b = 0; b < d; ++b) M[a * d + b] = -r2 * (n[a] * Pa[b] + Pa[a] * n[b] + an * P[a * d + b]);
        /* dNᵀ M dN, column by column */
        for (int j = 0; j < ld; ++j) {
            double w[3];
            for (int a = 0; a < d; ++a) {
                w[a] = 0.0;
                for (int b = 0; b < d; ++b) w[a] += M[a * d + b] * dn[b * ld + j];
            }
            for (int i = 0; i <= j; ++i) {
                double s = 0.0;
                for (int a = 0; a < d; ++a) s += dn[a * ld + i] * w[a];
                hess[(size_t)i * ld + j] = s;
            }
        }
        for (int j = 0; j < ld; ++j)
            for (int i = j + 1; i < ld; ++i) hess[(size_t)i * ld + j] = hess[(size_t)j * ld + i];
        if (d == 3) { /* Σ c_m ∇²N_m: per face B = −½[c]ₓ on (b, c) */
            double B[9] = {0.0, 0.5 * c[2], -0.5 * c[1], -0.5 * c[2], 0.0, 0.5 * c[0],
                           0.5 * c[1], -0.5 * c[0], 0.0};
            for (int e = 0; e < ncell; ++e) {
                const int sb = cells[2 * e], sc = cells[2 * e + 1];
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b) {
                        const double Bab = B[a * 3 + b]; /* B (row a, col b); Bᵀ(b, a) = Bab */
                        hess[(size_t)(3 * sb + a) * ld + 3 * sc + b] += Bab;
                        hess[(size_t)(3 * sc + b) * ld + 3 * sb + a] += Bab;
                        hess[(size_t)(3 * sb + a) * ld + b] -= Bab;      /* (b, v): −B */
                        hess[(size_t)(a)*ld + 3 * sc + b] -= Bab;        /* (v, c): −B */
                        hess[(size_t)(3 * sc + b) * ld + a] -= Bab;      /* (c, v): −Bᵀ */
                        hess[(size_t)(b)*ld + 3 * sb + a] -= Bab;        /* (v, b): −Bᵀ */
                    }
            }
        }
    }
    if (dn) { /* dn = (P/ρ) dN, column by column */
        for (int j = 0; j < ld; ++j) {
            double col[3];
            for (int a = 0; a < d; ++a) col[a] = dn[a * ld + j];
            for (int a = 0; a < d; ++a) {
                double s = 0.0;
                for (int b = 0; b < d; ++b) s += P[a * d + b] * col[b];
                dn[a * ld + j] = s / rho;
            }
        }
    }
    return CT_OK;
}

ct_status ct_vnormal_eval(const ct_vnormal_topo *t, const double *x, int v, double *n, double *dn,
                          const double *a, double *hess)
{
    if (!t || !x || !n || v < 0 || v >= t->nv) return CT_EINPUT;
    if ((a == NULL) != (hess == NULL) || (hess && !dn)) return CT_EINPUT;
    return vertex_normal(t, x, v, n, dn, a, hess);
}

int ct_vnormal_all(const ct_vnormal_topo *t, const double *x, double *nrm)
{
    int bad = 0;
    for (int v = 0; v < t->nv; ++v) {
        double *n = nrm + (size_t)t->dim * (size_t)v;
        if (t->cell_ptr[v + 1] == t->cell_ptr[v]) {
            for (int a = 0; a < t->dim; ++a) n[a] = 0.0;
            continue;
        }
        if (vertex_normal(t, x, v, n, NULL, NULL, NULL) != CT_OK) ++bad;
    }
    return bad;
}

/* ---- the chain ---- */

static int find(const int *verts, int n, int u)
{
    for (int i = 0; i < n; ++i)
        if (verts[i] == u) return i;
    return -1;
}

/* the stencil's candidate list number `pass`: 0 {q}, 1 the samples, 2 + i the ring of sample i */
static const int *candidates(const ct_vnormal_topo *t, const int *q, int k, const int *samples, int pass,
                             int *cnt)
{
    if (pass == 0) {
        *cnt = 1;
        return q;
    }
    if (pass == 1) {
        *cnt = k;
        return samples;
    }
    return ct_vnormal_ring(t, samples[pass - 2], cnt);
}

int ct_vnormal_stencil(const ct_vnormal_topo *t, int q, int k, const int *samples, int *verts, int cap)
{
    if (!t || q < 0 || q >= t->nv || k < 0 || (k > 0 && !samples) || cap < 0 || (cap > 0 && !verts)) return -1;
    for (int i = 0; i < k; ++i)
        if (samples[i] < 0 || samples[i] >= t->nv) return -1;
    /* a candidate is new if it is not in the list so far; once the list outgrew cap (a sizing
     * call), if it does not occur earlier in the candidate sequence (a quadratic scan) */
    int n = 0;
    for (int pass = 0; pass < 2 + k; ++pass) {
        int cnt;
        const int *cand = candidates(t, &q, k, samples, pass, &cnt);
        for (int c = 0; c < cnt; ++c) {
            const int u = cand[c];
            int dup = 0;
            if (n <= cap) {
                dup = find(verts, n, u) >= 0;
            } else {
                for (int p2 = 0; p2 <= pass && !dup; ++p2) {
                    int cnt2;
                    const int *cand2 = candidates(t, &q, k, samples, p2, &cnt2);
                    const int lim = p2 == pass ? c : cnt2;
                    for (int c2 = 0; c2 < lim && !dup; ++c2) dup = cand2[c2] == u;
                }
            }
            if (dup) continue;
            if (n < cap) verts[n] = u;
            ++n;
        }
    }
    return n;
}

size_t ct_vnormal_chain_work_size(const ct_vnormal_topo *t, int k, int n)
{
    const size_t d = (size_t)t->dim, p = d * (1 + 2 * (size_t)k), N = d * (size_t)n;
    const size_t mr = (size_t)t->max_ring;
    return p * N                     /* T = Hz J */
           + d * mr * d                  /* one sample's ∂n/∂ring */
           + mr * d * mr * d             /* one ring Hessian */
           + (size_t)k * mr * d * d      /* the ring blocks D_ij, contiguous */
           + (size_t)k * mr + (size_t)k  /* local indices (stored as doubles) */
           + 1;
}

/* ---- the cache ---- */

void ct_vnormal_cache_init(ct_vnormal_cache *c)
{
    memset(c, 0, sizeof *c);
    c->level = -1;
}

void ct_vnormal_cache_free(ct_vnormal_cache *c)
{
    free(c->slot), free(c->vert), free(c->nrm), free(c->dn), free(c->dNr), free(c->rho);
    ct_vnormal_cache_init(c);
}

void ct_vnormal_cache_clear(ct_vnormal_cache *c)
{
    for (int i = 0; i < c->n; ++i) c->slot[c->vert[i]] = -1;
    c->n = 0;
    c->level = -1;
}

const double *ct_vnormal_cache_normal(const ct_vnormal_cache *c, int v)
{
    if (!c || v < 0 || v >= c->nv || !c->slot || c->slot[v] < 0) return NULL;
    return c->nrm + (size_t)c->slot[v] * (size_t)c->dim;
}

/* one entry at `level`: the normal, its Jacobian, the raw normal's Jacobian and ρ; each Jacobian stored
 * compactly at the start of its slot (the ring's m·d columns, as vertex_normal writes them) */
static ct_status cache_entry(const ct_vnormal_cache *c, const ct_vnormal_topo *t, const double *x, int e, int level)
{
    const int d = t->dim, v = c->vert[e];
    double *n = c->nrm + (size_t)e * d;
    if (level < 1) return vertex_normal(t, x, v, n, NULL, NULL, NULL);
    double *dn = c->dn + (size_t)e * d * c->stride;
    ct_status st = vertex_normal(t, x, v, n, dn, NULL, NULL);
    if (st != CT_OK || level < 2) return st;
    double N[3];
    raw_normal(t, x, v, N, c->dNr + (size_t)e * d * c->stride);
    double r2 = 0.0;
    for (int a = 0; a < d; ++a) r2 += N[a] * N[a];
    c->rho[e] = sqrt(r2);
    return CT_OK;
}

ct_status ct_vnormal_cache_quad(const ct_vnormal_cache *c, int v, const double *A, const double *a, double *K,
                                double *cf, double *Pr, const double **dN)
{
    if (!c || v < 0 || v >= c->nv || !c->slot || c->slot[v] < 0 || c->level < 2 || !A || !a || !K || !cf)
        return CT_EINPUT;
    const int d = c->dim, e = c->slot[v];
    const double *n = c->nrm + (size_t)e * d, rho = c->rho[e], r2 = 1.0 / (rho * rho);
    double P[9], Pa[3], PA[9], an = 0.0;
    for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) P[i * d + j] = (i == j ? 1.0 : 0.0) - n[i] * n[j];
    for (int i = 0; i < d; ++i) {
        Pa[i] = 0.0;
        for (int j = 0; j < d; ++j) Pa[i] += P[i * d + j] * a[j];
        an += a[i] * n[i];
        cf[i] = Pa[i] / rho;
    }
    for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) {
            double s = 0.0;
            for (int l = 0; l < d; ++l) s += P[i * d + l] * A[l * d + j];
            PA[i * d + j] = s;
        }
    for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) {
            double s = 0.0;
            for (int l = 0; l < d; ++l) s += PA[i * d + l] * P[l * d + j];
            K[i * d + j] = r2 * (s - (n[i] * Pa[j] + Pa[i] * n[j] + an * P[i * d + j]));
        }
    if (Pr)
        for (int i = 0; i < d * d; ++i) Pr[i] = P[i] / rho;
    if (dN) *dN = c->dNr + (size_t)e * d * c->stride;
    return CT_OK;
}

ct_status ct_vnormal_cache_fill(ct_vnormal_cache *c, const ct_vnormal_topo *t, const double *x, int nverts,
                                const int *verts, int level, int threads)
{
    if (!c || !t || !x || nverts < 0 || (nverts > 0 && !verts) || level < 0 || level > 2) return CT_EINPUT;
    const int d = t->dim;
    if (c->nv != t->nv || c->dim != d) { /* (re)shape for this topology */
        ct_vnormal_cache_free(c);
        c->slot = malloc(((size_t)t->nv + 1) * sizeof *c->slot);
        if (!c->slot) return CT_ENOMEM;
        for (int v = 0; v < t->nv; ++v) c->slot[v] = -1;
        c->nv = t->nv, c->dim = d, c->stride = t->max_ring * d;
    }
    const int old_n = c->n, lev = c->level > level ? c->level : level;
    int all = c->level >= 0 && level > c->level; /* the entries there need the higher level */
    for (int i = 0; i < nverts; ++i) {
        const int v = verts[i];
        if (v < 0 || v >= t->nv) return CT_EINPUT;
        if (c->slot[v] >= 0) continue;
        if (c->n == c->cap) {
            const int cap = c->cap ? 2 * c->cap : 256;
            int *nvx = realloc(c->vert, (size_t)cap * sizeof *nvx);
            if (!nvx) return CT_ENOMEM;
            c->vert = nvx;
            double *nn = realloc(c->nrm, (size_t)cap * d * sizeof *nn);
            if (!nn) return CT_ENOMEM;
            c->nrm = nn;
            c->cap = cap;
            free(c->dn), free(c->dNr), free(c->rho); /* reallocated below at the new capacity: every entry again */
            c->dn = c->dNr = c->rho = NULL;
            all = 1;
        }
        c->slot[v] = c->n;
        c->vert[c->n++] = v;
    }
    const size_t st1 = (size_t)d * c->stride;
    if (lev >= 1 && !c->dn) {
        c->dn = malloc(((size_t)c->cap * st1 + 1) * sizeof *c->dn);
        if (!c->dn) return CT_ENOMEM;
        all = 1;
    }
    if (lev >= 2 && !c->dNr) {
        c->dNr = malloc(((size_t)c->cap * st1 + 1) * sizeof *c->dNr);
        c->rho = malloc(((size_t)c->cap + 1) * sizeof *c->rho);
        if (!c->dNr || !c->rho) return CT_ENOMEM;
        all = 1;
    }
    c->level = lev;
    const int from = all ? 0 : old_n;
    int status = CT_OK;
#pragma omp parallel num_threads(ct_threads(threads))
    {
        int sl = CT_OK;
#pragma omp for schedule(dynamic, 16)
        for (int e = from; e < c->n; ++e) {
            ct_status s = sl == CT_OK ? cache_entry(c, t, x, e, lev) : CT_OK;
            if (s != CT_OK) sl = s;
        }
        if (sl != CT_OK) {
#pragma omp atomic write
            status = sl;
        }
    }
    return (ct_status)status;
}

ct_status ct_vnormal_chain(const ct_vnormal_topo *t, const double *x, int q, int k, const int *samples,
                           int n, const int *verts, const double *gz, const double *Hz, double *work,
                           size_t work_len, double *gX, double *HX)
{
    return ct_vnormal_chain_cached(t, NULL, x, q, k, samples, n, verts, gz, Hz, work, work_len, gX, HX);
}

ct_status ct_vnormal_chain_cached(const ct_vnormal_topo *t, const ct_vnormal_cache *cache, const double *x, int q,
                                  int k, const int *samples, int n, const int *verts, const double *gz,
                                  const double *Hz, double *work, size_t work_len, double *gX, double *HX)
{
    if (!t || !x || k < 0 || n < 1 || !verts || !gz || !gX || (k > 0 && !samples) || !work) return CT_EINPUT;
    if ((Hz == NULL) != (HX == NULL)) return CT_EINPUT;
    if (work_len < ct_vnormal_chain_work_size(t, k, n) || q < 0 || q >= t->nv) return CT_EINPUT;
    for (int i = 0; i < k; ++i)
        if (samples[i] < 0 || samples[i] >= t->nv) return CT_EINPUT;
    const int d = t->dim;
    const int p = d * (1 + 2 * k), NX = d * n;
    const int mr = t->max_ring;
    double *T = work;
    double *DN = T + (size_t)p * (size_t)NX;
    double *RH = DN + (size_t)(d * mr * d);
    double *DB = RH + (size_t)(mr * d) * (size_t)(mr * d); /* ring blocks D_ij (d × d each) */
    double *LOC = DB + (size_t)k * mr * (size_t)(d * d);   /* local index of ring_i[j] */
    double *LS = LOC + (size_t)k * mr;                     /* local index of s_i */
    const int lq = find(verts, n, q);
    if (lq < 0) return CT_EINPUT;

    memset(gX, 0, (size_t)NX * sizeof *gX);
    if (HX) memset(HX, 0, (size_t)NX * (size_t)NX * sizeof *HX);

    /* per sample: the normal's Jacobian (kept as contiguous d × d ring blocks D_ij with the ring
     * vertices' local indices), its part of g_X, and its ∇²(μ_iᵀn_i) into H_X */
    for (int a = 0; a < d; ++a) gX[d * lq + a] += gz[a];
    for (int i = 0; i < k; ++i) {
        const int s = samples[i];
        int m;
        const int *ring = ct_vnormal_ring(t, s, &m);
        const int ld = m * d;
        double nn[3];
        const double *mu = gz + d * (1 + k + i);
        const int ce = !HX && cache && cache->slot && cache->nv == t->nv && cache->level >= 1 ? cache->slot[s] : -1;
        if (ce >= 0) { /* the cached Jacobian (stride → ld) */
            memcpy(DN, cache->dn + (size_t)ce * d * cache->stride, (size_t)d * ld * sizeof *DN);
        } else {
            ct_status st = vertex_normal(t, x, s, nn, DN, HX ? mu : NULL, HX ? RH : NULL);
            if (st != CT_OK) return st;
        }
        const int ls = find(verts, n, s);
        if (ls < 0) return CT_EINPUT;
        LS[i] = (double)ls;
        for (int a = 0; a < d; ++a) gX[d * ls + a] += gz[d * (1 + i) + a];
        double *L = LOC + (size_t)i * mr;
        for (int j = 0; j < m; ++j) {
            const int lj = find(verts, n, ring[j]);
            if (lj < 0) return CT_EINPUT;
            L[j] = (double)lj;
            double *D = DB + ((size_t)i * mr + j) * (size_t)(d * d);
            for (int a = 0; a < d; ++a)
                for (int b = 0; b < d; ++b) D[a * d + b] = DN[a * ld + d * j + b];
            for (int b = 0; b < d; ++b) {
                double acc = 0.0;
                for (int a = 0; a < d; ++a) acc += D[a * d + b] * mu[a];
                gX[d * lj + b] += acc;
            }
        }
        if (HX)
            for (int j = 0; j < m; ++j) {
                const int lj = (int)L[j];
                for (int l = 0; l < m; ++l) {
                    const int ll = (int)L[l];
                    if (ll < lj) continue; /* block upper triangle (mirrored at the end) */
                    for (int a = 0; a < d; ++a) {
                        const double *src = RH + (size_t)(d * j + a) * ld + d * l;
                        double *dst = HX + (size_t)(d * lj + a) * NX + d * ll;
                        for (int b = 0; b < d; ++b) dst[b] += src[b];
                    }
                }
            }
    }
    if (!HX) return CT_OK;

    /* T = Hz J (p × NX) in one pass over the rows of Hz: identity blocks for x and the p_i,
     * the D_ij for the n_i */
    memset(T, 0, (size_t)p * (size_t)NX * sizeof *T);
    for (int r = 0; r < p; ++r) {
        const double *hrow = Hz + (size_t)r * p;
        double *trow = T + (size_t)r * NX;
        for (int a = 0; a < d; ++a) trow[d * lq + a] += hrow[a];
        for (int i = 0; i < k; ++i) {
            const int ls = (int)LS[i];
            for (int a = 0; a < d; ++a) trow[d * ls + a] += hrow[d * (1 + i) + a];
        }
        for (int i = 0; i < k; ++i) {
            const int m = t->ring_ptr[samples[i] + 1] - t->ring_ptr[samples[i]];
            const double *h = hrow + d * (1 + k + i);
            const double *D = DB + (size_t)i * mr * (size_t)(d * d);
            const double *L = LOC + (size_t)i * mr;
            if (d == 3) {
                const double h0 = h[0], h1 = h[1], h2 = h[2];
                for (int j = 0; j < m; ++j, D += 9) {
                    double *tr = trow + 3 * (int)L[j];
                    tr[0] += h0 * D[0] + h1 * D[3] + h2 * D[6];
                    tr[1] += h0 * D[1] + h1 * D[4] + h2 * D[7];
                    tr[2] += h0 * D[2] + h1 * D[5] + h2 * D[8];
                }
            } else {
                const double h0 = h[0], h1 = h[1];
                for (int j = 0; j < m; ++j, D += 4) {
                    double *tr = trow + 2 * (int)L[j];
                    tr[0] += h0 * D[0] + h1 * D[2];
                    tr[1] += h0 * D[1] + h1 * D[3];
                }
            }
        }
    }
    /* H_X += Jᵀ T, the block upper triangle only (row block u, columns from u's block on) */
    for (int a = 0; a < d; ++a) {
        const double *tr = T + (size_t)a * NX;
        double *hr = HX + (size_t)(d * lq + a) * NX;
        for (int c = d * lq; c < NX; ++c) hr[c] += tr[c];
    }
    for (int i = 0; i < k; ++i) {
        const int ls = (int)LS[i];
        for (int a = 0; a < d; ++a) {
            const double *tr = T + (size_t)(d * (1 + i) + a) * NX;
            double *hr = HX + (size_t)(d * ls + a) * NX;
            for (int c = d * ls; c < NX; ++c) hr[c] += tr[c];
        }
    }
    for (int i = 0; i < k; ++i) {
        const int m = t->ring_ptr[samples[i] + 1] - t->ring_ptr[samples[i]];
        const int row = d * (1 + k + i);
        const double *t0 = T + (size_t)row * NX, *t1 = t0 + NX, *t2 = d == 3 ? t1 + NX : t1;
        for (int j = 0; j < m; ++j) {
            const int lj = (int)LOC[(size_t)i * mr + j];
            const double *D = DB + ((size_t)i * mr + j) * (size_t)(d * d);
            for (int b = 0; b < d; ++b) {
                double *hr = HX + (size_t)(d * lj + b) * NX;
                const double w0 = D[b], w1 = D[d + b];
                const double w2 = d == 3 ? D[2 * d + b] : 0.0;
                for (int c = d * lj; c < NX; ++c) hr[c] += w0 * t0[c] + w1 * t1[c] + w2 * t2[c];
            }
        }
    }
    /* the lower triangle from the upper one (exact symmetry) */
    for (int r = 0; r < NX; ++r)
        for (int c = r + 1; c < NX; ++c) HX[(size_t)c * NX + r] = HX[(size_t)r * NX + c];
    return CT_OK;
}
