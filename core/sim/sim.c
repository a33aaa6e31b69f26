/* sim.c — building a simulation from a scene: meshes, embedding, masses, elasticity,
 * Dirichlet data, loads and the contact model. The time step itself is in step.c. */
#include "contactlab/ct_sim.h"
#include "contactlab/ct_intersect.h"

#include <limits.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/assemble.h"
#include "sim/motion.h"
#include "sim/select.h"

/* ---------- meshes from specs ---------- */

static ct_status load_mesh(ct_mesh *m, const ct_mesh_spec *ms, int dim, const char *scene, ct_diag *diag)
{
    ct_status st;
    ct_mesh_init(m);
    switch (ms->source) {
    case CT_MESH_FILE: st = ct_mesh_read(m, ms->path, dim, diag); break;
    case CT_MESH_BOX: st = ct_mesh_box(m, ms->origin, ms->size, ms->cells); break;
    case CT_MESH_RECT: st = ct_mesh_rect(m, ms->origin, ms->size, ms->cells[0], ms->cells[1]); break;
    case CT_MESH_POLYLINE: st = ct_mesh_polyline(m, ms->points, ms->npoints, ms->closed); break;
    case CT_MESH_ARC:
        st = ct_mesh_arc(m, ms->center, ms->radius, ms->angle0, ms->angle1, ms->segments);
        break;
    default: st = CT_EINPUT;
    }
    if (st != CT_OK) {
        if (ms->source != CT_MESH_FILE)
            ct_diag_add(diag, st, "%s: %s: cannot generate the mesh (%s)", scene,
                        ms->json_path ? ms->json_path : "mesh", ct_status_str(st));
        else
            ct_diag_add(diag, st, "%s: %s/file: cannot load '%s' (see above)", scene,
                        ms->json_path ? ms->json_path : "mesh", ms->path);
        return st;
    }
    if (m->dim != dim)
        return ct_diag_add(diag, CT_EINPUT, "%s: %s: mesh is %dD but the scene is %dD", scene,
                           ms->json_path ? ms->json_path : "mesh", m->dim, dim);
    int any_tf = ms->rot_angle != 0.0;
    for (int c = 0; c < dim; ++c) any_tf |= ms->scale[c] != 1.0 || ms->translate[c] != 0.0;
    if (any_tf) {
        for (int v = 0; v < m->nv; ++v) {
            double *p = m->X + (size_t)v * dim;
            for (int c = 0; c < dim; ++c) p[c] *= ms->scale[c];
            if (ms->rot_angle != 0.0) ct_rotate_point(dim, ms->rot_axis, ms->rot_angle, p);
            for (int c = 0; c < dim; ++c) p[c] += ms->translate[c];
        }
    }
    char what[1024];
    if (ms->source == CT_MESH_FILE)
        snprintf(what, sizeof what, "%s (%s: %s/file)", ms->path, scene, ms->json_path ? ms->json_path : "mesh");
    else
        snprintf(what, sizeof what, "%s: %s", scene, ms->json_path ? ms->json_path : "mesh");
    /* coordinates whose volumes and distances would overflow or lose every digit */
    for (size_t i = 0; i < (size_t)m->nv * (size_t)dim; ++i)
        if (!(fabs(m->X[i]) <= CT_SCENE_MAX_COORD))
            return ct_diag_add(diag, CT_EINPUT, "%s: vertex %zu has a coordinate %g m: beyond %g m of the origin "
                               "(after the transform)", what, i / (size_t)dim, m->X[i], (double)CT_SCENE_MAX_COORD);
    return ct_mesh_validate(m, what, diag);
}

/* ---------- creation ---------- */

static ct_status alloc_d(double **p, size_t n)
{
    *p = calloc(n + 1, sizeof **p);
    return *p ? CT_OK : CT_ENOMEM;
}

static ct_status build_bodies(ct_sim *s, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    int dim = s->dim;
    ct_status worst = CT_OK;
    for (int b = 0; b < s->nb; ++b) {
        const ct_body_spec *bs = &sc->bodies[b];
        ct_body *B = &s->bodies[b];
        B->name = bs->name;
        ct_status st = load_mesh(&B->mesh, &bs->mesh, dim, sc->path, diag);
        if (st == CT_OK && bs->dofs == CT_DOFS_EMBEDDED)
            st = load_mesh(&B->coarse, &bs->coarse, dim, sc->path, diag);
        if (st != CT_OK) {
            worst = st;
            continue;
        }
        B->embedded = bs->dofs == CT_DOFS_EMBEDDED;
        B->kinematic = B->mesh.ne == 0 || bs->kinematic;
        if (B->mesh.ne == 0 && bs->has_material)
            ct_diag_add(diag, CT_OK, "%s: /bodies/%d: surface-only mesh: material ignored", sc->path, b);
        if (B->embedded && B->kinematic) {
            worst = ct_diag_add(diag, CT_EINPUT, "%s: /bodies/%d/dofs: a kinematic body cannot be embedded",
                                sc->path, b);
            continue;
        }
        if (!B->kinematic && !bs->has_material) {
            worst = ct_diag_add(diag, CT_EINPUT, "%s: /bodies/%d: missing required key \"material\"", sc->path, b);
            continue;
        }
        st = ct_surface_build(&B->surf, &B->mesh, diag);
        if (st != CT_OK)
            worst = ct_diag_add(diag, st, "%s: %s: cannot extract the boundary of body '%s'", sc->path,
                                bs->mesh.json_path ? bs->mesh.json_path : "mesh", B->name);
    }
    return worst;
}

