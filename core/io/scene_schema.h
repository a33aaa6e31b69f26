/* scene_schema.h — internal to the scene parser: the scene format as tables.
 *
 * Every JSON object of a scene is one ct_sk_object: its keys, and per key the kind of value,
 * whether it is required, its range, choices, default, unit and one line of documentation. The
 * parser (scene.c, scene_body.c) checks the keys of each object against these tables, so a key
 * the parser accepts is a key the reference documents; ct_scene_schema() turns the tables and the
 * model registry's parameter tables into a JSON Schema (`contactlab schema`), from which
 * docs/scenes.md is generated. Defaults and ranges are also passed to the parser's readers by the
 * code; tests/cli_schema.sh checks that every resolved scene agrees with the schema's defaults.
 */
#ifndef CT_SCENE_SCHEMA_H
#define CT_SCENE_SCHEMA_H

#include <jansson.h>

typedef enum {
    SK_NUMBER,  /* a JSON number in [lo, hi] */
    SK_INTEGER, /* an integer in [lo, hi] */
    SK_BOOL,
    SK_STRING,  /* optionally matching `pattern` */
    SK_ENUM,    /* a string among `choices` */
    SK_VEC,     /* dim numbers (2 or 3) in [lo, hi] */
    SK_IVEC,    /* dim integers >= lo */
    SK_NUMS,    /* exactly n numbers */
    SK_OBJECT,  /* the object `obj` */
    SK_ARRAY,   /* an array of at least n `obj` objects */
    SK_REF      /* a value form built by the schema code: `ref` names it (see scene_schema.c) */
} ct_sk_kind;

enum {
    SK_REQUIRED = 1u << 0,
    SK_3D = 1u << 1,      /* the key exists in 3D scenes only */
    SK_MIN = 1u << 2,     /* lo is a bound (inclusive) */
    SK_XMIN = 1u << 3,    /* lo is a bound (exclusive) */
    SK_MAX = 1u << 4,     /* hi is a bound (inclusive) */
    SK_XMAX = 1u << 5,    /* hi is a bound (exclusive) */
    SK_NONZERO = 1u << 6  /* a number other than 0, or a vector other than the zero vector */
};

struct ct_sk_object;

typedef struct ct_sk_field {
    const char *key;
    ct_sk_kind kind;
    unsigned flags;
    double lo, hi;
    int n;                           /* SK_NUMS: count; SK_ARRAY: minimum length */
    const char *const *choices;      /* SK_ENUM: every value (NULL-terminated) */
    const char *const *choices2;     /* SK_ENUM: the values allowed in 2D, when fewer (NULL: choices) */
    const char *const *choices3;     /* SK_ENUM: the values allowed in 3D, when fewer (NULL: choices) */
    const struct ct_sk_object *obj;  /* SK_OBJECT, SK_ARRAY */
    const char *ref;                 /* SK_REF */
    const char *pattern;             /* SK_STRING: a regular expression the value must match */
    const char *pattern2;            /* SK_STRING: the one of 2D scenes, when it differs */
    const char *def;                 /* the default as JSON text; NULL: none, or as `doc` says */
    const char *unit;                /* SI unit; NULL or "" for none */
    const char *doc;                 /* one line */
} ct_sk_field;

typedef struct ct_sk_object {
    const char *name; /* its name under $defs */
    const char *doc;
    const ct_sk_field *fields;        /* ends with {NULL} */
    const char *const *exactly_one;   /* NULL, or keys of which the object has exactly one */
    const char *const *at_least_one;  /* NULL, or keys of which the object has at least one */
} ct_sk_object;

/* The objects of the scene format (scene_schema.c). */
extern const ct_sk_object ct_sk_scene, ct_sk_time, ct_sk_solver, ct_sk_output, ct_sk_initial_state,
    ct_sk_body, ct_sk_dofs, ct_sk_material, ct_sk_mesh_file, ct_sk_mesh_grid, ct_sk_mesh_polyline,
    ct_sk_mesh_arc, ct_sk_transform, ct_sk_rotate, ct_sk_selector, ct_sk_probe_selector, ct_sk_box,
    ct_sk_fixed, ct_sk_segment, ct_sk_load, ct_sk_linear, ct_sk_obstacle, ct_sk_spring,
    ct_sk_spring_end, ct_sk_probe_select, ct_sk_probe_force, ct_sk_probe_energy, ct_sk_probe_spring;

/* Value lists shared by the parser and the schema. */
extern const char *const ct_sk_integrators[], *const ct_sk_mesh_generators[], *const ct_sk_dofs_modes[],
    *const ct_sk_probe_quantities[], *const ct_sk_energies[], *const ct_sk_load_weights[],
    *const ct_sk_velocity_sources[], *const ct_sk_obstacle_types[], *const ct_sk_material_models[],
    *const ct_sk_linear_types[];
/* Lists that depend on dim. */
extern const char *const ct_sk_components2[], *const ct_sk_components3[], *const ct_sk_sides2[],
    *const ct_sk_sides3[], *const ct_sk_axes2[], *const ct_sk_axes3[];

/* The field `key` of o, or NULL. */
const ct_sk_field *ct_sk_find(const ct_sk_object *o, const char *key);

/* The scene format as a JSON Schema (draft 2020-12): the tables above, with the "contact" block
 * of every registered model from its parameter table. $defs holds each object three times: as
 * named (dimension-free, with the documentation) and as name_2d / name_3d, where vectors have dim
 * entries and 3D-only keys and values are gone in 2D; the top level applies scene_2d or scene_3d
 * by "dim". New reference (NULL: out of memory). */
json_t *ct_scene_schema(void);

#endif