/* Lumped volumes of the vertices of a volumetric mesh: 1/(dim+1) of incident elements. */
static void lumped_volumes(const ct_mesh *m, double *vol)
{
    int dim = m->dim;
    for (int e = 0; e < m->ne; ++e) {
        double v = ct_mesh_elem_volume(m, m->X, e) / (dim + 1);
        for (int a = 0; a <= dim; ++a) vol[m->elem[e * (dim + 1) + a]] += v;
    }
}

static ct_status build_state(ct_sim *s, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    int dim = s->dim;
    ct_status st;
    ct_dofs_init(&s->dofs, dim);
    ct_elastic_init(&s->el);
    /* counts and offsets */
    for (int b = 0; b < s->nb; ++b) {
        ct_body *B = &s->bodies[b];
        B->x_off = s->nx;
        B->nx = B->mesh.nv;
        B->q_off = s->nq;
        B->nq = B->embedded ? B->coarse.nv : B->mesh.nv;
        s->nx += B->nx;
        s->nq += B->nq;
    }
    s->ndof = s->nq * dim;
    size_t nxd = (size_t)s->nx * dim, nqd = (size_t)s->ndof;
    if (alloc_d(&s->X, nxd) || alloc_d(&s->Q, nqd) || alloc_d(&s->x, nxd) || alloc_d(&s->x_prev, nxd) ||
        alloc_d(&s->vx, nxd) || alloc_d(&s->q, nqd) || alloc_d(&s->vq, nqd) || alloc_d(&s->q_prev, nqd) ||
        alloc_d(&s->q_tilde, nqd) || alloc_d(&s->mass_x, (size_t)s->nx) || alloc_d(&s->vol_x, (size_t)s->nx) ||
        alloc_d(&s->f_ext, nxd) || alloc_d(&s->g, nqd) || alloc_d(&s->p, nqd) || alloc_d(&s->pq, nqd) ||
        alloc_d(&s->px, nxd) || alloc_d(&s->gx, nxd) || alloc_d(&s->rhs, nqd) || alloc_d(&s->q_trial, nqd) ||
        alloc_d(&s->x_trial, nxd) || alloc_d(&s->g_trial, nqd) || alloc_d(&s->r_contact, nqd) ||
        alloc_d(&s->q_soc, nqd) || alloc_d(&s->dq_soc, nqd) || alloc_d(&s->x_soc, nxd))
        return ct_diag_add(diag, CT_ENOMEM, "out of memory for %d vertices", s->nx);
    s->fixed = calloc(nqd + 1, 1);
    s->qv_dirichlet = malloc(((size_t)s->nq + 1) * sizeof *s->qv_dirichlet);
    s->qv_body = malloc(((size_t)s->nq + 1) * sizeof *s->qv_body);
    s->xv_body = malloc(((size_t)s->nx + 1) * sizeof *s->xv_body);
    s->xv_kinematic = calloc((size_t)s->nx + 1, 1);
    if (!s->fixed || !s->qv_dirichlet || !s->qv_body || !s->xv_body || !s->xv_kinematic)
        return ct_diag_add(diag, CT_ENOMEM, "out of memory");
    for (int v = 0; v < s->nq; ++v) s->qv_dirichlet[v] = -1;

    for (int b = 0; b < s->nb; ++b) {
        ct_body *B = &s->bodies[b];
        const ct_body_spec *bs = &sc->bodies[b];
        memcpy(s->X + (size_t)B->x_off * dim, B->mesh.X, (size_t)B->nx * dim * sizeof(double));
        for (int k = 0; k < B->nx; ++k) {
            s->xv_body[B->x_off + k] = b;
            s->xv_kinematic[B->x_off + k] = (unsigned char)B->kinematic;
        }
        for (int k = 0; k < B->nq; ++k) s->qv_body[B->q_off + k] = b;
        /* lumped fine volumes and masses */
        lumped_volumes(&B->mesh, s->vol_x + B->x_off);
        if (!B->kinematic)
            for (int k = 0; k < B->nx; ++k) s->mass_x[B->x_off + k] = bs->material.density * s->vol_x[B->x_off + k];
        char what[256];
        snprintf(what, sizeof what, "%s: /bodies/%d (%s)", sc->path, b, B->name);
        if (B->embedded) {
            memcpy(s->Q + (size_t)B->q_off * dim, B->coarse.X, (size_t)B->nq * dim * sizeof(double));
            double *volg = calloc((size_t)B->coarse.ne + 1, sizeof *volg);
            if (!volg) return CT_ENOMEM;
            st = ct_dofs_add_embedded(&s->dofs, B->mesh.X, B->nx, &B->mesh, &B->coarse, volg, bs->outside_tol, what,
                                      diag);
            if (st == CT_OK)
                st = ct_elastic_add(&s->el, dim, B->coarse.ne, B->coarse.elem, B->coarse.X, B->q_off, volg,
                                    &bs->material, diag);
            free(volg);
        } else {
            memcpy(s->Q + (size_t)B->q_off * dim, B->mesh.X, (size_t)B->nq * dim * sizeof(double));
            st = ct_dofs_add_full(&s->dofs, B->nx);
            if (st == CT_OK && !B->kinematic && B->mesh.ne > 0) {
                /* the same volume formula as the embedded path, so that an embedding with
                 * J = I reproduces this body bit for bit */
                double *vol = malloc(((size_t)B->mesh.ne + 1) * sizeof *vol);
                if (!vol) return CT_ENOMEM;
                for (int e = 0; e < B->mesh.ne; ++e) vol[e] = ct_mesh_elem_volume(&B->mesh, B->mesh.X, e);
                st = ct_elastic_add(&s->el, dim, B->mesh.ne, B->mesh.elem, B->mesh.X, B->q_off, vol,
                                    &bs->material, diag);
                free(vol);
            }
        }
        if (st != CT_OK) return st;
    }
    s->elastic_scale = ct_elastic_term_scale(&s->el);
    /* M_q = J^T M J at vertex level */
    ct_triplets_init(&s->Mq);
    for (int k = 0; k < s->nx; ++k)
        for (int t1 = s->dofs.jptr[k]; t1 < s->dofs.jptr[k + 1]; ++t1)
            for (int t2 = s->dofs.jptr[k]; t2 < s->dofs.jptr[k + 1]; ++t2)
                if (ct_triplets_add(&s->Mq, s->dofs.jcol[t1], s->dofs.jcol[t2],
                                    s->dofs.jw[t1] * s->mass_x[k] * s->dofs.jw[t2]) != CT_OK)
                    return CT_ENOMEM;
    ct_csc_init(&s->Mq_csc);
    st = ct_csc_from_triplets(&s->Mq_csc, s->nq, s->nq, &s->Mq, 0);
    if (st != CT_OK) return ct_diag_add(diag, st, "cannot assemble the mass matrix");
    return CT_OK;
}

/* The probes' selections, checked as those of fixed and loads. */
static ct_status check_probe_selections(ct_sim *s, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    for (int i = 0; i < sc->nprobes; ++i) {
        const ct_probe_spec *p = &sc->probes[i];
        if (p->kind == CT_PROBE_FORCE || p->kind == CT_PROBE_ENERGY || p->kind == CT_PROBE_SPRING_FORCE) continue;
        int *idx = NULL, n = 0;
        char where[64];
        snprintf(where, sizeof where, "/probes/%d/select", i);
        ct_status st = ct_sim_select_checked(s, &p->sel, p->kind == CT_PROBE_REACTION, where, &idx, &n, diag);
        int held = 0; /* a reaction is that of the Dirichlet conditions: 0 on free vertices */
        for (int k = 0; st == CT_OK && p->kind == CT_PROBE_REACTION && k < n; ++k)
            held |= s->fixed[(size_t)idx[k] * s->dim];
        free(idx);
        if (st != CT_OK) return st;
        if (p->kind == CT_PROBE_REACTION && n > 0 && !held)
            return ct_diag_add(diag, CT_EINPUT, "%s: %s: none of the %d selected vertices is held (\"fixed\"), so "
                               "their reaction is 0 at every step", sc->path, where, n);
    }
    return CT_OK;
}

/* Two fixed entries prescribe the same motion: both none, or the same segments. */
static int same_motion(const ct_dirichlet *a, const ct_dirichlet *b)
{
    return a->nseg == b->nseg && (a->nseg == 0 || memcmp(a->seg, b->seg, (size_t)a->nseg * sizeof *a->seg) == 0);
}

static ct_status build_dirichlet(ct_sim *s, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    int dim = s->dim;
    for (int b = 0; b < s->nb; ++b) {
        const ct_body_spec *bs = &sc->bodies[b];
        ct_body *B = &s->bodies[b];
        for (int f = 0; f < bs->nfixed; ++f) {
            ct_selector sel = bs->fixed[f].sel;
            sel.body = b;
            int *idx = NULL, n = 0;
            char where[64];
            snprintf(where, sizeof where, "/bodies/%d/fixed/%d/select", b, f);
            ct_status st = ct_sim_select_checked(s, &sel, 1, where, &idx, &n, diag);
            if (st != CT_OK) return st;
            for (int i = 0; i < n; ++i) {
                const int prev = s->qv_dirichlet[idx[i]];
                if (prev >= 0 && !same_motion(&bs->fixed[prev], &bs->fixed[f])) {
                    const int v = idx[i] - B->q_off;
                    free(idx);
                    return ct_diag_add(diag, CT_EINPUT, "%s: %s: vertex %d is also held by /bodies/%d/fixed/%d, with "
                                       "another motion: a vertex has one prescribed motion", sc->path, where, v, b,
                                       prev);
                }
                s->qv_dirichlet[idx[i]] = f;
                for (int c = 0; c < dim; ++c) s->fixed[(size_t)idx[i] * dim + c] = 1;
            }
            free(idx);
        }
        if (B->kinematic) {
            for (int v = 0; v < B->nq; ++v)
                if (s->qv_dirichlet[B->q_off + v] < 0)
                    return ct_diag_add(diag, CT_EINPUT,
                                       "%s: /bodies/%d: a kinematic (surface-only) body must be fixed "
                                       "entirely (add \"fixed\": {\"select\": \"all\"})", sc->path, b);
        }
    }
    /* a free q-vertex without mass would make the Newton matrix singular */
    for (int a = 0; a < s->nq; ++a) {
        if (s->fixed[(size_t)a * dim]) continue;
        long k = ct_csc_find(&s->Mq_csc, a, a);
        if (k < 0 || !(s->Mq_csc.val[k] > 0.0)) {
            int b = s->qv_body[a];
            return ct_diag_add(diag, CT_EINPUT,
                               "%s: /bodies/%d (%s): q-vertex %d carries no mass (no fine vertex embedded "
                               "near it); make the coarse mesh tighter", sc->path, b, s->bodies[b].name,
                               a - s->bodies[b].q_off);
        }
    }
    return CT_OK;
}

/* The springs' end vertices: "vertex" in range of the body's x-mesh, or a "select" that picks
 * exactly one of its vertices. */
static ct_status build_springs(ct_sim *s, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    s->nsprings = sc->nsprings;
    if (!(s->spring_v = calloc(2 * (size_t)sc->nsprings + 1, sizeof *s->spring_v)))
        return ct_diag_add(diag, CT_ENOMEM, "out of memory");
    ct_status worst = CT_OK;
    for (int i = 0; i < sc->nsprings; ++i)
        for (int e = 0; e < 2; ++e) {
            const ct_spring_end *E = &sc->springs[i].end[e];
            const char *ab = e ? "b" : "a";
            if (E->body < 0 || E->body >= s->nb) {
                worst = ct_diag_add(diag, CT_EINPUT, "%s: /springs/%d/%s/body: no such body", sc->path, i, ab);
                continue;
            }
            const ct_body *B = &s->bodies[E->body];
            if (E->vertex >= 0) {
                if (E->vertex >= B->nx) {
                    worst = ct_diag_add(diag, CT_EINPUT, "%s: /springs/%d/%s/vertex: body \"%s\" has %d vertices "
                                        "(0..%d), no vertex %d", sc->path, i, ab, B->name, B->nx, B->nx - 1, E->vertex);
                    continue;
                }
                s->spring_v[2 * i + e] = B->x_off + E->vertex;
                continue;
            }
            ct_selector sel = E->sel;
            sel.body = E->body;
            int *idx = NULL, n = 0;
            if (ct_sim_select(s, &sel, 0, &idx, &n) != CT_OK) return ct_diag_add(diag, CT_ENOMEM, "out of memory");
            if (n != 1)
                worst = ct_diag_add(diag, CT_EINPUT, "%s: /springs/%d/%s/select: selects %d vertices of body \"%s\"; "
                                    "a spring end is one vertex", sc->path, i, ab, n, B->name);
            else
                s->spring_v[2 * i + e] = idx[0];
            free(idx);
        }
    for (int i = 0; worst == CT_OK && i < sc->nsprings; ++i)
        if (s->spring_v[2 * i] == s->spring_v[2 * i + 1])
            worst = ct_diag_add(diag, CT_EINPUT, "%s: /springs/%d: both ends are vertex %d of body \"%s\"", sc->path, i,
                                s->spring_v[2 * i] - s->bodies[s->xv_body[s->spring_v[2 * i]]].x_off,
                                s->bodies[s->xv_body[s->spring_v[2 * i]]].name);
    return worst;
}

/* "area" load weights of the selected vertices (sel: mask over the body's vertices): the area of
 * the selected surface, each boundary face (2D: segment) whose vertices are all selected giving a
 * third (2D: a half) of its rest area to each of them, so that a load on a face is a uniform
 * traction on that face alone (a rim vertex does not also count its share of the side faces).
 * Returns 0 when no face is fully selected (isolated vertices, a line of them): the caller then
 * falls back to the vertices' whole surface areas (vert_area). */
static int selected_face_areas(const ct_surface *S, const unsigned char *sel, double *w)
{
    int found = 0;
    if (S->dim == 3) {
        for (int f = 0; f < S->nf; ++f) {
            const int *t = S->faces + 3 * (size_t)f;
            if (!sel[t[0]] || !sel[t[1]] || !sel[t[2]]) continue;
            for (int k = 0; k < 3; ++k) w[t[k]] += S->face_area[f] / 3.0;
            found = 1;
        }
    } else {
        for (int e = 0; e < S->ned; ++e) {
            const int *g = S->edges + 2 * (size_t)e;
            if (!sel[g[0]] || !sel[g[1]]) continue;
            for (int k = 0; k < 2; ++k) w[g[k]] += 0.5 * S->edge_area[e];
            found = 1;
        }
    }
    return found;
}

static ct_status build_loads(ct_sim *s, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    int dim = s->dim, nload = 0;
    size_t total = 0;
    for (int b = 0; b < s->nb; ++b) nload += sc->bodies[b].nloads;
    s->load_off = calloc((size_t)nload + 2, sizeof *s->load_off);
    if (!s->load_off) return CT_ENOMEM;
    /* first pass to size, second to fill: weights are stored per x-vertex of the body */
    for (int b = 0, l = 0; b < s->nb; ++b)
        for (int j = 0; j < sc->bodies[b].nloads; ++j, ++l) {
            s->load_off[l] = (int)total;
            total += (size_t)s->bodies[b].nx;
        }
    s->load_off[nload] = (int)total;
    s->load_w = calloc(total + 1, sizeof *s->load_w);
    if (!s->load_w) return CT_ENOMEM;
    for (int b = 0, l = 0; b < s->nb; ++b) {
        const ct_body *B = &s->bodies[b];
        /* surface area per vertex, for "area" weights */
        for (int j = 0; j < sc->bodies[b].nloads; ++j, ++l) {
            const ct_load *ld = &sc->bodies[b].loads[j];
            ct_selector sel = ld->sel;
            sel.body = b;
            int *idx = NULL, n = 0;
            char where[64];
            snprintf(where, sizeof where, "/bodies/%d/loads/%d/select", b, j);
            ct_status st = ct_sim_select_checked(s, &sel, 0, where, &idx, &n, diag);
            if (st != CT_OK) return st;
            double *w = s->load_w + s->load_off[l], sum = 0.0, len = ld->length;
            if (ld->dist == CT_LOAD_LINEAR && !(len > 0)) {
                len = 0.0;
                for (int i = 0; i < n; ++i)
                    len = fmax(len, fabs(s->X[(size_t)idx[i] * dim + ld->axis] - ld->center));
                if (len == 0.0) len = 1.0;
            }
            int faces = 0; /* "area": the selected faces' areas are in w (selected_face_areas) */
            if (ld->weight == CT_WEIGHT_AREA && B->surf.vert_area) {
                unsigned char *mask = calloc((size_t)B->nx + 1, 1);
                if (!mask) {
                    free(idx);
                    return CT_ENOMEM;
                }
                for (int i = 0; i < n; ++i) mask[idx[i] - B->x_off] = 1;
                faces = selected_face_areas(&B->surf, mask, w);
                free(mask);
            }
            for (int i = 0; i < n; ++i) {
                int k = idx[i], kl = k - B->x_off;
                double wi = ld->weight == CT_WEIGHT_COUNT ? 1.0
                          : ld->weight == CT_WEIGHT_AREA  ? (faces ? w[kl] : B->surf.vert_area ? B->surf.vert_area[kl] : 0.0)
                                                          : s->vol_x[k];
                w[kl] = wi;
                sum += wi;
            }
            int lin_zero = ld->dist == CT_LOAD_LINEAR;
            for (int i = 0; i < n; ++i) {
                int k = idx[i], kl = k - B->x_off;
                w[kl] = sum > 0 ? w[kl] / sum : 0.0;
                if (ld->dist == CT_LOAD_LINEAR) {
                    w[kl] *= (s->X[(size_t)k * dim + ld->axis] - ld->center) / len;
                    lin_zero &= w[kl] == 0.0;
                }
            }
            free(idx);
            /* a load that would vanish cannot be what the scene asks for */
            if (n > 0 && !(sum > 0))
                return ct_diag_add(diag, CT_EINPUT, "%s: /bodies/%d/loads/%d/weight: the %d selected vertices have no "
                                   "%s, so the load would be 0 (select %s, or another weight)", sc->path, b, j, n,
                                   ld->weight == CT_WEIGHT_AREA ? "surface area" : "volume",
                                   ld->weight == CT_WEIGHT_AREA ? "surface vertices" : "vertices of elements");
            if (n > 0 && lin_zero)
                return ct_diag_add(diag, CT_EINPUT, "%s: /bodies/%d/loads/%d/distribution: every selected vertex lies "
                                   "at center = %g along %c, where the linear share is 0, so the load would be 0",
                                   sc->path, b, j, ld->center, "xyz"[ld->axis]);
        }
    }
    return CT_OK;
}

/* Global contact surface: concatenation of the bodies' surfaces with x offsets. */
static ct_status build_surface(ct_sim *s)
{
    ct_surface *S = &s->surf;
    memset(S, 0, sizeof *S);
    S->dim = s->dim;
    S->nv = s->nx;
    for (int b = 0; b < s->nb; ++b) {
        S->nf += s->bodies[b].surf.nf;
        S->ned += s->bodies[b].surf.ned;
        S->nbv += s->bodies[b].surf.nbv;
    }
    S->faces = malloc(((size_t)S->nf * 3 + 1) * sizeof *S->faces);
    S->edges = malloc(((size_t)S->ned * 2 + 1) * sizeof *S->edges);
    S->bverts = malloc(((size_t)S->nbv + 1) * sizeof *S->bverts);
    S->vert_area = calloc((size_t)S->nv + 1, sizeof *S->vert_area);
    S->edge_area = malloc(((size_t)S->ned + 1) * sizeof *S->edge_area);
    S->face_area = malloc(((size_t)S->nf + 1) * sizeof *S->face_area);
    if (!S->faces || !S->edges || !S->bverts || !S->vert_area || !S->edge_area || !S->face_area) return CT_ENOMEM;
    int nf = 0, ne = 0, nb = 0;
    for (int b = 0; b < s->nb; ++b) {
        const ct_surface *T = &s->bodies[b].surf;
        int off = s->bodies[b].x_off;
        for (int i = 0; i < T->nf; ++i, ++nf) {
            for (int a = 0; a < 3; ++a) S->faces[nf * 3 + a] = T->faces[i * 3 + a] + off;
            S->face_area[nf] = T->face_area[i];
        }
        for (int i = 0; i < T->ned; ++i, ++ne) {
            for (int a = 0; a < 2; ++a) S->edges[ne * 2 + a] = T->edges[i * 2 + a] + off;
            S->edge_area[ne] = T->edge_area[i];
        }
        for (int i = 0; i < T->nbv; ++i, ++nb) S->bverts[nb] = T->bverts[i] + off;
        for (int v = 0; v < T->nv; ++v) S->vert_area[off + v] = T->vert_area[v];
    }
    return CT_OK;
}

/* Bodies must not intersect each other (or themselves) at t = 0, and must start strictly on the
 * positive side of every half-space obstacle: a barrier model cannot recover from either. */
static ct_status check_initial_state(ct_sim *s, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    const int dim = s->dim;
    ct_status st = CT_OK;
    if (s->surf.nf > 0 || (dim == 2 && s->surf.ned > 0)) {
        enum { CAP = 64 };
        ct_intersection pr[CAP];
        long n = ct_surface_intersections(&s->surf, s->x, s->threads, pr, CAP);
        if (n < 0) return ct_diag_add(diag, CT_ENOMEM, "out of memory");
        /* one message per intersecting pair of bodies among the first pairs found */
        int seen[8][2], nseen = 0;
        for (long k = 0; k < n && k < CAP; ++k) {
            int va = s->surf.edges[2 * pr[k].a];
            int vb = dim == 3 ? s->surf.faces[3 * pr[k].b] : s->surf.edges[2 * pr[k].b];
            int A = s->xv_body[va], B = s->xv_body[vb];
            if (A > B) {
                int t = A;
                A = B;
                B = t;
            }
            int dup = 0;
            for (int i = 0; i < nseen; ++i) dup |= seen[i][0] == A && seen[i][1] == B;
            if (dup || nseen == 8) continue;
            seen[nseen][0] = A, seen[nseen][1] = B, nseen++;
            if (A == B)
                st = ct_diag_add(diag, CT_EINPUT, "%s: /bodies: body \"%s\" intersects itself at t = 0", sc->path,
                                 s->part_names[A]);
            else
                st = ct_diag_add(diag, CT_EINPUT, "%s: /bodies: bodies \"%s\" and \"%s\" intersect at t = 0 (%ld "
                                 "intersecting %s pairs in all)", sc->path, s->part_names[A], s->part_names[B], n,
                                 dim == 3 ? "edge–triangle" : "segment–segment");
        }
    }
    for (int o = 0; o < sc->nobstacles; ++o) {
        const ct_obstacle *ob = &s->obstacles[o];
        for (int b = 0; b < s->nb; ++b) {
            int bad = 0;
            for (int k = 0; k < s->surf.nbv && !bad; ++k) {
                int v = s->surf.bverts[k];
                if (s->xv_body[v] != b || s->xv_kinematic[v]) continue;
                double d = 0.0;
                for (int i = 0; i < dim; ++i) d += ob->normal[i] * (s->x[(size_t)dim * v + i] - ob->point[i]);
                bad = !(d > 0.0);
            }
            if (bad)
                st = ct_diag_add(diag, CT_EINPUT, "%s: /obstacles/%d: body \"%s\" starts on or behind the "
                                 "half-space \"%s\"", sc->path, o, s->part_names[b], ob->name);
        }
    }
    return st;
}

/* "initial_state": positions (and velocities) of every vertex from a frame of an earlier run
 * (read by the scene loader into sc->init_x / init_v). Bodies with full dofs take them directly
 * (q = x); Dirichlet-held and kinematic vertices keep their prescribed positions, which the frame
 * must agree with. Called with q, vq at the rest state; any mismatch between the file and this
 * scene is bad input (the JSON path named). */
static ct_status load_initial_state(ct_sim *s, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    const int dim = s->dim;
    const char *file = sc->init_file;
    const long *dims = sc->init_dims;
    if (!sc->init_x || dims[1] != s->nx || dims[2] != dim)
        return ct_diag_add(diag, CT_EINPUT, "%s: /initial_state/file: /frames/x of \"%s\" is %ld x %ld x %ld; this "
                           "scene needs frames x %d vertices x %d", sc->path, file, dims[0], dims[1], dims[2], s->nx,
                           dim);
    const long f = sc->init_frame_index;
    const double *xf = sc->init_x, *vf = sc->init_v;
    const double tol = 1e-9 * s->bbox_diag;
    for (int b = 0; b < s->nb; ++b) {
        const ct_body *B = &s->bodies[b];
        if (B->embedded)
            return ct_diag_add(diag, CT_EINPUT, "%s: /initial_state: body \"%s\" has embedded dofs; restarting "
                               "from a frame needs full dofs (x = q)", sc->path, B->name);
        for (int i = 0; i < B->nx; ++i) {
            const int a = B->q_off + i, k = B->x_off + i;
            for (int c = 0; c < dim; ++c) {
                const size_t qa = (size_t)a * dim + c, xk = (size_t)k * dim + c;
                if (s->fixed[qa] || B->kinematic) {
                    if (fabs(xf[xk] - s->q[qa]) > tol)
                        return ct_diag_add(diag, CT_EINPUT, "%s: /initial_state: vertex %d of body \"%s\" is "
                                           "prescribed here but frame %ld of \"%s\" has it %.3g m away", sc->path,
                                           i, B->name, f, file, fabs(xf[xk] - s->q[qa]));
                    continue;
                }
                s->q[qa] = xf[xk];
                s->vq[qa] = vf ? vf[xk] : 0.0;
            }
        }
    }
    return CT_OK;
}

/* Models name the scene key of a problem ("/contact/kappa: ...") but not the file: messages from
 * index n0 on that start with a JSON pointer get "FILE: " in front, as the parser's do. */
static void name_scene_file(ct_diag *diag, size_t n0, const char *path)
{
    for (size_t i = n0; diag && path && i < diag->count; ++i) {
        char *t = diag->msgs[i].text;
        if (!t || t[0] != '/') continue;
        size_t n = strlen(path) + strlen(t) + 3;
        char *u = malloc(n);
        if (!u) return; /* the message stays as it was */
        snprintf(u, n, "%s: %s", path, t);
        free(t);
        diag->msgs[i].text = u;
    }
}

static void fill_ctx(ct_sim *s)
{
    ct_step_ctx *c = &s->ctx;
    memset(c, 0, sizeof *c);
    c->dim = s->dim;
    c->h = s->sc->dt;
    c->nx = s->nx;
    c->x_rest = s->X;
    c->x_prev = s->x_prev;
    c->v_prev = s->vx;
    c->mass = s->mass_x;
    c->vert_part = s->xv_body;
    c->vert_kinematic = s->xv_kinematic;
    c->nbodies = s->nb;
    c->nobstacles = s->sc->nobstacles;
    c->part_names = s->part_names;
    c->part_young = s->part_young;
    c->obstacles = s->obstacles;
    c->surf = &s->surf;
    c->dofs = &s->dofs;
    c->bbox_diag = s->bbox_diag;
    /* with the force test on, Newton cannot stop inside a stiff branch with unbalanced forces */
    c->newton_tol_v = s->sc->integrator == CT_INTEGRATOR_STATIC || s->sc->solver.force_tol > 0.0
                          ? 0.0
                          : s->sc->solver.newton_tol * s->bbox_diag;
    c->threads = s->threads;
}

static ct_status check_memory(const ct_sim *s, ct_diag *diag);

ct_status ct_sim_create(ct_sim **out, const ct_scene *sc, ct_diag *diag)
{
    *out = NULL;
    ct_sim *s = calloc(1, sizeof *s);
    if (!s) return ct_diag_add(diag, CT_ENOMEM, "out of memory");
    s->sc = sc;
    s->dim = sc->dim;
    s->nb = sc->nbodies;
    s->threads = sc->solver.threads;
    s->bodies = calloc((size_t)s->nb + 1, sizeof *s->bodies);
    if (!s->bodies) {
        free(s);
        return ct_diag_add(diag, CT_ENOMEM, "out of memory");
    }
    ct_status st = build_bodies(s, diag);
    if (st == CT_OK) st = check_memory(s, diag);
    if (st == CT_OK) st = build_state(s, diag);
    if (st == CT_OK) st = build_dirichlet(s, diag);
    if (st == CT_OK) st = build_loads(s, diag);
    if (st == CT_OK) st = build_surface(s);
    if (st == CT_OK) st = build_springs(s, diag);
    if (st == CT_OK) st = check_probe_selections(s, diag);
    if (st != CT_OK) {
        if (ct_diag_status(diag) == CT_OK) ct_diag_add(diag, st, "%s: cannot build the simulation", sc->path);
        ct_sim_destroy(s);
        return st;
    }
    int dim = s->dim;
    /* participants, obstacles, bounding box */
    s->part_names = calloc((size_t)(s->nb + sc->nobstacles) + 1, sizeof *s->part_names);
    s->obstacles = calloc((size_t)sc->nobstacles + 1, sizeof *s->obstacles);
    s->part_young = calloc((size_t)(s->nb + sc->nobstacles) + 1, sizeof *s->part_young);
    if (!s->part_names || !s->obstacles || !s->part_young) {
        ct_sim_destroy(s);
        return ct_diag_add(diag, CT_ENOMEM, "out of memory");
    }
    for (int b = 0; b < s->nb; ++b) {
        s->part_names[b] = s->bodies[b].name;
        s->part_young[b] = sc->bodies[b].has_material && !sc->bodies[b].kinematic ? sc->bodies[b].material.E : NAN;
    }
    for (int o = 0; o < sc->nobstacles; ++o) s->part_young[s->nb + o] = NAN;
    for (int o = 0; o < sc->nobstacles; ++o) {
        s->part_names[s->nb + o] = sc->obstacles[o].name;
        s->obstacles[o].name = sc->obstacles[o].name;
        memcpy(s->obstacles[o].point, sc->obstacles[o].point, sizeof s->obstacles[o].point);
        memcpy(s->obstacles[o].normal, sc->obstacles[o].normal, sizeof s->obstacles[o].normal);
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, d2 = 0.0;
    for (int k = 0; k < s->nx; ++k)
        for (int c = 0; c < dim; ++c) {
            lo[c] = fmin(lo[c], s->X[(size_t)k * dim + c]);
            hi[c] = fmax(hi[c], s->X[(size_t)k * dim + c]);
        }
    for (int c = 0; c < dim; ++c) d2 += (hi[c] - lo[c]) * (hi[c] - lo[c]);
    s->bbox_diag = sqrt(d2) > 0 ? sqrt(d2) : 1.0;
    /* initial state: rest positions, initial velocities */
    memcpy(s->q, s->Q, (size_t)s->ndof * sizeof *s->q);
    for (int a = 0; a < s->nq; ++a) {
        const ct_body_spec *bs = &sc->bodies[s->qv_body[a]];
        for (int c = 0; c < dim; ++c) s->vq[(size_t)a * dim + c] = bs->v0[c];
    }
    for (size_t i = 0; i < (size_t)s->ndof; ++i)
        if (s->fixed[i]) s->vq[i] = 0.0;
    if (sc->init_file && (st = load_initial_state(s, diag)) != CT_OK) {
        ct_sim_destroy(s);
        return st;
    }
    ct_dofs_map(&s->dofs, s->q, s->x);
    ct_dofs_map_lin(&s->dofs, s->vq, s->vx);
    memcpy(s->x_prev, s->x, (size_t)s->nx * dim * sizeof *s->x);
    s->nsteps = (int)ceil(sc->duration / sc->dt - 1e-9);
    /* contact models need an intersection-free start */
    if (sc->model && sc->model != &ct_model_none && (st = check_initial_state(s, diag)) != CT_OK) {
        ct_sim_destroy(s);
        return st;
    }
    /* linear solver, assembly */
    st = ct_linsolve_create(&s->ls, diag);
    if (st == CT_OK && !(s->as = calloc(1, sizeof *s->as))) st = CT_ENOMEM;
    if (st == CT_OK) st = ct_assembly_build(s->as, s, diag);
    if (st != CT_OK) {
        ct_sim_destroy(s);
        return st;
    }
    /* the model */
    const ct_model_type *mt = sc->model ? sc->model : &ct_model_none;
    if (mt->family == CT_FAMILY_CONSTRAINT && sc->integrator == CT_INTEGRATOR_STATIC) {
        ct_diag_add(diag, CT_EINPUT, "%s: /time/integrator: model %s (constraint family) takes dynamic steps "
                    "only", sc->path, mt->name);
        ct_sim_destroy(s);
        return CT_EINPUT;
    }
    fill_ctx(s);
    size_t n0 = diag ? diag->count : 0;
    st = ct_model_create(&s->model, mt, &sc->params, &s->ctx, diag);
    name_scene_file(diag, n0, sc->path);
    if (st != CT_OK) {
        ct_sim_destroy(s);
        return st;
    }
    s->last.ccd_alpha_min = 1.0;
    s->last.min_distance = INFINITY;
    *out = s;
    return CT_OK;
}

void ct_sim_destroy(ct_sim *s)
{
    if (!s) return;
    ct_model_destroy(s->model);
    for (int b = 0; b < s->nb; ++b) {
        ct_mesh_free(&s->bodies[b].mesh);
        ct_mesh_free(&s->bodies[b].coarse);
        ct_surface_free(&s->bodies[b].surf);
    }
    free(s->bodies);
    ct_dofs_free(&s->dofs);
    ct_elastic_free(&s->el);
    ct_triplets_free(&s->Mq);
    ct_csc_free(&s->Mq_csc);
    if (s->as) ct_assembly_free(s->as);
    free(s->as);
    ct_linsolve_destroy(s->ls);
    ct_surface_free(&s->surf);
    double *vecs[] = {s->X, s->Q, s->x, s->x_prev, s->vx, s->q, s->vq, s->q_prev, s->q_tilde, s->mass_x,
                      s->vol_x, s->f_ext, s->g, s->p, s->pq, s->px, s->gx, s->rhs, s->q_trial, s->x_trial, s->g_trial,
                      s->load_w, s->r_contact, s->q_soc, s->dq_soc, s->x_soc};
    for (size_t i = 0; i < sizeof vecs / sizeof *vecs; ++i) free(vecs[i]);
    free(s->load_off);
    free(s->spring_v);
    free(s->fixed);
    free(s->qv_dirichlet);
    free(s->qv_body);
    free(s->xv_body);
    free(s->xv_kinematic);
    free(s->obstacles);
    free(s->part_names);
    free(s->part_young);
    free(s);
}

double ct_machine_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0.0;
}

/* The elements of every body (fine and coarse meshes) against the machine's memory. */
static ct_status check_memory(const ct_sim *s, ct_diag *diag)
{
    double elems = 0.0;
    for (int b = 0; b < s->nb; ++b) elems += s->bodies[b].mesh.ne + s->bodies[b].coarse.ne;
    double need = elems * (s->dim == 3 ? CT_SIM_BYTES_PER_TET : CT_SIM_BYTES_PER_TRI), have = ct_machine_memory();
    if (have > 0.0 && need > have)
        return ct_diag_add(diag, CT_EINPUT, "%s: %.3g elements need about %.1f GB; this machine has %.1f GB (use "
                           "coarser meshes)", s->sc->path, elems, need / 1e9, have / 1e9);
    return CT_OK;
}

int ct_tune_allocator(void)
{
#ifdef __GLIBC__
    const char *e = getenv("CT_MALLOC_DEFAULT");
    if (e && *e) return 0;
    const int a = mallopt(M_MMAP_THRESHOLD, INT_MAX), b = mallopt(M_TRIM_THRESHOLD, INT_MAX);
    return a == 1 && b == 1;
#else
    return 0;
#endif
}

int ct_sim_nfree(const ct_sim *s) { return s->as ? s->as->nfree : 0; }

const int *ct_sim_free_dofs(const ct_sim *s) { return s->as ? s->as->free_dof : NULL; }

const ct_csc *ct_sim_newton_matrix(const ct_sim *s) { return s->as ? &s->as->A : NULL; }
